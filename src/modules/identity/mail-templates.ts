// The account mails: plain text and HTML, every interpolated value escaped.
import { build } from '../../platform/mail-template.js';

export const mails = {
  invitation: (to: string, p: { inviterName: string; tenantName: string; url: string }) =>
    build(
      'invitation',
      to,
      `You are invited to ${p.tenantName}`,
      [`${p.inviterName} invited you to join ${p.tenantName} on Gatehouse.`, 'The invitation is valid for 7 days.'],
      {
        label: 'Accept the invitation',
        url: p.url,
      },
    ),
  membershipOffer: (to: string, p: { inviterName: string; tenantName: string; url: string }) =>
    build(
      'membership_offer',
      to,
      `You are invited to ${p.tenantName}`,
      [
        `${p.inviterName} invited your existing Gatehouse account to join ${p.tenantName}.`,
        'Nothing changes until you accept: sign in and accept or decline. The link is valid for 7 days.',
      ],
      {
        label: 'Review the invitation',
        url: p.url,
      },
    ),
  passwordReset: (to: string, p: { url: string }) =>
    build(
      'password_reset',
      to,
      'Reset your password',
      [
        'Someone asked to reset the password of your Gatehouse account.',
        'The link is valid for 1 hour. If it was not you, ignore this mail.',
      ],
      {
        label: 'Reset your password',
        url: p.url,
      },
    ),
  passwordChanged: (to: string, p: { url: string }) =>
    build(
      'password_changed',
      to,
      'Your password was changed',
      [
        'The password of your Gatehouse account was changed and every other session was signed out.',
        'If it was not you, reset your password now.',
      ],
      {
        label: 'Reset your password',
        url: p.url,
      },
    ),
  signInUnderAttack: (to: string, p: { url: string }) =>
    build(
      'sign_in_under_attack',
      to,
      'Someone is guessing your password',
      [
        'Many wrong passwords for your Gatehouse account arrived from many different addresses. Nobody got in.',
        'Your usual devices and addresses sign in as before. Until the guessing stops, a sign-in from a new address needs your second factor, or a new password set with the link below (valid 1 hour).',
      ],
      {
        label: 'Set a new password',
        url: p.url,
      },
    ),
  newDevice: (to: string, p: { when: string; ip: string; device: string; url: string }) =>
    build(
      'new_device',
      to,
      'New sign-in to your account',
      [
        `Your Gatehouse account was signed in to from a new device (${p.device}, address ${p.ip}) at ${p.when}.`,
        'If it was you, nothing needs doing. If it was not, the link below ends that session and starts a password reset (valid 72 hours, once).',
      ],
      {
        label: 'This was not me',
        url: p.url,
      },
    ),
  verifyEmail: (to: string, p: { url: string }) =>
    build(
      'verify_email',
      to,
      'Confirm your e-mail address',
      [
        'Open the link to confirm that this address belongs to your Gatehouse account.',
        'The link is valid for 24 hours and works once. If you did not ask for it, ignore this mail.',
      ],
      { label: 'Confirm the address', url: p.url },
    ),
  emailChangeProof: (to: string, p: { url: string }) =>
    build(
      'email_change_proof',
      to,
      'Confirm your new sign-in address',
      [
        'A Gatehouse account is to sign in with this address from now on. It changes only once you open the link.',
        'The link is valid for 24 hours and works once. If you do not expect this, ignore this mail: nothing changes.',
      ],
      { label: 'Confirm the new address', url: p.url },
    ),
  emailChangeNotice: (to: string, p: { newEmail: string; url: string }) =>
    build(
      'email_change_notice',
      to,
      'Your sign-in address is about to change',
      [
        `A change of your Gatehouse sign-in address to ${p.newEmail} was asked for. It takes effect only when that address confirms it; until then you keep signing in with this one.`,
        'If it was not you or your administrator, sign in and check your account, or reset your password.',
      ],
      { label: 'Sign in', url: p.url },
    ),
};

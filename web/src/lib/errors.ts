// The API's refusals in words: the console branches on the catalogued `code`, never on the text.
import { ApiError } from '../api/client';

const WORDS: Record<string, string> = {
  invalid_credentials: 'The e-mail or password is not right.',
  invalid_mfa_code: 'That code is not valid. Check the time on your device, or use another code.',
  invalid_temp_token: 'The sign-in took too long. Start again.',
  invalid_exchange_code: 'The single sign-on hand-off expired. Sign in again.',
  weak_password: 'This password is too easy to guess.',
  invalid_reset_token: 'This reset link is invalid or has expired. Ask for a new one.',
  invite_invalid: 'This invitation is invalid or has expired. Ask your administrator to resend it.',
  invalid_setup_token: 'This setup link is invalid, expired or already used. Restart the service to get a new one.',
  setup_completed: 'Setup is already complete. Sign in instead.',
  forbidden: 'Your role does not allow this.',
  tenant_context_required: 'Your account is not a member of a partner or organisation yet.',
  full_org_access_required: 'This needs access to all of the partner’s organisations.',
  mfa_required: 'This needs a session that passed two-step verification. Sign out and sign in with your second factor.',
  step_up_required: 'Confirm it is you first (re-enter your password or use your passkey).',
  permission_ceiling: 'You cannot grant permissions you do not hold yourself.',
  forbidden_self_action: 'You cannot do this to your own account.',
  last_admin: 'This is the partner’s last administrator: it cannot be removed, disabled or demoted.',
  system_role_immutable: 'System roles cannot be changed or deleted. Clone it to make your own.',
  role_has_users: 'Users still hold this role. Move them to another role first.',
  role_has_children: 'Other roles inherit from this one. Change their parent first.',
  circular_inheritance: 'That parent would make roles inherit from each other in a circle.',
  inheritance_too_deep: 'Roles may inherit at most 16 levels deep: choose a parent higher up.',
  unknown_permission: 'A permission is not in the catalogue (reload the page: the catalogue may have changed).',
  unsupported_provider_type: 'This kind of identity provider is not supported: use OpenID Connect or SAML 2.0.',
  user_exists_in_scope: 'This person is already a member here.',
  domain_not_verified: 'Not verified yet: the TXT record was not found. DNS changes can take a while to appear.',
  domain_taken: 'Another tenant has already proven this domain: it cannot be proven here.',
  domain_exists: 'This domain is already claimed by the partner or one of its organisations.',
  msp_access_denied: 'The organisation has suspended its partner’s access (or requires its approval).',
  invitation_not_found: 'This invitation was already answered, withdrawn, or has expired.',
  email_unverified:
    'Your e-mail address is not proven yet: accept through the link in the invitation mail, or verify your address in My account first.',
  account_outside_authority:
    'This account is not yours to administer here (it belongs to another tenant, or has not accepted the invitation).',
  email_taken: 'An account with this e-mail already exists. Sign in instead.',
  slug_taken: 'That short name is already in use.',
  name_taken: 'That name is already in use.',
  org_requires_mfa: 'Your organisation requires two-step verification, so it cannot be turned off.',
  sms_not_allowed: 'Your organisation does not allow SMS codes.',
  mfa_method_not_allowed: 'Your organisation does not allow this method.',
  last_factor_required: 'This is your last second factor and your policy requires one.',
  sso_enforced: 'Your organisation signs in with single sign-on.',
  csrf_failed: 'Your session could not be confirmed. Reload the page and sign in again.',
  not_found: 'It no longer exists, or it is outside what you can see.',
  unauthenticated: 'Your session has ended. Sign in again.',
  mfa_enrollment_required: 'Set up two-step verification to continue.',
  session_binding_required: 'Reload the page and try again (this needs your browser session).',
  default_role_required: 'Automatic provisioning needs a default role.',
  phone_not_verified: 'Verify a phone number first.',
  invalid_phone_number: 'Enter the number in international form, like +1 202 555 0123.',
  invalid_challenge: 'The passkey request expired. Try again.',
  passkey_verification_failed: 'The passkey could not be verified.',
  invalid_csv: 'The file could not be read as CSV.',
  site_required: 'Choose a site.',
  resource_in_use: 'It is still in use.',
  payload_too_large: 'The file is too large.',
  validation_failed: 'Some fields are not valid.',
  internal_error: 'Something went wrong on the server.',
  console_not_built: 'The console is not built.',
  enrollment_key_invalid: 'The enrollment key is not valid.',
  enrollment_key_expired: 'The enrollment key has expired. Create a new one.',
  enrollment_key_exhausted: 'The enrollment key has enrolled all the devices it may. Create a new one.',
  last_sign_in_method: 'That would leave the account without a way to sign in.',
  password_confirmation_required:
    'This session began at your identity provider: confirm your password to act elsewhere.',
  mfa_already_enabled: 'Two-step verification is already on.',
  key_limit_reached: 'This account already has two active keys: revoke one first.',
  ip_not_allowed: 'This key may not be used from this address.',
  auto_extend_not_allowed:
    'A relationship with a role that governs access itself (*:*, users:write or roles:write) cannot extend itself.',
  relationship_frozen:
    'Sent or approved relationships only narrow. To give more, draft a new relationship for the organisation to approve.',
  relationship_state_invalid: 'The relationship is no longer in a state that allows this. Reload the page.',
  relationship_approver_required: 'Only an admin of the organisation decides or ends its relationships.',
  uri_too_long: 'The request is too long. Decide on fewer rows at once.',
};

export function retryText(seconds: number): string {
  if (seconds < 60) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const m = Math.ceil(seconds / 60);
  return `${m} minute${m === 1 ? '' : 's'}`;
}

/** One sentence (or two) for an error, for a form's alert. */
export function explain(err: unknown): string {
  if (err instanceof ApiError) {
    const b = err.body;
    if (err.status === 429) return `Too many attempts. Try again in ${retryText(b.retryAfter ?? 60)}.`;
    let text = (b.code && WORDS[b.code]) ?? b.message ?? `The request failed (${err.status}).`;
    if (b.code === 'weak_password' && b.details?.feedback) {
      const f = b.details.feedback;
      text = [text, f.warning, ...(f.suggestions ?? [])].filter(Boolean).join(' ');
    }
    if (b.code === 'validation_failed' && b.details?.fieldErrors) {
      const fields = Object.entries(b.details.fieldErrors).map(
        ([k, v]) => `${k}: ${v.map((m) => m.replace(/[.\s]+$/, '')).join(', ')}`,
      );
      if (fields.length) text = `${text} ${fields.join('; ')}.`;
    }
    if (b.code === 'invalid_csv' && b.message) text = `${text} ${b.message}`;
    if (b.code === 'permission_ceiling' && Array.isArray(b.missing) && b.missing.length)
      text = `${text} Not yours to give: ${(b.missing as string[]).join(', ')}.`;
    if (b.code === 'role_has_users' && typeof b.userCount === 'number')
      text = `${b.userCount} user(s) still hold this role. Move them to another role first.`;
    if (b.code === 'internal_error' && typeof b.errorId === 'string') text = `${text} Reference: ${b.errorId}.`;
    return text;
  }
  if (err instanceof TypeError) return 'The server could not be reached. Check your connection.';
  return err instanceof Error ? err.message : String(err);
}

/** `/login?error=` values of the SSO callback, in words. */
export function loginErrorText(value: string): string {
  const known: Record<string, string> = {
    sso_failed: 'Single sign-on failed. Try again, or ask your administrator.',
    invalid_state: 'The single sign-on attempt was interrupted or already used. Start again.',
    session_expired: 'The single sign-on attempt took too long. Start again.',
    provider_not_found: 'Single sign-on is not set up, or is turned off, for this organisation.',
    provider_unavailable: 'The identity provider could not be reached. Try again later.',
    domain_not_allowed: 'Your e-mail domain is not allowed for this organisation’s single sign-on.',
    email_invalid: 'The identity provider did not send a usable e-mail address.',
    email_unverified: 'The identity provider has not verified your e-mail address.',
    id_token_invalid: 'The identity provider’s answer could not be verified.',
    saml_response_invalid: 'The identity provider’s answer could not be verified.',
    assertion_replayed: 'This sign-in answer was already used. Start again.',
    user_not_found:
      'Your identity provider knows you, but you have no account here. Ask your administrator for an invitation.',
    no_org_access: 'Your account has no access to this organisation.',
    invitation_pending:
      'Your account is invited here. Sign in as usual and accept the invitation under My account → Pending invitations.',
    sso_denied: 'The identity provider did not let you in.',
    access_denied: 'The identity provider did not let you in.',
    sso_state_invalid: 'The single sign-on attempt expired. Start again.',
    sso_expired: 'The single sign-on attempt expired. Start again.',
    sso_not_configured: 'Single sign-on is not set up for your organisation.',
    sso_inactive: 'Single sign-on is turned off for your organisation.',
    user_not_provisioned:
      'Your identity provider knows you, but you have no account here. Ask your administrator for an invitation.',
    account_disabled: 'Your account is disabled. Ask your administrator.',
    email_domain_not_allowed: 'Your e-mail domain is not allowed for this organisation’s single sign-on.',
    account_link_required: 'An account with your e-mail already exists. Sign in with your password first to link it.',
    msp_access_denied:
      'This organisation has suspended its partner’s access, and its single sign-on was set up by the partner: ask the organisation’s administrator.',
    domain_not_verified:
      'Your e-mail domain is not proven for this organisation, so no account is created for you. Ask your administrator.',
  };
  return known[value] ?? `Single sign-on did not complete (${value.replace(/[^a-z0-9_ -]/gi, '').slice(0, 60)}).`;
}

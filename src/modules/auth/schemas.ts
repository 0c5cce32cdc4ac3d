import { z } from 'zod';
import { newPasswordField, presentedPasswordField } from '../identity/index.js';

export const emailField = z.email({ message: 'must be an email address' }).max(255).trim();
const nameField = z.string().trim().min(1).max(255);
export const opaqueToken = z.string().min(16).max(512);

export const loginBody = z
  .strictObject({ email: emailField, password: presentedPasswordField })
  .meta({ examples: [{ email: 'ada@example.org', password: 'correct horse battery staple' }] });
export const mfaChallenge = z
  .object({
    mfaRequired: z.literal(true),
    mfaMethod: z.enum(['totp', 'sms', 'passkey']),
    tempToken: z.string(),
    passkeyAvailable: z.literal(true).optional(),
    phoneLast4: z.string().optional(),
  })
  .meta({
    id: 'MfaChallenge',
    examples: [{ mfaRequired: true, mfaMethod: 'totp', tempToken: 'd2VsY29tZS10by10aGUtbWZhLXN0ZXA' }],
  });

export const registerBody = z.strictObject({ email: emailField, password: newPasswordField, name: nameField });
export const registerPartnerBody = z.strictObject({
  companyName: nameField,
  email: emailField,
  password: newPasswordField,
  name: nameField,
});
export const forgotPasswordBody = z.strictObject({ email: emailField });
export const resetPasswordBody = z.strictObject({ token: opaqueToken, newPassword: newPasswordField });
export const changePasswordBody = z.strictObject({
  currentPassword: presentedPasswordField,
  newPassword: newPasswordField,
});
export const acceptInviteBody = z.strictObject({
  token: opaqueToken,
  password: newPasswordField,
  name: nameField.optional(),
});
export const invitePreviewBody = z.strictObject({ token: opaqueToken });
export const invitePreview = z.object({
  email: z.string(),
  name: z.string(),
  partnerName: z.string().optional(),
  orgName: z.string().optional(),
});
export const switchContextBody = z
  .strictObject({
    partnerId: z.uuid().optional(),
    orgId: z.uuid().optional(),
    password: z
      .string()
      .min(1)
      .max(1024)
      .optional()
      .describe('Needed to leave the tenant of a session begun at an identity provider'),
    code: z.string().trim().min(6).max(64).optional().describe('With password, when the account has a second factor'),
  })
  .refine((b) => (b.partnerId === undefined) !== (b.orgId === undefined), {
    message: 'Give exactly one of partnerId or orgId',
  })
  .meta({ minProperties: 1, maxProperties: 3 });

export const success = z.object({ success: z.literal(true) });

export const verifyEmailBody = z.strictObject({ token: opaqueToken });
export const verifyEmailResult = z
  .object({
    email: z.string().describe('The login address after the link was spent.'),
    emailVerified: z.literal(true),
    changed: z.boolean().describe('true: the link moved the login to a new address.'),
  })
  .meta({ examples: [{ email: 'ada@example.org', emailVerified: true, changed: false }] });
export const verificationSent = z
  .object({ sent: z.boolean().describe('false: the address was already verified, nothing was sent.') })
  .meta({ examples: [{ sent: true }] });
export const emailStatusJson = z
  .object({
    email: z.string(),
    emailVerified: z.boolean(),
    pendingEmail: z.string().nullable().describe('A new login address waiting for its link to be opened.'),
    pendingExpiresAt: z.string().nullable(),
  })
  .meta({
    id: 'EmailStatus',
    examples: [
      {
        email: 'ada@example.org',
        emailVerified: true,
        pendingEmail: 'ada@new.example.org',
        pendingExpiresAt: '2026-11-21T08:15:00.000Z',
      },
    ],
  });

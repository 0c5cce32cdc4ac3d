import { z } from 'zod';
import { presentedPasswordField } from '../identity/index.js';

export const tempTokenField = z.string().min(16).max(512);
/** 6 digits, or a recovery code (16 characters, dashes and spaces allowed). */
export const codeField = z
  .string()
  .trim()
  .regex(/^(\d{6}|[A-Za-z0-9][A-Za-z0-9 -]{14,22}[A-Za-z0-9])$/, 'must be a 6-digit code or a recovery code');
export const sixDigits = z
  .string()
  .trim()
  .regex(/^\d{6}$/, 'must be 6 digits');

export const setupResponse = z.object({
  secret: z.string(),
  otpAuthUrl: z.string(),
  qrCodeDataUrl: z.string(),
  recoveryCodes: z.array(z.string()),
});
export const verifyBody = z.strictObject({ code: codeField, tempToken: tempTokenField.optional() });
export const enableBody = z.strictObject({ code: sixDigits });
export const disableBody = z.strictObject({ currentPassword: presentedPasswordField, code: codeField });
export const recoveryCodesResponse = z.object({ recoveryCodes: z.array(z.string()) });
export const phoneVerifyBody = z.strictObject({
  // The document asks for plain E.164; the server also accepts it with spaces, dashes and parentheses.
  phoneNumber: z
    .string()
    .trim()
    .min(4)
    .max(32)
    .meta({
      pattern: '^\\+[1-9][0-9]{6,14}$',
      description: 'E.164 (+ and the digits), of a real numbering plan.',
      examples: ['+12025550123'],
    }),
});
export const phoneConfirmBody = z.strictObject({ code: sixDigits });
export const smsSendBody = z.strictObject({ tempToken: tempTokenField });

const b64url = z
  .string()
  .max(65_536)
  .regex(/^[A-Za-z0-9_-]*={0,2}$/, 'must be base64url');
export const registrationCredential = z.looseObject({
  id: b64url,
  rawId: b64url,
  type: z.literal('public-key'),
  response: z.looseObject({
    clientDataJSON: b64url,
    attestationObject: b64url,
    transports: z.array(z.string().max(32)).max(10).optional(),
  }),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  authenticatorAttachment: z.string().max(32).optional(),
});
export const authenticationCredential = z.looseObject({
  id: b64url,
  rawId: b64url,
  type: z.literal('public-key'),
  response: z.looseObject({
    clientDataJSON: b64url,
    authenticatorData: b64url,
    signature: b64url,
    userHandle: b64url.optional(),
  }),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  authenticatorAttachment: z.string().max(32).optional(),
});

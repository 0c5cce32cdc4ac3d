import { z } from 'zod';
import { presentedPasswordField } from '../identity/index.js';
import { authenticationCredential, registrationCredential, tempTokenField } from '../mfa/index.js';

export const tempTokenBody = z.strictObject({ tempToken: tempTokenField });
export const registerOptionsBody = z.strictObject({
  currentPassword: presentedPasswordField,
  name: z.string().trim().min(1).max(100),
});
export const registerVerifyBody = z.strictObject({ credential: registrationCredential });
export const passkeyVerifyBody = z.strictObject({ tempToken: tempTokenField, credential: authenticationCredential });
export const renameBody = z.strictObject({ name: z.string().trim().min(1).max(100) });
export const deletePasskeyBody = z.strictObject({ currentPassword: presentedPasswordField });
export const passkeyJsonSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
  backedUp: z.boolean(),
  transports: z.array(z.string()),
});

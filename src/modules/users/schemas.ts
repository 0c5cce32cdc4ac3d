import { z } from 'zod';

export const userProfile = z
  .object({
    id: z.uuid(),
    email: z.string(),
    name: z.string(),
    avatarUrl: z.string().nullable(),
    status: z.enum(['active', 'invited', 'disabled']),
    mfaEnabled: z.boolean(),
    mfaMethod: z.enum(['totp', 'sms', 'passkey']).nullable(),
    phoneVerified: z.boolean(),
    phoneLast4: z.string().nullable(),
    lastLoginAt: z.string().nullable(),
    createdAt: z.string(),
    scope: z.enum(['partner', 'organization']).nullable(),
    partnerId: z.uuid().nullable(),
    orgId: z.uuid().nullable(),
    roleId: z.uuid().nullable(),
    permissions: z.array(z.string()),
  })
  .meta({ id: 'UserProfile' });
export type UserProfile = z.infer<typeof userProfile>;

const httpsUrl = z
  .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
  .max(2048);

export const updateOwnProfileBody = z
  .strictObject({
    name: z.string().trim().min(1).max(255).optional(),
    avatarUrl: httpsUrl.nullable().optional(),
  })
  .refine((b) => b.name !== undefined || b.avatarUrl !== undefined, { message: 'Give name or avatarUrl' });

export const userRow = z
  .object({
    id: z.uuid(),
    email: z.string(),
    name: z.string(),
    status: z.enum(['active', 'invited', 'disabled']),
    mfaEnabled: z.boolean(),
    lastLoginAt: z.string().nullable(),
    roleId: z.uuid(),
    roleName: z.string(),
    orgAccess: z.enum(['all', 'selected', 'none']).optional(),
    orgIds: z.array(z.uuid()).optional(),
    siteIds: z.array(z.uuid()).nullable().optional(),
    deviceGroupIds: z.array(z.uuid()).nullable().optional(),
  })
  .meta({ id: 'UserRow' });
export type UserRowJson = z.infer<typeof userRow>;

export const userListQuery = z.strictObject({
  orgId: z.uuid().optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional(),
  search: z.string().max(255).optional(),
});

const uuidList = z.array(z.uuid()).max(1000);
export const inviteBody = z.strictObject({
  email: z.email().max(255).trim(),
  name: z.string().trim().min(1).max(255),
  roleId: z.uuid(),
  orgId: z.uuid().optional(),
  siteIds: uuidList.optional(),
  deviceGroupIds: uuidList.optional(),
  orgAccess: z.enum(['all', 'selected', 'none']).optional(),
  orgIds: uuidList.optional(),
});
export const inviteResponse = z.object({
  id: z.uuid(),
  email: z.string(),
  name: z.string(),
  status: z.enum(['active', 'invited', 'disabled']),
  roleId: z.uuid(),
  inviteEmailSent: z.boolean(),
});
export const resendBody = z.strictObject({ userId: z.uuid(), orgId: z.uuid().optional() });
export const updateUserBody = z
  .strictObject({ name: z.string().trim().min(1).max(255).optional(), status: z.enum(['active', 'disabled']).optional() })
  .refine((b) => b.name !== undefined || b.status !== undefined, { message: 'Give name or status' });
export const assignRoleBody = z.strictObject({ roleId: z.uuid() });

import { z } from 'zod';

const httpsUrl = z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).max(2048);

export const updateOwnProfileBody = z
  .strictObject({
    name: z.string().trim().min(1).max(255).optional(),
    avatarUrl: httpsUrl.nullable().optional(),
    email: z
      .email()
      .max(255)
      .trim()
      .optional()
      .describe('A new login address: it takes effect when the link mailed to it is opened (POST /auth/verify-email).'),
  })
  .refine((b) => b.name !== undefined || b.avatarUrl !== undefined || b.email !== undefined, {
    message: 'Give name, avatarUrl or email',
  })
  .meta({ minProperties: 1 });

export const activeUserRow = z
  .object({
    id: z.uuid(),
    email: z.string(),
    emailVerified: z.boolean(),
    name: z.string(),
    status: z.enum(['active', 'invited', 'disabled']),
    mfaEnabled: z.boolean(),
    lastLoginAt: z.string().nullable(),
    roleId: z.uuid(),
    roleName: z.string(),
    orgAccess: z
      .enum(['all', 'selected', 'none', 'eligible'])
      .optional()
      .describe(
        'Partner members: all, selected (orgIds), none, or eligible (no standing access; may request just-in-time access to orgIds)',
      ),
    orgIds: z.array(z.uuid()).optional(),
    siteIds: z.array(z.uuid()).nullable().optional(),
    deviceGroupIds: z.array(z.uuid()).nullable().optional(),
  })
  .meta({
    id: 'MemberRow',
    examples: [
      {
        id: '3f2b8c1e-6a4d-4e8f-9b2a-1c5d7e9f0a12',
        email: 'ada@example.org',
        emailVerified: true,
        name: 'Ada Lovelace',
        status: 'active',
        mfaEnabled: true,
        lastLoginAt: '2026-11-20T08:15:00.000Z',
        roleId: '5b6c7d8e-9f01-4a2b-8c3d-4e5f6a7b8c9d',
        roleName: 'Partner Admin',
        orgAccess: 'all',
        orgIds: [],
      },
    ],
  });
export type ActiveUserJson = z.infer<typeof activeUserRow>;

/** A member that has not accepted the offer: the scope sees nothing of the account's profile. */
export const pendingUserRow = z
  .object({
    id: z.uuid(),
    email: z.string(),
    status: z.literal('pending'),
    invitedAt: z.string().nullable(),
  })
  .meta({ id: 'PendingMemberRow' });

export const userRow = z.union([activeUserRow, pendingUserRow]).meta({ id: 'UserRow' });
export type UserRowJson = z.infer<typeof userRow>;

export const userListQuery = z.strictObject({
  orgId: z.uuid().optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional(),
  search: z.string().max(255).optional(),
});

const uuidList = z.array(z.uuid()).max(1000);
export const inviteBody = z
  .strictObject({
    email: z.email().max(255).trim(),
    name: z.string().trim().min(1).max(255),
    roleId: z.uuid(),
    orgId: z.uuid().optional(),
    siteIds: uuidList.optional(),
    deviceGroupIds: uuidList.optional(),
    orgAccess: z
      .enum(['all', 'selected', 'none', 'eligible'])
      .optional()
      .describe(
        'Partner members: all, selected (orgIds), none, or eligible (no standing access; may request just-in-time access to orgIds)',
      ),
    orgIds: uuidList.optional(),
  })
  .meta({
    examples: [{ email: 'grace@example.org', name: 'Grace Hopper', roleId: '5b6c7d8e-9f01-4a2b-8c3d-4e5f6a7b8c9d' }],
  });
export const inviteResponse = z.object({
  id: z.uuid(),
  email: z.string(),
  name: z.string(),
  status: z
    .enum(['active', 'invited', 'disabled', 'pending'])
    .describe('pending: the address belongs to an existing account, which must accept the invitation first'),
  roleId: z.uuid(),
  inviteEmailSent: z.boolean(),
});
export const resendBody = z.strictObject({ userId: z.uuid(), orgId: z.uuid().optional() });
export const updateUserBody = z
  .strictObject({
    name: z.string().trim().min(1).max(255).optional(),
    status: z.enum(['active', 'disabled']).optional(),
    email: z
      .email()
      .max(255)
      .trim()
      .optional()
      .describe('A new login address: it takes effect when the link mailed to it is opened (POST /auth/verify-email).'),
  })
  .refine((b) => b.name !== undefined || b.status !== undefined || b.email !== undefined, {
    message: 'Give name, status or email',
  })
  .meta({ minProperties: 1 });
export const assignRoleBody = z.strictObject({ roleId: z.uuid() });

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

const orgAccessField = z
  .enum(['all', 'selected', 'none', 'eligible', 'all_except'])
  .optional()
  .describe(
    'Partner members: all, selected (orgIds), none, eligible (no standing access; may request just-in-time access to orgIds), or all_except (every organisation of the partner, those created later included, except excludedOrgIds)',
  );

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
    orgAccess: orgAccessField,
    orgIds: z.array(z.uuid()).optional(),
    excludedOrgIds: z
      .array(z.uuid())
      .optional()
      .describe('orgAccess all_except: the organisations left out (every other one, those created later included)'),
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
    orgAccess: orgAccessField,
    orgIds: uuidList.optional(),
    excludedOrgIds: uuidList
      .optional()
      .describe('With orgAccess all_except: organisations of the partner left out (400 validation_failed otherwise)'),
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
    orgAccess: orgAccessField.describe(
      "A partner member's standing organisation access (not one's own; audited user.org_access): all, selected (orgIds), none, eligible (orgIds), or all_except (excludedOrgIds, organisations created later included). Replaces the member's orgIds or excludedOrgIds.",
    ),
    orgIds: uuidList.optional(),
    excludedOrgIds: uuidList.optional().describe('With orgAccess all_except: organisations of the partner left out'),
  })
  .refine((b) => b.name !== undefined || b.status !== undefined || b.email !== undefined || b.orgAccess !== undefined, {
    message: 'Give name, status, email or orgAccess',
  })
  .refine((b) => b.orgAccess !== undefined || (b.orgIds === undefined && b.excludedOrgIds === undefined), {
    message: 'orgIds and excludedOrgIds go with orgAccess',
    path: ['orgAccess'],
  })
  .meta({
    minProperties: 1,
    examples: [
      { name: 'Grace Hopper' },
      { orgAccess: 'all_except', excludedOrgIds: ['7c1e2d3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f'] },
    ],
  });
export const assignRoleBody = z.strictObject({ roleId: z.uuid() });

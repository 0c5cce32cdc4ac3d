import { z } from 'zod';

export const permissionInput = z.strictObject({
  resource: z.string().min(1).max(100),
  action: z.string().min(1).max(50),
});
export const permissionOut = z.object({ resource: z.string(), action: z.string() });

export const roleJson = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string().nullable(),
    scope: z.enum(['system', 'partner', 'organization']),
    isSystem: z.boolean(),
    parentRoleId: z.uuid().nullable(),
    parentRoleName: z.string().nullable(),
    forceMfa: z.boolean(),
    userCount: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({
    id: 'Role',
    examples: [
      {
        id: '5b6c7d8e-9f01-4a2b-8c3d-4e5f6a7b8c9d',
        name: 'Helpdesk',
        description: 'First-line support',
        scope: 'partner',
        isSystem: false,
        parentRoleId: null,
        parentRoleName: null,
        forceMfa: true,
        userCount: 3,
        createdAt: '2026-02-01T09:00:00.000Z',
        updatedAt: '2026-02-01T09:00:00.000Z',
      },
    ],
  });
export const roleDetail = roleJson.extend({ permissions: z.array(permissionOut) }).meta({ id: 'RoleDetail' });

export const orgQuery = z.strictObject({ orgId: z.uuid().optional() });
export const roleListQuery = z.strictObject({
  orgId: z.uuid().optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional(),
  search: z.string().max(100).optional(),
});

const name = z.string().trim().min(1).max(100);
export const createRoleBody = z
  .strictObject({
    name,
    description: z.string().max(2000).nullable().optional(),
    permissions: z.array(permissionInput).max(500).default([]),
    parentRoleId: z.uuid().nullable().optional(),
    forceMfa: z.boolean().optional(),
    /** Holders satisfy MFA with passkeys only (write-only: the role JSON's fields are fixed). */
    phishingResistantOnly: z.boolean().optional(),
    orgId: z.uuid().optional(),
  })
  .meta({
    examples: [
      {
        name: 'Helpdesk',
        description: 'First-line support',
        permissions: [
          { resource: 'devices', action: 'read' },
          { resource: 'scripts', action: 'execute' },
        ],
        forceMfa: true,
      },
    ],
  });
export const updateRoleBody = z
  .strictObject({
    name: name.optional(),
    description: z.string().max(2000).nullable().optional(),
    permissions: z.array(permissionInput).max(500).optional(),
    parentRoleId: z.uuid().nullable().optional(),
    forceMfa: z.boolean().optional(),
    phishingResistantOnly: z.boolean().optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'Nothing to change' })
  .meta({ minProperties: 1 });
export const cloneRoleBody = z.strictObject({ name, orgId: z.uuid().optional() });

export const effectivePermissions = z.object({
  roleId: z.uuid(),
  roleName: z.string(),
  inheritanceChain: z.array(z.object({ id: z.uuid(), name: z.string() })),
  permissions: z.array(
    z.object({
      resource: z.string(),
      action: z.string(),
      inherited: z.boolean(),
      sourceRoleId: z.uuid(),
      sourceRoleName: z.string(),
    }),
  ),
});

export const availablePermissions = z.object({
  resources: z.array(z.string()),
  actions: z.array(z.string()),
  aliases: z.record(z.string(), z.string()),
  permissions: z.array(
    z.object({
      resource: z.string(),
      action: z.string(),
      description: z.string(),
      destructive: z.boolean().describe('A freeze refuses it; the blast-radius budgets count its uses'),
    }),
  ),
});

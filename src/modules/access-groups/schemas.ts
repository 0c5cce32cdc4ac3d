// Access groups on the wire: one schema per body, query and answer.
import { z } from 'zod';

const GROUP_ID = '2d4f6a8c-1b3e-4c5d-9e7f-0a1b2c3d4e5f';
const REL_ID = '8e9f0a1b-2c3d-4e5f-8a7b-6c5d4e3f2a1b';
const ORG_ID = '7c1e2d3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f';
const USER_ID = '3f2b8c1e-6a4d-4e8f-9b2a-1c5d7e9f0a12';
const SCIM_ID = '5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d';

const name = z.string().trim().min(1).max(200).describe('Unique in the partner (case-insensitive)');

export const createGroupBody = z
  .strictObject({
    name,
    scimGroupId: z
      .uuid()
      .nullable()
      .optional()
      .describe(
        "A partner-level SCIM group of the partner's identity provider: its active members are this group's members too",
      ),
  })
  .meta({ examples: [{ name: 'Tier 1 – Contoso' }, { name: 'Helpdesk', scimGroupId: SCIM_ID }] });
export type CreateGroup = z.infer<typeof createGroupBody>;

export const patchGroupBody = z
  .strictObject({ name: name.optional(), scimGroupId: z.uuid().nullable().optional() })
  .refine((b) => b.name !== undefined || b.scimGroupId !== undefined, { message: 'Give name or scimGroupId' })
  .meta({ minProperties: 1, examples: [{ name: 'Tier 2 – Contoso' }, { scimGroupId: null }] });
export type PatchGroup = z.infer<typeof patchGroupBody>;

export const groupListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional(),
  search: z.string().max(255).optional().describe('Prefix of the name'),
  relationshipId: z.uuid().optional().describe('Only the groups attached to this relationship'),
});
export const groupCursor = z.object({ n: z.string(), id: z.uuid() });

export const groupJson = z
  .object({
    id: z.uuid(),
    partnerId: z.uuid(),
    name: z.string(),
    scimGroupId: z.uuid().nullable(),
    scimGroupName: z.string().nullable(),
    memberCount: z.number().int().describe('Members added by hand (SCIM members: GET /access-groups/:id/members)'),
    relationships: z
      .array(
        z.object({
          id: z.uuid(),
          name: z.string(),
          orgId: z.uuid(),
          orgName: z.string(),
          status: z.string().describe('As stored (draft, approval_pending, active, declined, terminated, expired)'),
        }),
      )
      .describe('The relationships the group is attached to'),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({
    id: 'AccessGroup',
    examples: [
      {
        id: GROUP_ID,
        partnerId: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
        name: 'Tier 1 – Contoso',
        scimGroupId: null,
        scimGroupName: null,
        memberCount: 4,
        relationships: [{ id: REL_ID, name: 'Tier 1', orgId: ORG_ID, orgName: 'Contoso Dental', status: 'active' }],
        createdAt: '2026-11-20T08:15:00.000Z',
        updatedAt: '2026-11-20T08:15:00.000Z',
      },
    ],
  });

export const scimGroupListJson = z
  .object({
    data: z
      .array(z.object({ id: z.uuid(), name: z.string().describe('displayName at the identity provider') }))
      .describe('By name; at most 500'),
  })
  .meta({ examples: [{ data: [{ id: SCIM_ID, name: 'Helpdesk' }] }] });

export const memberBody = z.strictObject({ userId: z.uuid() }).meta({ examples: [{ userId: USER_ID }] });
export const memberParams = z.strictObject({ id: z.uuid(), userId: z.uuid() });
export const memberListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional(),
});
export const memberCursor = z.object({ id: z.uuid() });
export const memberJson = z
  .object({
    groupId: z.uuid(),
    userId: z.uuid(),
    name: z.string(),
    email: z.string(),
    source: z.enum(['direct', 'scim']).describe('direct: added by hand; scim: a member of the mapped SCIM group'),
    addedAt: z.string().nullable(),
  })
  .meta({
    id: 'AccessGroupMember',
    examples: [
      {
        groupId: GROUP_ID,
        userId: USER_ID,
        name: 'Ada Lovelace',
        email: 'ada@example.org',
        source: 'direct',
        addedAt: '2026-11-20T08:15:00.000Z',
      },
    ],
  });

export const attachBody = z.strictObject({ relationshipId: z.uuid() }).meta({ examples: [{ relationshipId: REL_ID }] });
export const attachParams = z.strictObject({ id: z.uuid(), relationshipId: z.uuid() });
export const attachmentJson = z
  .object({
    groupId: z.uuid(),
    groupName: z.string(),
    relationshipId: z.uuid(),
    relationshipName: z.string(),
    orgId: z.uuid(),
  })
  .meta({
    id: 'AccessGroupAttachment',
    examples: [
      {
        groupId: GROUP_ID,
        groupName: 'Tier 1 – Contoso',
        relationshipId: REL_ID,
        relationshipName: 'Tier 1',
        orgId: ORG_ID,
      },
    ],
  });

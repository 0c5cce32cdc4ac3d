import { z } from 'zod';
import { CATALOG_ENTRIES } from '../../access/catalog.js';
import { MSP_ACCESS } from '../../access/settings.js';
import { ACCESS_STEPS, ORG_ACCESS_VIAS } from '../../access/decision.js';

export const RESOURCE_TYPES = ['partner', 'organization', 'site', 'device_group', 'device'] as const;
export type ResourceType = (typeof RESOURCE_TYPES)[number];

const PERMISSION_KEYS = CATALOG_ENTRIES.map((e) => `${e.resource}:${e.action}`);
const permission = z
  .string()
  .max(160)
  .refine((v) => PERMISSION_KEYS.includes(v), 'must be a permission of the catalogue (resource:action)')
  .meta({
    enum: PERMISSION_KEYS,
    description: 'A permission of the catalogue, `resource:action` (canonical action).',
    examples: ['devices:execute'],
  });

const target = {
  permission,
  resourceType: z.enum(RESOURCE_TYPES).describe('What `resourceId` names'),
  resourceId: z.uuid().describe("The record; it must lie in the caller's own scope (404 otherwise)"),
};

export const explainQuery = z
  .strictObject({
    userId: z.uuid().optional().describe('The person asked about (exactly one of userId and serviceAccountId)'),
    serviceAccountId: z.uuid().optional().describe('The service account asked about'),
    ip: z
      .union([z.ipv4(), z.ipv6()])
      .optional()
      .describe(
        'Evaluate IP allow-lists as if the request came from this address (else they are reported, not tested)',
      ),
    ...target,
  })
  .refine((q) => (q.userId === undefined) !== (q.serviceAccountId === undefined), {
    message: 'Give exactly one of userId and serviceAccountId',
    path: ['userId'],
  });
export type ExplainQuery = z.infer<typeof explainQuery>;

export const whoCanQuery = z.strictObject({
  ...target,
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional(),
  relationshipId: z
    .uuid()
    .optional()
    .describe(
      'Only those let in through this delegated-access relationship (a page may then hold fewer rows than limit)',
    ),
});
export type WhoCanQuery = z.infer<typeof whoCanQuery>;

export const cursorSchema = z.object({ k: z.enum(['u', 's']), id: z.uuid() });

export const accessReason = z
  .object({
    step: z
      .enum(ACCESS_STEPS)
      .describe(
        "account → membership → ip_allowlist → mfa → role → organization_access (then, for partner members, relationship where the partner requires relationships, and the organisation's own ip_allowlist) → freeze (destructive permissions) → site → device_group → budget (destructive permissions, where a budget is set)",
      ),
    allowed: z.boolean(),
    detail: z.string().describe('What this step found, in a sentence'),
    roleId: z.uuid().optional().describe('`role`: the role of the chain that grants the permission'),
    roleName: z.string().optional(),
    via: z
      .enum(ORG_ACCESS_VIAS)
      .optional()
      .describe(
        '`organization_access`: how the organisation is reached (`grant`: a just-in-time grant, named by grantId; also on `msp_access` under approval_required; `standing_all_except`: every organisation of the partner but the excluded ones; `access_group`: membership of an access group attached to a relationship with the organisation, named by accessGroupIds and relationshipIds)',
      ),
    grantId: z.uuid().optional().describe('`via: grant`: the just-in-time grant in force'),
    relationshipIds: z
      .array(z.uuid())
      .optional()
      .describe('`relationship`: the delegated-access relationships with the organisation the step weighed'),
    accessGroupIds: z
      .array(z.uuid())
      .optional()
      .describe('`relationship` and `via: access_group`: the access groups through which the relationships are used'),
    until: z.string().optional().describe('`via: grant`: when the grant ends (ISO 8601)'),
    breakGlass: z
      .boolean()
      .optional()
      .describe("`ip_allowlist`, `msp_access`, `freeze`: passed only as the partner's break-glass account (audited)"),
    freeze: z
      .object({
        side: z.enum(['partner', 'organization']),
        reason: z.string(),
        byName: z.string(),
        at: z.string(),
      })
      .optional()
      .describe('`freeze`: the freeze in force on destructive permissions (who set it, by name, from which side, why)'),
    requires: z
      .enum(['step_up', 'co_sign'])
      .optional()
      .describe('`budget`: what unlocks an exceeded budget (a fresh passkey step-up, or a co-signature)'),
    budget: z
      .object({
        setBy: z.enum(['partner', 'organization']),
        dimension: z.enum(['organizations', 'devices', 'destructive']),
        limit: z.number().int(),
        used: z.number().int(),
        windowMinutes: z.number().int(),
      })
      .optional()
      .describe('`budget`: the blast-radius budget weighed, and how much of it the action uses'),
  })
  .meta({ id: 'AccessReason' });

const resourceJson = z.object({
  type: z.enum(RESOURCE_TYPES),
  id: z.uuid(),
  partnerId: z.uuid(),
  orgId: z.uuid().nullable(),
});

const membershipDecision = z.object({
  scope: z.enum(['partner', 'organization']),
  partnerId: z.uuid(),
  orgId: z.uuid().nullable(),
  roleId: z.uuid(),
  roleName: z.string(),
  allowed: z.boolean(),
  deniedBy: z.enum(ACCESS_STEPS).nullable(),
  reasons: z.array(accessReason),
});

export const explainResponse = z
  .object({
    allowed: z.boolean(),
    deniedBy: z.enum(ACCESS_STEPS).nullable().describe('The first step that denies, null when allowed'),
    reasons: z.array(accessReason).describe('The steps of the membership that allows, or else of the first one'),
    subject: z.object({
      type: z.enum(['user', 'service_account']),
      id: z.uuid(),
      name: z.string(),
      email: z.string().nullable(),
    }),
    permission: z.string(),
    resource: resourceJson,
    memberships: z
      .array(membershipDecision)
      .describe("Each membership bearing on the record (its organisation's, its partner's), decided separately"),
  })
  .meta({ id: 'AccessExplanation' });

export const whoCanRow = z
  .object({
    subjectType: z.enum(['user', 'service_account']),
    id: z.uuid(),
    name: z.string(),
    email: z.string().nullable(),
    scope: z.enum(['partner', 'organization']),
    roleId: z.uuid(),
    roleName: z.string(),
    relationships: z
      .array(
        z.object({
          id: z.uuid(),
          name: z.string(),
          endsAt: z.string(),
          accessGroups: z
            .array(z.object({ id: z.uuid(), name: z.string() }))
            .describe("The partner's access groups the subject uses the relationship through ([]: it needs none)"),
        }),
      )
      .describe(
        'The delegated-access relationships that let the subject in (a partner that requires relationships), each with the access groups it is used through; [] otherwise',
      ),
    reasons: z.array(accessReason),
  })
  .meta({ id: 'WhoCanEntry' });

export const whoCanResponse = z.object({
  permission: z.string(),
  resource: resourceJson,
  data: z.array(whoCanRow),
  nextCursor: z.string().nullable(),
});

export const pageQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional(),
  orgId: z.uuid().optional().describe('Optional: must name the organisation itself'),
});

const freezeView = z.object({
  side: z.enum(['partner', 'organization']),
  reason: z.string(),
  byName: z.string(),
  at: z.string(),
});

export const partnerAccessResponse = z.object({
  mspAccess: z.enum(MSP_ACCESS),
  freezes: z
    .object({
      partner: freezeView.nullable().describe("The partner's freeze of its own staff and service accounts"),
      organization: freezeView.nullable().describe("The organisation's freeze of everyone acting in it"),
    })
    .describe('Freezes of destructive permissions in force now: while one is, the staff below cannot use them here'),
  data: z.array(
    z
      .object({
        userId: z.uuid(),
        email: z.string(),
        name: z.string(),
        roleId: z.uuid(),
        roleName: z.string(),
        access: z
          .enum(['standing', 'access_group'])
          .describe(
            'standing: orgAccess all, all_except or selected; access_group: a member of an access group attached to a relationship with the organisation (just-in-time grants in force: GET /access/grants)',
          ),
        orgAccess: z.enum(['all', 'selected', 'all_except', 'none', 'eligible']),
        until: z.string().nullable().describe('When the access ends (null: standing)'),
        reachesNow: z
          .boolean()
          .describe("false when the organisation's own policies (mspAccess, its IP allow-list) hold the member out"),
        blockedBy: z.enum(ACCESS_STEPS).nullable(),
        breakGlass: z.boolean().describe("The partner's break-glass account"),
      })
      .meta({ id: 'PartnerAccessEntry' }),
  ),
  serviceAccounts: z
    .array(
      z
        .object({
          id: z.uuid(),
          name: z.string(),
          owner: z
            .enum(['partner', 'organization'])
            .describe(
              "partner: the partner's own (it reaches every organisation of the partner); organization: made for this organisation by the partner's staff",
            ),
          roleId: z.uuid(),
          roleName: z.string(),
          disabled: z.boolean(),
          lastUsedAt: z.string().nullable().describe('The last use of any of its keys (null: never)'),
          reachesNow: z
            .boolean()
            .describe("false when disabled, or when the organisation's own controls (mspAccess) hold it out"),
          blockedBy: z.enum(ACCESS_STEPS).nullable(),
        })
        .meta({ id: 'PartnerServiceAccountEntry' }),
    )
    .describe(
      'Service accounts that speak for the partner in the organisation (first page only; empty on later pages)',
    ),
  nextCursor: z.string().nullable(),
});

export const partnerActivityResponse = z.object({
  data: z.array(
    z
      .object({
        id: z.uuid(),
        at: z.string(),
        action: z.string(),
        result: z.string(),
        actorUserId: z.uuid().nullable().describe('A person or service account; null for a SCIM token'),
        actorEmail: z.string().nullable(),
        actorType: z.enum(['user', 'service_account', 'scim_token']),
        actorName: z.string().nullable().describe('The service account or SCIM token named at the time'),
        formerStaff: z
          .boolean()
          .describe(
            'The actor no longer speaks for the partner: a person who left it, a service account since deleted',
          ),
        resourceType: z.string().nullable(),
        resourceId: z.string().nullable(),
        ip: z.string().nullable(),
      })
      .meta({ id: 'PartnerActivityEntry' }),
  ),
  nextCursor: z.string().nullable(),
});

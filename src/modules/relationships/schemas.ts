// Delegated-access relationships on the wire: one schema per body, query and answer.
import { z } from 'zod';

export const RELATIONSHIP_STATUSES = [
  'draft',
  'approval_pending',
  'active',
  'expiring',
  'expired',
  'declined',
  'terminated',
] as const;
export type RelationshipStatus = (typeof RELATIONSHIP_STATUSES)[number];

const DAY_MS = 86_400_000;
/** ISO 8601 durations of whole days and more (years, months, weeks, days). */
const DURATION = /^P(?!$)(?:(\d{1,3})Y)?(?:(\d{1,3})M)?(?:(\d{1,4})W)?(?:(\d{1,4})D)?$/;

/** A duration's parts, or null when it is not an ISO 8601 duration of years, months, weeks and days. */
export function durationParts(v: string): { y: number; m: number; d: number } | null {
  const m = DURATION.exec(v);
  if (!m) return null;
  return { y: Number(m[1] ?? 0), m: Number(m[2] ?? 0), d: Number(m[3] ?? 0) * 7 + Number(m[4] ?? 0) };
}

/** `from` moved on by the duration, calendar-wise in UTC (years and months, then days). */
export function addDuration(from: Date, duration: string): Date {
  const p = durationParts(duration)!;
  const out = new Date(from.getTime());
  out.setUTCFullYear(out.getUTCFullYear() + p.y, out.getUTCMonth() + p.m);
  return new Date(out.getTime() + p.d * DAY_MS);
}

/** Within P1D..P2Y, measured from a fixed start so that the bound does not move with leap years. */
const withinBounds = (v: string) => {
  const start = new Date(Date.UTC(2001, 0, 1));
  const ms = addDuration(start, v).getTime() - start.getTime();
  return ms >= DAY_MS && ms <= addDuration(start, 'P2Y').getTime() - start.getTime();
};

export const durationSchema = z
  .string()
  .max(32)
  .refine((v) => durationParts(v) !== null, 'must be an ISO 8601 duration in years, months, weeks or days (P90D, P1Y)')
  .refine((v) => durationParts(v) === null || withinBounds(v), 'must be between P1D and P2Y')
  .describe('ISO 8601 duration, P1D to P2Y (P90D, P6M, P1Y)');

const ids = (what: string) =>
  z
    .array(z.uuid())
    .max(200)
    .refine((a) => new Set(a).size === a.length, 'must not repeat an id')
    .describe(what);

export const createRelationshipBody = z.strictObject({
  orgId: z.uuid(),
  name: z.string().trim().min(1).max(200),
  roleIds: ids("Partner roles whose permissions the partner's staff may use in the organisation (their union)").refine(
    (a) => a.length > 0,
    'at least one role',
  ),
  siteIds: ids('Sites of the organisation it reaches; absent or empty = every site').optional(),
  deviceGroupIds: ids('Device groups it reaches; absent or empty = every device group').optional(),
  duration: durationSchema,
  autoExtend: z
    .boolean()
    .optional()
    .describe('Extends by 180 days at each end; refused for roles holding *:*, users:write or roles:write'),
});
export type CreateRelationship = z.infer<typeof createRelationshipBody>;

export const patchRelationshipBody = z.strictObject({
  name: z.string().trim().min(1).max(200).optional(),
  roleIds: ids('The whole new set of roles')
    .refine((a) => a.length > 0, 'at least one role')
    .optional(),
  siteIds: ids('The whole new set of sites; empty = every site').optional(),
  deviceGroupIds: ids('The whole new set of device groups; empty = every device group').optional(),
  duration: durationSchema.optional(),
  autoExtend: z.boolean().optional(),
});
export type PatchRelationship = z.infer<typeof patchRelationshipBody>;

export const relationshipListQuery = z.strictObject({
  orgId: z.uuid().optional(),
  status: z.enum(RELATIONSHIP_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional(),
});
export type RelationshipListQuery = z.infer<typeof relationshipListQuery>;

export const relationshipCursor = z.object({ c: z.string(), id: z.uuid() });

export const relationshipJson = z.object({
  id: z.uuid(),
  partnerId: z.uuid(),
  orgId: z.uuid(),
  name: z.string(),
  roleIds: z.array(z.uuid()),
  siteIds: z.array(z.uuid()).describe('[] = every site'),
  deviceGroupIds: z.array(z.uuid()).describe('[] = every device group'),
  duration: z.string(),
  autoExtend: z.boolean(),
  status: z
    .enum(RELATIONSHIP_STATUSES)
    .describe(
      'draft → approval_pending (the request lapses to expired after 90 days) → active (expiring in its last 30 days unless it auto-extends) → expired; or declined; or terminated by either side',
    ),
  requestExpiresAt: z.string().nullable(),
  startsAt: z.string().nullable(),
  endsAt: z.string().nullable(),
  approvalUrl: z
    .string()
    .optional()
    .describe("While approval is pending: the console page of the organisation's admins"),
  createdAt: z.string(),
  updatedAt: z.string(),
});

const namedJson = z.object({ id: z.uuid(), name: z.string() });

/** A relationship with the names people read it by (what the console shows, and what the organisation signs). */
export const relationshipViewJson = relationshipJson
  .extend({
    orgName: z.string().meta({ examples: ['Contoso Dental'] }),
    partnerName: z.string().meta({ examples: ['Tailspin MSP'] }),
    roles: z
      .array(namedJson.extend({ permissions: z.array(z.string()).describe('Effective permissions (resource:action)') }))
      .describe('roleIds in order, each with its name and effective permissions (the role and its ancestors)'),
    sites: z.array(namedJson).describe('siteIds in order, by name ([] = every site)'),
    deviceGroups: z.array(namedJson).describe('deviceGroupIds in order, by name ([] = every device group)'),
  })
  .meta({ id: 'Relationship' });

export const reachOptionsQuery = z.strictObject({ orgId: z.uuid() });
export const reachOptionsJson = z.object({
  sites: z.array(namedJson).describe('Every site of the organisation, by name'),
  deviceGroups: z.array(namedJson).describe('Every device group of the organisation, by name'),
});

export const relationshipHistoryJson = z.object({
  data: z.array(
    z.object({
      id: z.uuid(),
      at: z.string(),
      action: z
        .string()
        .meta({ examples: ['relationship.approve'] })
        .describe(
          'relationship.create, .request, .update, .approve, .decline, .terminate, .extend (auto-extension), .expire',
        ),
      actorName: z.string().nullable().describe('The person who acted; null for the service (expiry, extension)'),
      actorEmail: z.string().nullable(),
      side: z.string().nullable().describe('relationship.terminate: partner or organization'),
      endsAt: z.string().nullable().describe('approve: the end set; extend: the new end'),
      removed: z
        .object({ roles: z.array(z.string()), sites: z.array(z.string()), deviceGroups: z.array(z.string()) })
        .describe('relationship.update: the names of what a narrowing removed'),
    }),
  ),
});

export const relationshipExportQuery = z.strictObject({
  orgId: z.uuid().optional(),
  status: z.enum(RELATIONSHIP_STATUSES).optional(),
});
export type RelationshipExportQuery = z.infer<typeof relationshipExportQuery>;

export const relationshipExportResponse = {
  description: 'Every matching relationship, newest first, as CSV with a header line (at most 10,000 rows).',
  content: { 'text/csv': { schema: z.string() } },
};

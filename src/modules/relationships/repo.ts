// The SQL of delegated-access relationships: the rows, the partner's roles, sites and device groups they
// name, and the lists (each state as the service clock sees it).
import { and, desc, eq, inArray, lt, or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { deviceGroups, organizations, relationships, roles, sites } from '../../db/schema/index.js';
import { rolesVisibleIn } from '../../db/tenant-filter.js';
import type { RelationshipStatus } from './schemas.js';

export { namesOf, orgReachOptions } from './repo-names.js';

export type RelationshipRow = typeof relationships.$inferSelect;

/** Days before its end a relationship counts as expiring. */
export const EXPIRING_DAYS = 30;
const DAY_MS = 86_400_000;

export async function insertRelationship(
  tx: Executor,
  values: typeof relationships.$inferInsert,
): Promise<RelationshipRow> {
  const [row] = await tx.insert(relationships).values(values).returning();
  return row!;
}

export async function findRelationship(db: Executor, id: string): Promise<RelationshipRow | undefined> {
  const [row] = await db.select().from(relationships).where(eq(relationships.id, id));
  return row;
}

/** The relationship, locked for a change of state. */
export async function lockRelationship(tx: Executor, id: string): Promise<RelationshipRow | undefined> {
  const [row] = await tx.select().from(relationships).where(eq(relationships.id, id)).for('update');
  return row;
}

export async function updateRelationship(
  tx: Executor,
  id: string,
  set: Partial<typeof relationships.$inferInsert>,
): Promise<RelationshipRow> {
  const [row] = await tx.update(relationships).set(set).where(eq(relationships.id, id)).returning();
  return row!;
}

/** Whether the organisation is the partner's. */
export async function isPartnerOrganization(db: Executor, partnerId: string, orgId: string): Promise<boolean> {
  const [row] = await db
    .select({ id: organizations.id })
    .from(organizations)
    .where(and(eq(organizations.id, orgId), eq(organizations.partnerId, partnerId)));
  return row !== undefined;
}

/** The ids among `ids` that are roles a partner membership can hold (system partner roles, the partner's own). */
export async function partnerRoleIds(db: Executor, partnerId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .select({ id: roles.id })
    .from(roles)
    .where(and(inArray(roles.id, ids), rolesVisibleIn({ kind: 'partner', partnerId, orgId: null })));
  return new Set(rows.map((r) => r.id));
}

/** The ids among `ids` that are sites of the organisation. */
export async function orgSiteIds(db: Executor, orgId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .select({ id: sites.id })
    .from(sites)
    .where(and(inArray(sites.id, ids), eq(sites.orgId, orgId)));
  return new Set(rows.map((r) => r.id));
}

/** The ids among `ids` that are device groups of the organisation. */
export async function orgGroupIds(db: Executor, orgId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .select({ id: deviceGroups.id })
    .from(deviceGroups)
    .where(and(inArray(deviceGroups.id, ids), eq(deviceGroups.orgId, orgId)));
  return new Set(rows.map((r) => r.id));
}

/** Rows in a state as seen at `now` (approval_pending past its request expiry and active past its end are expired). */
function statusCondition(status: RelationshipStatus, now: Date): SQL {
  const r = relationships;
  const soon = new Date(now.getTime() + EXPIRING_DAYS * DAY_MS);
  const pendingLapsed = and(eq(r.status, 'approval_pending'), sql`${r.requestExpiresAt} <= ${now}`)!;
  const activeEnded = and(eq(r.status, 'active'), eq(r.autoExtend, false), sql`${r.endsAt} <= ${now}`)!;
  switch (status) {
    case 'approval_pending':
      return and(eq(r.status, 'approval_pending'), sql`${r.requestExpiresAt} > ${now}`)!;
    case 'expired':
      return or(eq(r.status, 'expired'), pendingLapsed, activeEnded)!;
    case 'active':
      return and(eq(r.status, 'active'), or(eq(r.autoExtend, true), sql`${r.endsAt} > ${soon}`))!;
    case 'expiring':
      return and(
        eq(r.status, 'active'),
        eq(r.autoExtend, false),
        sql`${r.endsAt} > ${now}`,
        sql`${r.endsAt} <= ${soon}`,
      )!;
    default:
      return eq(r.status, status);
  }
}

/** Whose relationships a list shows: a partner's (optionally one organisation's), or one organisation's. */
export type RelationshipAudience = { kind: 'partner'; partnerId: string } | { kind: 'organization'; orgId: string };

export async function listRelationshipRows(
  db: Executor,
  who: RelationshipAudience,
  q: { orgId?: string; status?: RelationshipStatus; after: { c: string; id: string } | null; limit: number },
  now: Date,
): Promise<RelationshipRow[]> {
  const r = relationships;
  const after = q.after
    ? or(lt(r.createdAt, new Date(q.after.c)), and(eq(r.createdAt, new Date(q.after.c)), lt(r.id, q.after.id)))
    : undefined;
  return db
    .select()
    .from(r)
    .where(
      and(
        who.kind === 'partner' ? eq(r.partnerId, who.partnerId) : eq(r.orgId, who.orgId),
        q.orgId ? eq(r.orgId, q.orgId) : undefined,
        q.status ? statusCondition(q.status, now) : undefined,
        after,
      ),
    )
    .orderBy(desc(r.createdAt), desc(r.id))
    .limit(q.limit + 1);
}

/**
 * Relationships the notice sweep has work on at `now`, claimed for this transaction (FOR UPDATE SKIP LOCKED: one
 * instance handles each): active ones whose next notice is due (or, set to extend, past their end), and requests past
 * their lapse.
 */
export async function claimDueRelationships(tx: Executor, now: Date, limit: number): Promise<RelationshipRow[]> {
  const r = relationships;
  // The next notice after the last one sent (30, 7, 1 days before the end, then 0: at the end).
  const nextNotice = sql`(case when ${r.noticedDays} is null then 30 when ${r.noticedDays} > 7 then 7
    when ${r.noticedDays} > 1 then 1 else 0 end)`;
  return tx
    .select()
    .from(r)
    .where(
      or(
        and(
          eq(r.status, 'active'),
          eq(r.autoExtend, false),
          sql`${r.endsAt} <= ${now}::timestamptz + ${nextNotice} * interval '1 day'`,
        ),
        and(eq(r.status, 'active'), eq(r.autoExtend, true), sql`${r.endsAt} <= ${now}`),
        and(eq(r.status, 'approval_pending'), sql`${r.requestExpiresAt} <= ${now}`),
      ),
    )
    .orderBy(r.endsAt, r.id)
    .limit(limit)
    .for('update', { skipLocked: true });
}

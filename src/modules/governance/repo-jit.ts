// The SQL of just-in-time access (jit.ts): the requests, their decisions, and the grants they give.
import { and, desc, eq, inArray, isNull, or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { accessGrants, accessRequests, organizations, partners, sites, users } from '../../db/schema/index.js';

export type AccessRequestRow = typeof accessRequests.$inferSelect;
export type AccessGrantRow = typeof accessGrants.$inferSelect;

/** The organisation (id, settings) when it belongs to the partner. */
export async function partnerOrganization(db: Executor, orgId: string, partnerId: string) {
  const [org] = await db
    .select({ id: organizations.id, settings: organizations.settings })
    .from(organizations)
    .where(and(eq(organizations.id, orgId), eq(organizations.partnerId, partnerId)));
  return org;
}

/** Whether the site belongs to the organisation. */
export async function siteOfOrganization(db: Executor, siteId: string, orgId: string): Promise<boolean> {
  const [site] = await db
    .select({ id: sites.id })
    .from(sites)
    .where(and(eq(sites.id, siteId), eq(sites.orgId, orgId)));
  return site !== undefined;
}

/** The partner's settings (undefined: no such partner). */
export async function partnerSettings(db: Executor, partnerId: string): Promise<unknown> {
  const [partner] = await db.select({ settings: partners.settings }).from(partners).where(eq(partners.id, partnerId));
  return partner?.settings;
}

export async function insertAccessRequest(
  tx: Executor,
  values: typeof accessRequests.$inferInsert,
): Promise<AccessRequestRow> {
  const [r] = await tx.insert(accessRequests).values(values).returning();
  return r!;
}

export async function insertAccessGrant(
  tx: Executor,
  values: typeof accessGrants.$inferInsert,
): Promise<AccessGrantRow> {
  const [g] = await tx.insert(accessGrants).values(values).returning();
  return g!;
}

/**
 * Whose requests a list shows: a member's own (in its partner), the pending ones a Partner Admin approves
 * (partner_admin), or the pending ones an organisation's admin approves (customer_admin).
 */
export type RequestAudience =
  | { kind: 'own'; userId: string; partnerId: string }
  | { kind: 'partner_admin'; partnerId: string }
  | { kind: 'customer_admin'; orgId: string };

function audienceCondition(a: RequestAudience): SQL | undefined {
  if (a.kind === 'own') return and(eq(accessRequests.userId, a.userId), eq(accessRequests.partnerId, a.partnerId));
  if (a.kind === 'partner_admin')
    return and(
      eq(accessRequests.partnerId, a.partnerId),
      eq(accessRequests.approval, 'partner_admin'),
      eq(accessRequests.status, 'pending'),
    );
  return and(
    eq(accessRequests.orgId, a.orgId),
    eq(accessRequests.approval, 'customer_admin'),
    eq(accessRequests.status, 'pending'),
  );
}

/** Requests of any of the audiences (none: an empty list), newest first, each with its grant. */
export async function listAccessRequests(
  db: Executor,
  audiences: RequestAudience[],
  status: AccessRequestRow['status'] | undefined,
  limit: number,
): Promise<{ r: AccessRequestRow; g: AccessGrantRow | null }[]> {
  if (audiences.length === 0) return [];
  const who = audiences.length === 1 ? audienceCondition(audiences[0]!) : or(...audiences.map(audienceCondition));
  return db
    .select({ r: accessRequests, g: accessGrants })
    .from(accessRequests)
    .leftJoin(accessGrants, eq(accessGrants.requestId, accessRequests.id))
    .where(and(who, status ? eq(accessRequests.status, status) : undefined))
    .orderBy(desc(accessRequests.createdAt), desc(accessRequests.id))
    .limit(limit);
}

/** The request, locked for its decision. */
export async function lockAccessRequest(tx: Executor, id: string): Promise<AccessRequestRow | undefined> {
  const [r] = await tx.select().from(accessRequests).where(eq(accessRequests.id, id)).for('update');
  return r;
}

export async function decideAccessRequest(
  tx: Executor,
  id: string,
  set: Pick<AccessRequestRow, 'status' | 'decidedBy' | 'decidedAt' | 'decisionNote'>,
): Promise<AccessRequestRow> {
  const [decided] = await tx.update(accessRequests).set(set).where(eq(accessRequests.id, id)).returning();
  return decided!;
}

/** Whose grants a list shows: every one of a partner, a member's own in its partner, or an organisation's. */
export type GrantAudience =
  | { kind: 'partner'; partnerId: string }
  | { kind: 'member'; partnerId: string; userId: string }
  | { kind: 'organization'; orgId: string };

function grantAudience(a: GrantAudience): SQL | undefined {
  if (a.kind === 'partner') return eq(accessGrants.partnerId, a.partnerId);
  if (a.kind === 'member') return and(eq(accessGrants.partnerId, a.partnerId), eq(accessGrants.userId, a.userId));
  return eq(accessGrants.orgId, a.orgId);
}

/** Grants of the audience past their end at `now` that no request has recorded expired yet (at most 200). */
export async function overdueGrantIds(db: Executor, a: GrantAudience, now: Date): Promise<string[]> {
  const rows = await db
    .select({ id: accessGrants.id })
    .from(accessGrants)
    .where(
      and(
        grantAudience(a),
        isNull(accessGrants.revokedAt),
        isNull(accessGrants.expiredAt),
        sql`${accessGrants.expiresAt} <= ${now}`,
      ),
    )
    .limit(200);
  return rows.map((r) => r.id);
}

/** Grants of the audience (only those in force at `now` when `activeOnly`), newest first, with their request's reason. */
export async function listAccessGrants(db: Executor, a: GrantAudience, activeOnly: boolean, now: Date, limit: number) {
  const active = and(
    isNull(accessGrants.revokedAt),
    isNull(accessGrants.expiredAt),
    sql`${accessGrants.expiresAt} > ${now}`,
  );
  return db
    .select({ g: accessGrants, reason: accessRequests.reason, ticketRef: accessRequests.ticketRef })
    .from(accessGrants)
    .innerJoin(accessRequests, eq(accessRequests.id, accessGrants.requestId))
    .where(and(grantAudience(a), activeOnly ? active : undefined))
    .orderBy(desc(accessGrants.startsAt), desc(accessGrants.id))
    .limit(limit);
}

/** The grant (locked) with its request. */
export async function lockGrantWithRequest(
  tx: Executor,
  id: string,
): Promise<{ g: AccessGrantRow; r: AccessRequestRow } | undefined> {
  const [row] = await tx
    .select({ g: accessGrants, r: accessRequests })
    .from(accessGrants)
    .innerJoin(accessRequests, eq(accessRequests.id, accessGrants.requestId))
    .where(eq(accessGrants.id, id))
    .for('update', { of: accessGrants });
  return row;
}

export async function revokeAccessGrant(tx: Executor, id: string, at: Date, by: string): Promise<AccessGrantRow> {
  const [revoked] = await tx
    .update(accessGrants)
    .set({ revokedAt: at, revokedBy: by })
    .where(eq(accessGrants.id, id))
    .returning();
  return revoked!;
}

/** The people's names and e-mails and the organisations' names behind the ids of requests and grants, for display. */
export async function displayNames(db: Executor, userIds: string[], orgIds: string[]) {
  const [people, orgs] = await Promise.all([
    userIds.length
      ? db.select({ id: users.id, name: users.name, email: users.email }).from(users).where(inArray(users.id, userIds))
      : [],
    orgIds.length
      ? db
          .select({ id: organizations.id, name: organizations.name })
          .from(organizations)
          .where(inArray(organizations.id, orgIds))
      : [],
  ]);
  return {
    people: new Map(people.map((u) => [u.id, { name: u.name, email: u.email }])),
    orgs: new Map(orgs.map((o) => [o.id, o.name])),
  };
}

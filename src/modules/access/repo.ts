// The SQL of the access module (issue 12 §3): the Partner Admins mailed about the lapse, the customer's view, the
// subjects an explanation is about, who-can's candidates, the standing-access lapse sweep and just-in-time access.
// The only file of the module that imports drizzle-orm or the schema; the statements are moved here as they were.
import { and, desc, eq, isNull, or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { accessGrants, accessRequests, organizations, partners, sites } from '../../db/schema/index.js';
import { PARTNER_ADMIN_ROLE_ID } from '../../access/catalog.js';
import type { Owner, PartnerOwned, Siteless } from '../../access/decision.js';
import { GRANTS_SQL, ORG_POLICIES_SQL, type MembershipFacts } from '../../http/authenticate.js';
import type { ServiceAccountFacts } from '../service-accounts/index.js';

const rowsOf = <T>(r: unknown) => (r as { rows: T[] }).rows;
const idList = (ids: string[]) =>
  sql.join(
    ids.map((id) => sql`${id}`),
    sql`, `,
  );

// ---- The Partner Admins (both sides' admins: src/access/repo.ts adminsOfBothSides) ----

/** The partner's active Partner Admins' addresses. */
export async function partnerAdminEmails(tx: Executor, partnerId: string): Promise<string[]> {
  const res = await tx.execute(sql`select u.email from partner_users pu join users u on u.id = pu.user_id
    where pu.partner_id = ${partnerId} and pu.role_id = ${PARTNER_ADMIN_ROLE_ID} and u.status = 'active' order by 1 limit 500`);
  return rowsOf<{ email: string }>(res).map((r) => r.email);
}

// ---- The customer's view ----

/** Active partner members whose standing access covers the organisation, in id order after `afterId`. */
export async function partnerMemberIdsReaching(
  db: Executor,
  org: { id: string; partnerId: string },
  afterId: string | null,
  n: number,
): Promise<string[]> {
  return rowsOf<{ user_id: string }>(
    await db.execute(sql`select pu.user_id from partner_users pu join users u on u.id = pu.user_id
      where pu.partner_id = ${org.partnerId} and u.status = 'active' and (pu.org_access = 'all' or (pu.org_access = 'selected' and ${org.id}::uuid = any(pu.org_ids)))
      ${afterId ? sql`and pu.user_id > ${afterId}` : sql``} order by pu.user_id limit ${n}`),
  ).map((r) => r.user_id);
}

export interface PartnerActivityRow {
  seq: string | number;
  id: string;
  at: Date | string;
  action: string;
  result: string;
  actor_user_id: string;
  actor_email: string | null;
  resource_type: string | null;
  resource_id: string | null;
  ip: string | null;
}

/** The organisation's audit records whose actor is one of its partner's members, newest first, before `beforeSeq`. */
export async function partnerActivityRows(
  db: Executor,
  org: { id: string; partnerId: string },
  beforeSeq: number | null,
  n: number,
): Promise<PartnerActivityRow[]> {
  return rowsOf<PartnerActivityRow>(
    await db.execute(sql`select a.seq, a.id, a.at, a.action, a.result, a.actor_user_id, a.actor_email, a.resource_type, a.resource_id, a.ip
      from audit_logs a where a.org_id = ${org.id}
        and exists (select 1 from partner_users pu where pu.partner_id = ${org.partnerId} and pu.user_id = a.actor_user_id)
        ${beforeSeq !== null ? sql`and a.seq < ${beforeSeq}` : sql``}
      order by a.seq desc limit ${n}`),
  );
}

// ---- Subjects of an explanation ----

export type SubjectFactsRow = MembershipFacts & { epoch: number | string };

/**
 * The memberships of the users that bear on a record of `partnerId` (and `orgId`): their partner membership there and
 * their membership of that organisation. Columns as the liveness statement of authenticate names them.
 */
export async function userSubjectRows(
  db: Executor,
  userIds: string[],
  partnerId: string,
  orgId: string | null,
): Promise<SubjectFactsRow[]> {
  const orgBranch: SQL = orgId
    ? sql`union all
        select ou.user_id, 'organization' as scope, o2.partner_id, ou.org_id, null::uuid, null, null::uuid[], ou.role_id, ou.site_ids, ou.device_group_ids
        from organization_users ou join organizations o2 on o2.id = ou.org_id
        where ou.org_id = ${orgId} and ou.user_id in (${idList(userIds)})`
    : sql``;
  return rowsOf<SubjectFactsRow>(
    await db.execute(sql`
      select u.id as user_id, u.email, u.status as user_status, u.mfa_enabled, u.name as user_name, u.avatar_url, u.mfa_method,
             u.phone_verified, right(u.phone_number, 4) as phone_last4, u.last_login_at, u.created_at as user_created_at,
             exists (select 1 from passkeys k where k.user_id = u.id) as has_passkey,
             m.scope, m.partner_id, m.org_id, m.pu_role_id, m.org_access, m.pu_org_ids, m.ou_role_id, m.site_ids, m.device_group_ids,
             p.settings as partner_settings, o.settings as org_settings, o.partner_id as org_partner_id, op.settings as org_partner_settings,
             ${sql.raw(ORG_POLICIES_SQL('m.scope', 'm.partner_id'))} as org_policies,
             ${sql.raw(GRANTS_SQL('m.scope', 'm.partner_id', 'm.user_id'))} as jit_grants,
             (select epoch from authz_state where id = 1) as epoch
      from (
        select pu.user_id, 'partner' as scope, pu.partner_id, null::uuid as org_id, pu.role_id as pu_role_id, pu.org_access::text as org_access,
               pu.org_ids as pu_org_ids, null::uuid as ou_role_id, null::uuid[] as site_ids, null::uuid[] as device_group_ids
        from partner_users pu where pu.partner_id = ${partnerId} and pu.user_id in (${idList(userIds)})
        ${orgBranch}
      ) m
      join users u on u.id = m.user_id
      left join partners p on m.scope = 'partner' and p.id = m.partner_id
      left join organizations o on o.id = m.org_id
      left join partners op on op.id = o.partner_id
      order by m.scope desc`),
  );
}

export type AccountSubjectRow = ServiceAccountFacts & { disabled: boolean; epoch: number | string };

/** Service accounts of the partner (partner-wide, or of `orgId`) among `ids`. */
export async function serviceAccountSubjectRows(
  db: Executor,
  ids: string[],
  partnerId: string,
  orgId: string | null,
): Promise<AccountSubjectRow[]> {
  return rowsOf<AccountSubjectRow>(
    await db.execute(sql`
      select '' as key_id, a.id as account_id, a.client_id, a.name as account_name, a.partner_id, a.org_id, a.role_id, a.disabled,
             p.settings as partner_settings, o.settings as org_settings, (select epoch from authz_state where id = 1) as epoch
      from service_accounts a join partners p on p.id = a.partner_id left join organizations o on o.id = a.org_id
      where a.partner_id = ${partnerId} and (a.org_id is null ${orgId ? sql`or a.org_id = ${orgId}` : sql``}) and a.id in (${idList(ids)})`),
  );
}

// ---- Explain and who-can ----

/** A user who is a member of some organisation of the partner (name, e-mail, status), or null. */
export async function partnerOrgMember(db: Executor, userId: string, partnerId: string) {
  const [row] = rowsOf<{ name: string; email: string; status: string }>(
    await db.execute(sql`select u.name, u.email, u.status from users u where u.id = ${userId} and exists (
      select 1 from organization_users ou join organizations o on o.id = ou.org_id where ou.user_id = u.id and o.partner_id = ${partnerId})`),
  );
  return row ?? null;
}

/**
 * Roles (of the system, the partner, or the organisation) whose chain grants the permission: the granting roles and
 * their descendants down to the chain limit. `*:*` counts for people, never for service accounts.
 */
function grantingRoles(permission: string, partnerId: string, orgId: string | null, star: boolean) {
  const [resource, action] = permission.split(':');
  const own = sql`(r.scope = 'system' or r.partner_id = ${partnerId}${orgId ? sql` or r.org_id = ${orgId}` : sql``})`;
  return sql`with recursive granting(id, depth) as (
      select r.id, 0 from roles r
      where ${own} and exists (select 1 from role_permissions rp join permissions p on p.id = rp.permission_id
                               where rp.role_id = r.id and ((p.resource = ${resource} and p.action = ${action})${star ? sql` or (p.resource = '*' and p.action = '*')` : sql``}))
      union all
      select r.id, g.depth + 1 from roles r join granting g on r.parent_role_id = g.id where g.depth < 15 and ${own}
    )`;
}

/** The record who-can asks about: its owner and how partner members and siteless records are seen. */
export interface CandidateTarget {
  owner: Owner;
  partnerOwned: PartnerOwned;
  siteless: Siteless;
}

/**
 * Candidates a page of who-can considers, in id order after `after`: members whose role chain grants the permission
 * and whose standing scope reaches the record. SQL narrows; the decision is then run on each.
 */
export async function candidateUsers(
  db: Executor,
  t: CandidateTarget,
  permission: string,
  after: string | null,
  n: number,
): Promise<string[]> {
  const { partnerId, orgId, siteId, groupIds } = t.owner;
  const partnerBranch = orgId
    ? sql`select pu.user_id from partner_users pu where pu.partner_id = ${partnerId} and pu.role_id in (select id from granting)
            and (pu.org_access = 'all' or (pu.org_access = 'selected' and ${orgId}::uuid = any(pu.org_ids)))`
    : sql`select pu.user_id from partner_users pu where pu.partner_id = ${partnerId} and pu.role_id in (select id from granting)`;
  const siteRule =
    siteId === undefined
      ? sql`true`
      : siteId === null
        ? t.siteless === 'hidden'
          ? sql`ou.site_ids is null`
          : sql`true`
        : sql`(ou.site_ids is null or ${siteId}::uuid = any(ou.site_ids))`;
  const groupRule =
    groupIds === undefined
      ? sql`true`
      : groupIds.length === 0
        ? sql`ou.device_group_ids is null`
        : sql`(ou.device_group_ids is null or ou.device_group_ids && array[${sql.join(
            groupIds.map((g) => sql`${g}::uuid`),
            sql`, `,
          )}])`;
  const orgBranch =
    orgId && t.partnerOwned !== 'partner-only'
      ? sql`union all select ou.user_id from organization_users ou where ou.org_id = ${orgId} and ou.role_id in (select id from granting) and ${siteRule} and ${groupRule}`
      : sql``;
  const rows = rowsOf<{ user_id: string }>(
    await db.execute(sql`${grantingRoles(permission, partnerId, orgId, true)}
      select distinct c.user_id from (${partnerBranch} ${orgBranch}) c join users u on u.id = c.user_id and u.status = 'active'
      ${after ? sql`where c.user_id > ${after}` : sql``}
      order by c.user_id limit ${n}`),
  );
  return rows.map((r) => r.user_id);
}

/** Service accounts of the partner whose role chain grants the permission (never `*:*`), in id order after `after`. */
export async function candidateAccounts(
  db: Executor,
  t: CandidateTarget,
  permission: string,
  after: string | null,
  n: number,
): Promise<string[]> {
  const { partnerId, orgId } = t.owner;
  const inScope =
    orgId && t.partnerOwned !== 'partner-only' ? sql`(a.org_id is null or a.org_id = ${orgId})` : sql`a.org_id is null`;
  const rows = rowsOf<{ id: string }>(
    await db.execute(sql`${grantingRoles(permission, partnerId, orgId, false)}
      select a.id from service_accounts a where a.partner_id = ${partnerId} and ${inScope} and not a.disabled and a.role_id in (select id from granting)
      ${after ? sql`and a.id > ${after}` : sql``}
      order by a.id limit ${n}`),
  );
  return rows.map((r) => r.id);
}

// ---- Standing-access lapse (lapse.ts) ----

/** Partners whose settings.security.standingAccessLapseDays is a number. */
export async function partnersWithLapse(db: Executor) {
  return rowsOf<{ id: string; name: string; settings: unknown }>(
    await db.execute(
      sql`select id, name, settings from partners where settings->'security'->'standingAccessLapseDays' is not null and jsonb_typeof(settings->'security'->'standingAccessLapseDays') = 'number'`,
    ),
  );
}

/**
 * Claims (FOR UPDATE SKIP LOCKED) up to `batch` members of the partner with standing access, idle since `idleBefore`
 * and not warned this idle period, and marks them warned at `now`.
 */
export async function markLapseWarnings(tx: Executor, partnerId: string, idleBefore: Date, now: Date, batch: number) {
  return rowsOf<{
    user_id: string;
    email: string;
    name: string;
    status: string;
    idle_since: Date | string;
  }>(
    await tx.execute(sql`
            with due as (
              select pu.id from partner_users pu
              where pu.partner_id = ${partnerId} and pu.org_access in ('all', 'selected') and pu.role_id <> ${PARTNER_ADMIN_ROLE_ID}
                and coalesce(pu.last_used_at, pu.created_at) <= ${idleBefore}
                and (pu.lapse_warned_at is null or pu.lapse_warned_at < coalesce(pu.last_used_at, pu.created_at))
              order by pu.id limit ${batch} for update skip locked)
            update partner_users pu set lapse_warned_at = ${now}
              from due, users u
              where pu.id = due.id and u.id = pu.user_id
              returning pu.user_id, u.email, u.name, u.status, coalesce(pu.last_used_at, pu.created_at) as idle_since`),
  );
}

/**
 * Claims up to `batch` members idle since `idleBefore` and warned in this idle period no later than `warnedBefore`,
 * and makes their standing access eligible (`all`: every organisation the partner has now).
 */
export async function lapseStandingAccess(
  tx: Executor,
  partnerId: string,
  idleBefore: Date,
  warnedBefore: Date,
  now: Date,
  batch: number,
) {
  return rowsOf<{
    id: string;
    user_id: string;
    was: 'all' | 'selected';
    was_org_ids: string[] | string;
    org_ids: string[] | string;
    idle_since: Date | string;
  }>(
    await tx.execute(sql`
            with due as (
              select pu.id, pu.org_access, pu.org_ids from partner_users pu
              where pu.partner_id = ${partnerId} and pu.org_access in ('all', 'selected') and pu.role_id <> ${PARTNER_ADMIN_ROLE_ID}
                and coalesce(pu.last_used_at, pu.created_at) <= ${idleBefore}
                and pu.lapse_warned_at >= coalesce(pu.last_used_at, pu.created_at) and pu.lapse_warned_at <= ${warnedBefore}
              order by pu.id limit ${batch} for update skip locked)
            update partner_users pu set org_access = 'eligible', updated_at = ${now},
                org_ids = case when due.org_access = 'all'
                  then coalesce((select array_agg(o.id order by o.id) from organizations o where o.partner_id = pu.partner_id), '{}'::uuid[])
                  else pu.org_ids end
              from due
              where pu.id = due.id
              returning pu.id, pu.user_id, due.org_access as was, due.org_ids as was_org_ids, pu.org_ids, coalesce(pu.last_used_at, pu.created_at) as idle_since`),
  );
}

// ---- Just-in-time access (jit.ts) ----

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

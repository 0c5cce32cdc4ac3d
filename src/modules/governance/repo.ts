// The SQL of the governance module: the Partner Admins mailed about the lapse, the customer's view and the
// standing-access lapse sweep here; explanations in repo-explain.ts, just-in-time access in repo-jit.ts.
// With its repo-*.ts parts, the only files of the module that import drizzle-orm or the schema.
import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { PARTNER_ADMIN_ROLE_ID } from '../../access/catalog.js';
import { rowsOf } from '../../db/rows.js';

export * from './repo-explain.js';
import { groupMemberReaches } from './repo-explain.js';
export * from './repo-jit.js';
export * from './repo-authzen.js';

// ---- The Partner Admins (both sides' admins: src/access/repo.ts adminsOfBothSides) ----

/** The partner's active Partner Admins' addresses. */
export async function partnerAdminEmails(tx: Executor, partnerId: string): Promise<string[]> {
  const res = await tx.execute(sql`select u.email from partner_users pu join users u on u.id = pu.user_id
    where pu.partner_id = ${partnerId} and pu.role_id = ${PARTNER_ADMIN_ROLE_ID} and pu.status = 'active' and u.status = 'active' order by 1 limit 500`);
  return rowsOf<{ email: string }>(res).map((r) => r.email);
}

// ---- The customer's view ----

/** Active partner members whose standing access or access groups cover the organisation, in id order after `afterId`. */
export async function partnerMemberIdsReaching(
  db: Executor,
  org: { id: string; partnerId: string },
  afterId: string | null,
  n: number,
): Promise<string[]> {
  return rowsOf<{ user_id: string }>(
    await db.execute(sql`select pu.user_id from partner_users pu join users u on u.id = pu.user_id
      where pu.partner_id = ${org.partnerId} and pu.status = 'active' and u.status = 'active' and (pu.org_access = 'all' or (pu.org_access = 'selected' and ${org.id}::uuid = any(pu.org_ids))
        or (pu.org_access = 'all_except' and not (${org.id}::uuid = any(pu.org_ids))) or ${groupMemberReaches(org.id)})
      ${afterId ? sql`and pu.user_id > ${afterId}` : sql``} order by pu.user_id limit ${n}`),
  ).map((r) => r.user_id);
}

export interface PartnerServiceAccountRow {
  id: string;
  name: string;
  org_id: string | null;
  role_id: string;
  role_name: string;
  disabled: boolean;
  last_used_at: Date | string | null;
}

/**
 * Service accounts that speak for the partner in the organisation: the partner's own (they reach every organisation of
 * the partner) and the organisation's that someone acting for the partner made; the partner's first, then by name.
 */
export async function partnerServiceAccountsReaching(
  db: Executor,
  org: { id: string; partnerId: string },
  n: number,
): Promise<PartnerServiceAccountRow[]> {
  return rowsOf<PartnerServiceAccountRow>(
    await db.execute(sql`select sa.id, sa.name, sa.org_id, sa.role_id, r.name as role_name, sa.disabled,
        (select max(k.last_used_at) from service_account_keys k where k.service_account_id = sa.id) as last_used_at
      from service_accounts sa join roles r on r.id = sa.role_id
      where sa.partner_id = ${org.partnerId} and (sa.org_id is null or (sa.org_id = ${org.id} and sa.made_by_partner))
      order by sa.org_id nulls first, lower(sa.name), sa.id limit ${n}`),
  );
}

export interface PartnerActivityRow {
  seq: string | number;
  id: string;
  at: Date | string;
  action: string;
  result: string;
  actor_user_id: string | null;
  actor_email: string | null;
  actor_type: 'user' | 'service_account' | 'scim_token';
  actor_name: string | null;
  former: boolean;
  resource_type: string | null;
  resource_id: string | null;
  ip: string | null;
}

/**
 * The organisation's audit records whose actor spoke for its partner, newest first, before `beforeSeq`; `former`: the
 * actor is a person with no membership of the partner any more, or a service account since deleted.
 */
export async function partnerActivityRows(
  db: Executor,
  org: { id: string; partnerId: string },
  beforeSeq: number | null,
  n: number,
): Promise<PartnerActivityRow[]> {
  return rowsOf<PartnerActivityRow>(
    await db.execute(sql`select x.*,
        case x.actor_type
          when 'user' then x.actor_user_id is not null and not exists (select 1 from partner_users pu
            where pu.partner_id = ${org.partnerId} and pu.user_id = x.actor_user_id)
          when 'service_account' then not exists (select 1 from service_accounts sa where sa.id = x.actor_user_id)
          else false end as former
      from (select a.seq, a.id, a.at, a.action, a.result, a.actor_user_id, a.actor_email, a.resource_type, a.resource_id, a.ip,
          case when a.details->>'actorType' in ('service_account', 'scim_token') then a.details->>'actorType' else 'user' end as actor_type,
          coalesce(a.details->>'serviceAccountName', a.details->>'scimTokenName') as actor_name
        from audit_logs a where a.org_id = ${org.id}
          and (a.by_partner
            or exists (select 1 from partner_users pu where pu.partner_id = ${org.partnerId} and pu.user_id = a.actor_user_id))
          ${beforeSeq !== null ? sql`and a.seq < ${beforeSeq}` : sql``}
        order by a.seq desc limit ${n}) x
      order by x.seq desc`),
  );
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

/** The partner's members with standing access (not Partner Admins) idle since `idleBefore`: both sweep steps' rows. */
const idleStandingMembers = (partnerId: string, idleBefore: Date) =>
  sql`pu.partner_id = ${partnerId} and pu.status = 'active' and pu.org_access in ('all', 'selected', 'all_except') and pu.role_id <> ${PARTNER_ADMIN_ROLE_ID}
                and coalesce(pu.last_used_at, pu.created_at) <= ${idleBefore}`;

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
              where ${idleStandingMembers(partnerId, idleBefore)}
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
 * and makes their standing access eligible (`all`: every organisation the partner has now; `all_except`: every one
 * but the excluded).
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
    was: 'all' | 'selected' | 'all_except';
    was_org_ids: string[] | string;
    org_ids: string[] | string;
    idle_since: Date | string;
  }>(
    await tx.execute(sql`
            with due as (
              select pu.id, pu.org_access, pu.org_ids from partner_users pu
              where ${idleStandingMembers(partnerId, idleBefore)}
                and pu.lapse_warned_at >= coalesce(pu.last_used_at, pu.created_at) and pu.lapse_warned_at <= ${warnedBefore}
              order by pu.id limit ${batch} for update skip locked)
            update partner_users pu set org_access = 'eligible', updated_at = ${now},
                org_ids = case when due.org_access = 'all'
                  then coalesce((select array_agg(o.id order by o.id) from organizations o where o.partner_id = pu.partner_id), '{}'::uuid[])
                  when due.org_access = 'all_except'
                  then coalesce((select array_agg(o.id order by o.id) from organizations o where o.partner_id = pu.partner_id
                    and not (o.id = any(due.org_ids))), '{}'::uuid[])
                  else pu.org_ids end
              from due
              where pu.id = due.id
              returning pu.id, pu.user_id, due.org_access as was, due.org_ids as was_org_ids, pu.org_ids, coalesce(pu.last_used_at, pu.created_at) as idle_since`),
  );
}

// ---- Compliance with the tenant's security policy ----

/** Active members of the tenant itself (the partner's staff, or the organisation's own people), in id order. */
export async function tenantMemberIds(db: Executor, partnerId: string, orgId: string | null): Promise<string[]> {
  const res = orgId
    ? await db.execute(sql`select ou.user_id as id from organization_users ou join users u on u.id = ou.user_id
        where ou.org_id = ${orgId} and ou.status = 'active' and u.status = 'active' order by 1 limit 1000`)
    : await db.execute(sql`select pu.user_id as id from partner_users pu join users u on u.id = pu.user_id
        where pu.partner_id = ${partnerId} and pu.status = 'active' and u.status = 'active' order by 1 limit 1000`);
  return rowsOf<{ id: string }>(res).map((r) => r.id);
}

/** The tenant's display name (the partner's, or the organisation's). */
export async function tenantName(db: Executor, partnerId: string, orgId: string | null): Promise<string> {
  const res = orgId
    ? await db.execute(sql`select name from organizations where id = ${orgId}`)
    : await db.execute(sql`select name from partners where id = ${partnerId}`);
  return rowsOf<{ name: string }>(res)[0]?.name ?? '';
}

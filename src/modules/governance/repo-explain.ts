// The SQL of explanations: the subjects an explanation is about and who-can's candidates.
import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import type { Owner, PartnerOwned, Siteless } from '../../access/decision.js';
import { GRANTS_SQL, type MembershipFacts, ORG_POLICIES_SQL } from '../../access/repo.js';
import { ACCESS_GROUPS_SQL, RELATIONSHIPS_SQL } from '../../access/relationships.js';
import type { ServiceAccountFacts } from '../service-accounts/index.js';
import { rowsOf } from '../../db/rows.js';

const idList = (ids: string[]) =>
  sql.join(
    ids.map((id) => sql`${id}`),
    sql`, `,
  );

// ---- Subjects of an explanation ----

export type SubjectFactsRow = MembershipFacts & { epoch: number | string };

/**
 * The memberships of the users that bear on a record of `partnerId` (and `orgId`): their partner membership there and
 * their membership of that organisation. Columns as the caller's liveness statement names them.
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
        where ou.org_id = ${orgId} and ou.status = 'active' and ou.user_id in (${idList(userIds)})`
    : sql``;
  return rowsOf<SubjectFactsRow>(
    await db.execute(sql`
      select u.id as user_id, u.email, u.status as user_status, u.mfa_enabled, u.name as user_name, u.avatar_url, u.mfa_method,
             u.phone_verified, u.email_verified, right(u.phone_number, 4) as phone_last4, u.last_login_at, u.created_at as user_created_at,
             exists (select 1 from passkeys k where k.user_id = u.id) as has_passkey,
             m.scope, m.partner_id, m.org_id, m.pu_role_id, m.org_access, m.pu_org_ids, m.ou_role_id, m.site_ids, m.device_group_ids,
             p.settings as partner_settings, o.settings as org_settings, o.partner_id as org_partner_id, op.settings as org_partner_settings,
             ${sql.raw(ORG_POLICIES_SQL('m.scope', 'm.partner_id'))} as org_policies,
             ${sql.raw(GRANTS_SQL('m.scope', 'm.partner_id', 'm.user_id'))} as jit_grants,
             ${sql.raw(RELATIONSHIPS_SQL('m.scope', 'm.partner_id', 'p.settings'))} as relationships,
             ${sql.raw(ACCESS_GROUPS_SQL('m.scope', 'm.partner_id', 'm.user_id', 'p.settings'))} as access_groups,
             (select epoch from authz_state where id = 1) as epoch
      from (
        select pu.user_id, 'partner' as scope, pu.partner_id, null::uuid as org_id, pu.role_id as pu_role_id, pu.org_access::text as org_access,
               pu.org_ids as pu_org_ids, null::uuid as ou_role_id, null::uuid[] as site_ids, null::uuid[] as device_group_ids
        from partner_users pu where pu.partner_id = ${partnerId} and pu.status = 'active' and pu.user_id in (${idList(userIds)})
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
             p.settings as partner_settings, o.settings as org_settings,
             ${sql.raw(RELATIONSHIPS_SQL("(case when a.org_id is null then 'partner' end)", 'a.partner_id', 'p.settings'))} as relationships,
             (select epoch from authz_state where id = 1) as epoch
      from service_accounts a join partners p on p.id = a.partner_id left join organizations o on o.id = a.org_id
      where a.partner_id = ${partnerId} and (a.org_id is null ${orgId ? sql`or a.org_id = ${orgId}` : sql``}) and a.id in (${idList(ids)})`),
  );
}

// ---- Explain and who-can ----

/**
 * The partner member `pu` is in an access group (by hand, or through its mapped SCIM group) attached to an active
 * relationship with the organisation: it may reach it through the group (the decision says whether it does).
 */
export const groupMemberReaches = (orgId: string) =>
  sql`exists (select 1 from relationships r join relationship_access_groups rg on rg.relationship_id = r.id
         join access_groups g on g.id = rg.group_id
         where r.org_id = ${orgId} and r.status = 'active'
           and (exists (select 1 from access_group_members gm where gm.group_id = g.id and gm.user_id = pu.user_id)
             or exists (select 1 from scim_group_members sm join scim_users su on su.id = sm.scim_user_id
                        where sm.group_id = g.scim_group_id and su.user_id = pu.user_id and su.active and su.org_id is null)))`;

/** A user who is a member of some organisation of the partner (name, e-mail, status), or null. */
export async function partnerOrgMember(db: Executor, userId: string, partnerId: string) {
  const [row] = rowsOf<{ name: string; email: string; status: string }>(
    await db.execute(sql`select u.name, u.email, u.status from users u where u.id = ${userId} and exists (
      select 1 from organization_users ou join organizations o on o.id = ou.org_id where ou.user_id = u.id and ou.status = 'active' and o.partner_id = ${partnerId})`),
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
 * and whose standing scope, access groups or just-in-time grants may reach the record. SQL narrows; the decision is
 * then run on each.
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
    ? sql`select pu.user_id from partner_users pu where pu.partner_id = ${partnerId} and pu.status = 'active' and pu.role_id in (select id from granting)
            and (pu.org_access = 'all' or (pu.org_access = 'selected' and ${orgId}::uuid = any(pu.org_ids))
              or (pu.org_access = 'all_except' and not (${orgId}::uuid = any(pu.org_ids)))
              or ${groupMemberReaches(orgId)}
              or exists (select 1 from access_grants ag where ag.user_id = pu.user_id and ag.org_id = ${orgId}
                         and ag.revoked_at is null and ag.expired_at is null))`
    : sql`select pu.user_id from partner_users pu where pu.partner_id = ${partnerId} and pu.status = 'active' and pu.role_id in (select id from granting)`;
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
      ? sql`union all select ou.user_id from organization_users ou where ou.org_id = ${orgId} and ou.status = 'active' and ou.role_id in (select id from granting) and ${siteRule} and ${groupRule}`
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

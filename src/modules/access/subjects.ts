// Who an explanation is about: a person's memberships (or a service account) read as the request pipeline reads them,
// turned into the same Principal by the same builders (userPrincipal, serviceAccountPrincipal).
import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import {
  GRANTS_SQL,
  ORG_POLICIES_SQL,
  membershipRoleId,
  userPrincipal,
  type MembershipFacts,
} from '../../http/authenticate.js';
import type { Principal } from '../../http/context.js';
import type { ResolvedRole, RoleCache } from '../roles/index.js';
import { serviceAccountPrincipal, type ServiceAccountFacts } from '../service-accounts/index.js';

const rowsOf = <T>(r: unknown) => (r as { rows: T[] }).rows;
const idList = (ids: string[]) =>
  sql.join(
    ids.map((id) => sql`${id}`),
    sql`, `,
  );

export interface Subject {
  principal: Principal;
  role: ResolvedRole | null;
  /** The account's status (a person) or `disabled`/`active` (a service account). */
  status: string;
}

type FactsRow = MembershipFacts & { epoch: number | string };

/**
 * The memberships of the users that bear on a record of `partnerId` (and `orgId`): their partner membership there and
 * their membership of that organisation. Columns as the liveness statement of authenticate names them.
 */
export async function userSubjects(
  db: Executor,
  roles: RoleCache,
  enable2fa: boolean,
  userIds: string[],
  partnerId: string,
  orgId: string | null,
  now: number,
  ip: string | null = null,
): Promise<Map<string, Subject[]>> {
  const out = new Map<string, Subject[]>();
  if (userIds.length === 0) return out;
  const orgBranch: SQL = orgId
    ? sql`union all
        select ou.user_id, 'organization' as scope, o2.partner_id, ou.org_id, null::uuid, null, null::uuid[], ou.role_id, ou.site_ids, ou.device_group_ids
        from organization_users ou join organizations o2 on o2.id = ou.org_id
        where ou.org_id = ${orgId} and ou.user_id in (${idList(userIds)})`
    : sql``;
  const rows = rowsOf<FactsRow>(
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
  for (const row of rows) {
    const roleId = membershipRoleId(row);
    const role = roleId ? await roles.get(roleId, Number(row.epoch)) : null;
    const subject = { principal: userPrincipal(row, role, { enable2fa, ip, now }), role, status: row.user_status };
    out.set(row.user_id, [...(out.get(row.user_id) ?? []), subject]);
  }
  return out;
}

type AccountRow = ServiceAccountFacts & { disabled: boolean; epoch: number | string };

/** Service accounts of the partner (partner-wide, or of `orgId`) among `ids`. */
export async function serviceAccountSubjects(
  db: Executor,
  roles: RoleCache,
  ids: string[],
  partnerId: string,
  orgId: string | null,
): Promise<Map<string, Subject>> {
  const out = new Map<string, Subject>();
  if (ids.length === 0) return out;
  const rows = rowsOf<AccountRow>(
    await db.execute(sql`
      select '' as key_id, a.id as account_id, a.client_id, a.name as account_name, a.partner_id, a.org_id, a.role_id, a.disabled,
             p.settings as partner_settings, o.settings as org_settings, (select epoch from authz_state where id = 1) as epoch
      from service_accounts a join partners p on p.id = a.partner_id left join organizations o on o.id = a.org_id
      where a.partner_id = ${partnerId} and (a.org_id is null ${orgId ? sql`or a.org_id = ${orgId}` : sql``}) and a.id in (${idList(ids)})`),
  );
  for (const row of rows) {
    const role = await roles.get(row.role_id, Number(row.epoch));
    if (!role) continue;
    out.set(row.account_id, {
      principal: serviceAccountPrincipal(row, role),
      role,
      status: row.disabled ? 'disabled' : 'active',
    });
  }
  return out;
}

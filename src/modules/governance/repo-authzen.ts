// The SQL of the authorization API (/access/v1): the decision epoch, the owners of many records of one kind in one
// statement, and the candidates a resource search pages through. Each statement runs as the caller's row reach, so
// another partner's rows are never read.
import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { rowsOf } from '../../db/rows.js';

export const AUTHZEN_RESOURCE_TYPES = ['partner', 'organization', 'site', 'device_group', 'device', 'script'] as const;
export type AuthzenResourceType = (typeof AUTHZEN_RESOURCE_TYPES)[number];
export type RecordType = Exclude<AuthzenResourceType, 'partner'>;

const idList = (ids: string[]) =>
  sql.join(
    ids.map((id) => sql`${id}::uuid`),
    sql`, `,
  );

/** The decision epoch: it moves with every change to what a decision reads (the statement triggers of the authz_evaluate migration). */
export async function decisionEpoch(db: Executor): Promise<number> {
  const [row] = rowsOf<{ epoch: number | string }>(
    await db.execute(sql`select epoch from decision_epoch where id = 1`),
  );
  return Number(row?.epoch ?? 0);
}

/** Where a record lives, as one row per record (`group_ids`: a device's groups, a group itself). */
export interface OwnerRow {
  id: string;
  partner_id: string;
  org_id: string | null;
  site_id: string | null;
  group_ids: string[] | null;
}

/** The select list and source of each kind: id, partner, organisation, site and groups (null where no rule applies). */
const OWNER_SELECT: Record<RecordType, SQL> = {
  organization: sql`select o.id, o.partner_id, o.id as org_id, null::uuid as site_id, null::json as group_ids from organizations o`,
  site: sql`select s.id, o.partner_id, s.org_id, s.id as site_id, null::json as group_ids from sites s join organizations o on o.id = s.org_id`,
  device_group: sql`select g.id, o.partner_id, g.org_id, g.site_id, json_build_array(g.id) as group_ids from device_groups g join organizations o on o.id = g.org_id`,
  device: sql`select d.id, o.partner_id, d.org_id, d.site_id,
      coalesce((select json_agg(m.group_id) from device_group_members m where m.device_id = d.id), '[]'::json) as group_ids
    from devices d join organizations o on o.id = d.org_id`,
  script: sql`select x.id, x.partner_id, x.org_id, null::uuid as site_id, null::json as group_ids from scripts x`,
};

const ID_COLUMN: Record<RecordType, SQL> = {
  organization: sql`o.id`,
  site: sql`s.id`,
  device_group: sql`g.id`,
  device: sql`d.id`,
  script: sql`x.id`,
};
const ORG_COLUMN: Record<RecordType, SQL> = {
  organization: sql`o.id`,
  site: sql`s.org_id`,
  device_group: sql`g.org_id`,
  device: sql`d.org_id`,
  script: sql`x.org_id`,
};
const PARTNER_COLUMN: Record<RecordType, SQL> = {
  organization: sql`o.partner_id`,
  site: sql`o.partner_id`,
  device_group: sql`o.partner_id`,
  device: sql`o.partner_id`,
  script: sql`x.partner_id`,
};

/** The owners of the records of one kind among `ids` in the partner, in one statement (absent: no such record there). */
export async function ownerRows(db: Executor, type: RecordType, ids: string[], partnerId: string): Promise<OwnerRow[]> {
  if (ids.length === 0) return [];
  return rowsOf<OwnerRow>(
    await db.execute(
      sql`${OWNER_SELECT[type]} where ${PARTNER_COLUMN[type]} = ${partnerId} and ${ID_COLUMN[type]} in (${idList(ids)})`,
    ),
  );
}

/** How far a subject's memberships reach, for narrowing a resource search (the decision then runs on each row). */
export interface SearchReach {
  /** Organisations reached through the partner (null: every organisation of the partner). */
  partnerOrgs: string[] | null | 'none';
  /** Memberships of organisations, each with its site and device-group restrictions (null: none). */
  orgMemberships: { orgId: string; siteIds: string[] | null; groupIds: string[] | null }[];
}

/**
 * A page of candidate records of one kind for a resource search, in id order after `after`: the partner's records
 * the subject's memberships reach (optionally in one organisation). Narrowing only: the decision runs on each.
 */
export async function candidateRecords(
  db: Executor,
  type: RecordType,
  partnerId: string,
  orgId: string | null,
  reach: SearchReach,
  after: string | null,
  n: number,
): Promise<OwnerRow[]> {
  const org = ORG_COLUMN[type];
  const branches: SQL[] = [];
  if (reach.partnerOrgs === null) branches.push(sql`true`);
  else if (reach.partnerOrgs !== 'none' && reach.partnerOrgs.length)
    branches.push(sql`${org} in (${idList(reach.partnerOrgs)})`);
  for (const m of reach.orgMemberships) {
    const rules: SQL[] = [sql`${org} = ${m.orgId}::uuid`];
    if (type === 'device' && m.siteIds)
      rules.push(m.siteIds.length ? sql`d.site_id in (${idList(m.siteIds)})` : sql`false`);
    if (type === 'device' && m.groupIds)
      rules.push(
        m.groupIds.length
          ? sql`exists (select 1 from device_group_members gm where gm.device_id = d.id and gm.group_id in (${idList(m.groupIds)}))`
          : sql`false`,
      );
    branches.push(sql`(${sql.join(rules, sql` and `)})`);
  }
  // A partner-wide script is in force in every organisation: whoever reaches one of them may be allowed it.
  if (type === 'script' && branches.length) branches.push(sql`x.org_id is null`);
  if (branches.length === 0) return [];
  const where = [
    sql`${PARTNER_COLUMN[type]} = ${partnerId}`,
    sql`(${sql.join(branches, sql` or `)})`,
    ...(orgId
      ? [type === 'script' ? sql`(x.org_id = ${orgId}::uuid or x.org_id is null)` : sql`${org} = ${orgId}::uuid`]
      : []),
    ...(after ? [sql`${ID_COLUMN[type]} > ${after}::uuid`] : []),
  ];
  return rowsOf<OwnerRow>(
    await db.execute(
      sql`${OWNER_SELECT[type]} where ${sql.join(where, sql` and `)} order by ${ID_COLUMN[type]} limit ${n}`,
    ),
  );
}

export interface ReachRow {
  scope: 'partner' | 'organization' | 'account';
  org_id: string | null;
  role_id: string | null;
  authz_epoch: number | string;
  org_access: string | null;
  org_ids: string[] | null;
  site_ids: string[] | null;
  group_ids: string[] | null;
  grant_org_ids: string[] | null;
}

/** A person's memberships in the partner (and its just-in-time grants' organisations), or a service account's home. */
export async function subjectReachRows(
  db: Executor,
  subjectType: 'user' | 'service_account',
  id: string,
  partnerId: string,
): Promise<ReachRow[]> {
  if (subjectType === 'service_account') {
    return rowsOf<ReachRow>(
      await db.execute(sql`select 'account' as scope, a.org_id, a.role_id, (select epoch from authz_state where id = 1) as authz_epoch, null as org_access, null::json as org_ids, null::json as site_ids,
          null::json as group_ids, null::json as grant_org_ids
        from service_accounts a where a.id = ${id}::uuid and a.partner_id = ${partnerId} and not a.disabled`),
    );
  }
  return rowsOf<ReachRow>(
    await db.execute(sql`
      select 'partner' as scope, null::uuid as org_id, pu.role_id, (select epoch from authz_state where id = 1) as authz_epoch, pu.org_access::text as org_access, to_json(pu.org_ids) as org_ids,
             null::json as site_ids, null::json as group_ids,
             (select json_agg(g.org_id) from access_grants g where g.partner_id = pu.partner_id and g.user_id = pu.user_id and g.revoked_at is null and g.expired_at is null) as grant_org_ids
        from partner_users pu where pu.partner_id = ${partnerId} and pu.user_id = ${id}::uuid and pu.status = 'active'
      union all
      select 'organization', ou.org_id, ou.role_id, (select epoch from authz_state where id = 1), null, null, to_json(ou.site_ids), to_json(ou.device_group_ids), null
        from organization_users ou join organizations o on o.id = ou.org_id
        where o.partner_id = ${partnerId} and ou.user_id = ${id}::uuid and ou.status = 'active'`),
  );
}

/**
 * The organisations of the partner the subjects belong to (a person's organisation memberships, an organisation's
 * service account's organisation): whose memberships bear on a partner-wide record in force in every organisation.
 */
export async function homeOrgRows(
  db: Executor,
  userIds: string[],
  accountIds: string[],
  partnerId: string,
): Promise<{ kind: 'user' | 'service_account'; id: string; org_id: string }[]> {
  const parts: SQL[] = [];
  if (userIds.length)
    parts.push(sql`select 'user' as kind, ou.user_id as id, ou.org_id from organization_users ou join organizations o on o.id = ou.org_id
      where o.partner_id = ${partnerId} and ou.status = 'active' and ou.user_id in (${idList(userIds)})`);
  if (accountIds.length)
    parts.push(sql`select 'service_account' as kind, a.id, a.org_id from service_accounts a
      where a.partner_id = ${partnerId} and a.org_id is not null and a.id in (${idList(accountIds)})`);
  if (!parts.length) return [];
  return rowsOf(await db.execute(sql.join(parts, sql` union all `)));
}

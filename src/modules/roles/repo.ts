// Roles: the SQL of roles, their permissions and inheritance chains, and of what holds a role. Roles are read through
// the target's visibility (rolesVisibleIn).
import { and, asc, eq, gt, ilike, inArray, or, sql } from 'drizzle-orm';
import type { Executor, Tx } from '../../db/connect.js';
import {
  organizationUsers,
  partnerUsers,
  permissions,
  rolePermissions,
  roles,
  serviceAccounts,
} from '../../db/schema/index.js';
import { asSystemWithin } from '../../db/row-security.js';
import { rolesVisibleIn, type Target } from '../../db/tenant-filter.js';
import { likePrefix } from '../../db/order.js';
import { rowsOf } from '../../db/rows.js';

export type RoleRow = typeof roles.$inferSelect;
type NewRole = typeof roles.$inferInsert;

/** Bump in the same transaction as any change to a role, its parent, its permissions or its Force MFA flag (the access core's statement). */
export { bumpAuthzEpoch } from '../../access/repo.js';

export async function findRoleRow(db: Executor, target: Target, id: string): Promise<RoleRow | undefined> {
  const [row] = await db
    .select()
    .from(roles)
    .where(and(eq(roles.id, id), rolesVisibleIn(target)))
    .limit(1);
  return row;
}

/**
 * Members of the target scope holding each role (a system role's count never includes other tenants: the statement
 * names the tenant). Counted in the system context `member-count`: the row policy is a function call per row, and a
 * partner's role can have ten thousand holders (27 ms instead of ~3 for GET /roles in the large-tenant benchmark);
 * only counts leave.
 */
export async function memberCounts(db: Executor, target: Target, roleIds: string[]) {
  return asSystemWithin(db, 'member-count', () => countMembers(db, target, roleIds));
}

function countMembers(db: Executor, target: Target, roleIds: string[]) {
  return target.kind === 'partner'
    ? db
        .select({ roleId: partnerUsers.roleId, n: sql<number>`count(*)::int` })
        .from(partnerUsers)
        .where(and(eq(partnerUsers.partnerId, target.partnerId), inArray(partnerUsers.roleId, roleIds)))
        .groupBy(partnerUsers.roleId)
    : db
        .select({ roleId: organizationUsers.roleId, n: sql<number>`count(*)::int` })
        .from(organizationUsers)
        .where(and(eq(organizationUsers.orgId, target.orgId), inArray(organizationUsers.roleId, roleIds)))
        .groupBy(organizationUsers.roleId);
}

export const roleNamesByIds = (db: Executor, ids: string[]) =>
  db.select({ id: roles.id, name: roles.name }).from(roles).where(inArray(roles.id, ids));

/** One page (plus one row) of the roles visible in the target, by lower-cased name then id. */
export function listRoleRows(
  db: Executor,
  target: Target,
  q: { search?: string; after: { n: string; id: string } | null; limit: number },
) {
  const after = q.after;
  return db
    .select()
    .from(roles)
    .where(
      and(
        rolesVisibleIn(target),
        q.search ? ilike(roles.name, likePrefix(q.search)) : undefined,
        after
          ? or(
              gt(sql`lower(${roles.name})`, after.n),
              and(eq(sql`lower(${roles.name})`, after.n), gt(roles.id, after.id)),
            )
          : undefined,
      ),
    )
    .orderBy(asc(sql`lower(${roles.name})`), asc(roles.id))
    .limit(q.limit + 1);
}

export function directPermissionRows(db: Executor, roleId: string) {
  return db
    .select({ resource: permissions.resource, action: permissions.action })
    .from(rolePermissions)
    .innerJoin(permissions, eq(permissions.id, rolePermissions.permissionId))
    .where(eq(rolePermissions.roleId, roleId))
    .orderBy(permissions.resource, permissions.action);
}

/** Serialises structural role changes of one owner, so two concurrent edits cannot build a cycle. */
export async function lockOwner(tx: Tx, target: Target) {
  await tx.execute(
    sql`select pg_advisory_xact_lock(hashtextextended(${`roles:${target.orgId ?? target.partnerId}`}, 0))`,
  );
}

/** Deepest chain below a role (0 = no children), searched to `maxDepth + 1`. */
export async function descendantDepth(tx: Executor, roleId: string, maxDepth: number): Promise<number> {
  const res = await tx.execute(sql`
    with recursive d(id, depth) as (
      select id, 1 from roles where parent_role_id = ${roleId}
      union all select r.id, d.depth + 1 from roles r join d on r.parent_role_id = d.id where d.depth < ${maxDepth + 1}
    ) select coalesce(max(depth), 0) as depth from d`);
  return Number(rowsOf<{ depth: number }>(res)[0]?.depth ?? 0);
}

/** Replaces the role's direct permissions with `keys` (`resource:action`). */
export async function setPermissions(tx: Tx, roleId: string, keys: string[]) {
  await tx.delete(rolePermissions).where(eq(rolePermissions.roleId, roleId));
  if (keys.length === 0) return;
  const pairs = keys.map((k) => k.split(':') as [string, string]);
  const ids = await tx
    .select({ id: permissions.id })
    .from(permissions)
    .where(or(...pairs.map(([r, a]) => and(eq(permissions.resource, r), eq(permissions.action, a)))));
  await tx.insert(rolePermissions).values(ids.map((p) => ({ roleId, permissionId: p.id })));
}

export async function insertRole(tx: Tx, values: NewRole): Promise<RoleRow> {
  const [row] = await tx.insert(roles).values(values).returning();
  return row!;
}

export async function updateRoleRow(tx: Tx, id: string, set: Partial<NewRole>): Promise<void> {
  await tx.update(roles).set(set).where(eq(roles.id, id));
}

export async function deleteRoleRow(tx: Tx, id: string): Promise<void> {
  await tx.delete(roles).where(eq(roles.id, id));
}

/** Members (partner and organisation) holding the role, anywhere. */
export async function holderCount(tx: Tx, id: string): Promise<number> {
  const [pu] = await tx.select({ n: sql<number>`count(*)::int` }).from(partnerUsers).where(eq(partnerUsers.roleId, id));
  const [ou] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(organizationUsers)
    .where(eq(organizationUsers.roleId, id));
  return Number(pu?.n ?? 0) + Number(ou?.n ?? 0);
}

export async function serviceAccountCount(tx: Tx, id: string): Promise<number> {
  const [sa] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(serviceAccounts)
    .where(eq(serviceAccounts.roleId, id));
  return Number(sa?.n ?? 0);
}

export async function childRoleCount(tx: Tx, id: string): Promise<number> {
  const [children] = await tx.select({ n: sql<number>`count(*)::int` }).from(roles).where(eq(roles.parentRoleId, id));
  return Number(children?.n ?? 0);
}

/** Whether an SSO provider has the role as its default. */
export async function ssoDefaultRole(tx: Tx, id: string): Promise<boolean> {
  const inUse = await tx.execute(sql`select 1 from sso_providers where default_role_id = ${id} limit 1`);
  return rowsOf<unknown>(inUse).length > 0;
}

/** Whether a SCIM token or provisioned user has the role as its default, or a SCIM group maps to it. */
export async function scimUsesRole(tx: Tx, id: string): Promise<boolean> {
  const scimUse = await tx.execute(
    sql`select 1 from scim_tokens where default_role_id = ${id} union all select 1 from scim_users where default_role_id = ${id} union all select 1 from scim_groups where role_id = ${id} limit 1`,
  );
  return rowsOf<unknown>(scimUse).length > 0;
}

// SCIM provisioning: the SQL of groups (Groups resource) and their members, limited to the token's tenant.
import { and, asc, eq, inArray, ne, sql } from 'drizzle-orm';
import type { Executor, Tx } from '../../db/connect.js';
import { scimGroupMembers, scimGroups, scimUsers } from '../../db/schema/index.js';
import type { Target } from '../../db/tenant-filter.js';
import { filterToSql, type FilterTarget } from './repo-filter.js';
import { inTenant } from './repo-tenant.js';
import { GROUP_SCHEMA } from './schemas.js';

export type ScimGroupRow = typeof scimGroups.$inferSelect;

export const GROUP_FILTER: FilterTarget = {
  schema: GROUP_SCHEMA,
  columns: {
    id: { sql: sql`${scimGroups.id}`, kind: 'id' },
    displayname: { sql: sql`${scimGroups.displayName}`, kind: 'ci' },
    externalid: { sql: sql`${scimGroups.externalId}`, kind: 'string' },
    'meta.created': { sql: sql`${scimGroups.createdAt}`, kind: 'date' },
    'meta.lastmodified': { sql: sql`${scimGroups.updatedAt}`, kind: 'date' },
  },
  multi: {
    members: {
      exists: (cond) =>
        sql`exists (select 1 from scim_group_members m where m.group_id = ${scimGroups.id} and ${cond})`,
      primary: 'value',
      sub: { value: { sql: sql`m.scim_user_id`, kind: 'id' } },
    },
  },
};

/** The members of each group, by userName. */
export const membersOfGroups = (db: Executor, ids: string[]) =>
  db
    .select({ groupId: scimGroupMembers.groupId, id: scimUsers.id, userName: scimUsers.userName })
    .from(scimGroupMembers)
    .innerJoin(scimUsers, eq(scimUsers.id, scimGroupMembers.scimUserId))
    .where(inArray(scimGroupMembers.groupId, ids))
    .orderBy(asc(scimUsers.userName));

export async function findGroupRow(db: Executor, t: Target, id: string): Promise<ScimGroupRow | undefined> {
  const [row] = await db
    .select()
    .from(scimGroups)
    .where(and(eq(scimGroups.id, id), inTenant(scimGroups, t)))
    .limit(1);
  return row;
}

/** The tenant's groups matching the SCIM filter: how many, and `count` of them from `offset` (oldest first). */
export async function pageOfGroups(db: Executor, t: Target, filter: string | undefined, count: number, offset: number) {
  const where = and(inTenant(scimGroups, t), filter ? filterToSql(GROUP_FILTER, filter) : undefined);
  const [total] = await db.select({ n: sql<number>`count(*)::int` }).from(scimGroups).where(where);
  const rows =
    count === 0
      ? []
      : await db
          .select()
          .from(scimGroups)
          .where(where)
          .orderBy(asc(scimGroups.createdAt), asc(scimGroups.id))
          .limit(count)
          .offset(offset);
  return { total: Number(total?.n ?? 0), rows };
}

/** Whether another group of the tenant has this displayName (case-insensitive). */
export async function groupNameTaken(tx: Tx, t: Target, displayName: string, selfId?: string): Promise<boolean> {
  const [clash] = await tx
    .select({ id: scimGroups.id })
    .from(scimGroups)
    .where(
      and(
        inTenant(scimGroups, t),
        sql`lower(${scimGroups.displayName}) = lower(${displayName})`,
        selfId ? ne(scimGroups.id, selfId) : undefined,
      ),
    )
    .limit(1);
  return clash !== undefined;
}

export async function insertGroup(tx: Tx, values: typeof scimGroups.$inferInsert): Promise<ScimGroupRow> {
  const [created] = await tx.insert(scimGroups).values(values).returning();
  return created!;
}

export async function updateGroupRow(
  tx: Tx,
  id: string,
  set: Partial<typeof scimGroups.$inferInsert>,
): Promise<ScimGroupRow> {
  const [updated] = await tx.update(scimGroups).set(set).where(eq(scimGroups.id, id)).returning();
  return updated!;
}

export async function deleteGroupRow(tx: Tx, id: string): Promise<void> {
  await tx.delete(scimGroups).where(eq(scimGroups.id, id));
}

export async function addGroupMembers(
  tx: Tx,
  partnerId: string,
  groupId: string,
  scimUserIds: string[],
): Promise<void> {
  await tx.insert(scimGroupMembers).values(scimUserIds.map((scimUserId) => ({ partnerId, groupId, scimUserId })));
}

export async function removeGroupMembers(tx: Tx, groupId: string, scimUserIds: string[]): Promise<void> {
  await tx
    .delete(scimGroupMembers)
    .where(and(eq(scimGroupMembers.groupId, groupId), inArray(scimGroupMembers.scimUserId, scimUserIds)));
}

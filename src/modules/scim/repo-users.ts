// SCIM provisioning: the SQL of provisioned users (Users resource), limited to the token's tenant.
import { and, asc, eq, inArray, ne, or, sql, type SQL } from 'drizzle-orm';
import type { Executor, Tx } from '../../db/connect.js';
import { scimGroupMembers, scimGroups, scimUsers } from '../../db/schema/index.js';
import type { Target } from '../../db/tenant-filter.js';
import { filterToSql, type FilterTarget } from './repo-filter.js';
import { inTenant } from './repo-tenant.js';
import { USER_SCHEMA } from './schemas.js';

export type ScimUserRow = typeof scimUsers.$inferSelect;
export type { ScimEmail } from '../../db/schema/index.js';

const emailElements = (cond: SQL) =>
  sql`exists (select 1 from jsonb_array_elements(${scimUsers.emails}) e where ${cond})`;
export const USER_FILTER: FilterTarget = {
  schema: USER_SCHEMA,
  columns: {
    id: { sql: sql`${scimUsers.id}`, kind: 'id' },
    username: { sql: sql`${scimUsers.userName}`, kind: 'ci' },
    externalid: { sql: sql`${scimUsers.externalId}`, kind: 'string' },
    displayname: { sql: sql`${scimUsers.displayName}`, kind: 'ci' },
    'name.givenname': { sql: sql`${scimUsers.givenName}`, kind: 'ci' },
    'name.familyname': { sql: sql`${scimUsers.familyName}`, kind: 'ci' },
    active: { sql: sql`${scimUsers.active}`, kind: 'boolean' },
    'meta.created': { sql: sql`${scimUsers.createdAt}`, kind: 'date' },
    'meta.lastmodified': { sql: sql`${scimUsers.updatedAt}`, kind: 'date' },
  },
  multi: {
    emails: {
      exists: emailElements,
      primary: 'value',
      sub: {
        value: { sql: sql`(e->>'value')`, kind: 'ci' },
        type: { sql: sql`(e->>'type')`, kind: 'ci' },
        primary: { sql: sql`(e->>'primary')::boolean`, kind: 'boolean' },
      },
    },
  },
};

/** The groups of each user, by group name. */
export const groupsOfUsers = (db: Executor, ids: string[]) =>
  db
    .select({ userId: scimGroupMembers.scimUserId, id: scimGroups.id, displayName: scimGroups.displayName })
    .from(scimGroupMembers)
    .innerJoin(scimGroups, eq(scimGroups.id, scimGroupMembers.groupId))
    .where(inArray(scimGroupMembers.scimUserId, ids))
    .orderBy(asc(scimGroups.displayName));

export async function findUserRow(db: Executor, t: Target, id: string): Promise<ScimUserRow | undefined> {
  const [row] = await db
    .select()
    .from(scimUsers)
    .where(and(eq(scimUsers.id, id), inTenant(scimUsers, t)))
    .limit(1);
  return row;
}

/** The tenant's users matching the SCIM filter: how many, and `count` of them from `offset` (oldest first). */
export async function pageOfUsers(db: Executor, t: Target, filter: string | undefined, count: number, offset: number) {
  const where = and(inTenant(scimUsers, t), filter ? filterToSql(USER_FILTER, filter) : undefined);
  const [total] = await db.select({ n: sql<number>`count(*)::int` }).from(scimUsers).where(where);
  const rows =
    count === 0
      ? []
      : await db
          .select()
          .from(scimUsers)
          .where(where)
          .orderBy(asc(scimUsers.createdAt), asc(scimUsers.id))
          .limit(count)
          .offset(offset);
  return { total: Number(total?.n ?? 0), rows };
}

/** Another user of the tenant with this userName (case-insensitive) or externalId. */
export async function userClash(
  tx: Tx,
  t: Target,
  f: { userName: string; externalId: string | null },
  selfId?: string,
) {
  const [clash] = await tx
    .select({ userName: scimUsers.userName, externalId: scimUsers.externalId })
    .from(scimUsers)
    .where(
      and(
        inTenant(scimUsers, t),
        selfId ? ne(scimUsers.id, selfId) : undefined,
        or(
          sql`lower(${scimUsers.userName}) = lower(${f.userName})`,
          f.externalId !== null ? eq(scimUsers.externalId, f.externalId) : undefined,
        ),
      ),
    )
    .limit(1);
  return clash;
}

export async function insertScimUser(tx: Tx, values: typeof scimUsers.$inferInsert): Promise<ScimUserRow> {
  const [created] = await tx.insert(scimUsers).values(values).returning();
  return created!;
}

export async function updateScimUser(
  tx: Tx,
  id: string,
  set: Partial<typeof scimUsers.$inferInsert>,
): Promise<ScimUserRow> {
  const [updated] = await tx.update(scimUsers).set(set).where(eq(scimUsers.id, id)).returning();
  return updated!;
}

export async function deleteScimUser(tx: Tx, id: string): Promise<void> {
  await tx.delete(scimUsers).where(eq(scimUsers.id, id));
}

export async function setSuspended(tx: Tx, scimUserId: string, suspended: ScimUserRow['suspended']): Promise<void> {
  await tx.update(scimUsers).set({ suspended }).where(eq(scimUsers.id, scimUserId));
}

export const scimUsersByIds = (tx: Tx, ids: string[]) => tx.select().from(scimUsers).where(inArray(scimUsers.id, ids));

/** Which of the ids are users of the tenant. */
export const tenantUserIds = (tx: Tx, t: Target, ids: string[]) =>
  tx
    .select({ id: scimUsers.id })
    .from(scimUsers)
    .where(and(inTenant(scimUsers, t), inArray(scimUsers.id, ids)));

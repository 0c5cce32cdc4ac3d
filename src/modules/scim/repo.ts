// SCIM provisioning: the SQL of tokens, provisioned users and groups, and the memberships they drive. Every resource
// query is limited to the token's tenant (ownedBy); every write of a tenant takes the tenant's lock first.
import { and, asc, desc, eq, inArray, isNotNull, isNull, lt, ne, or, sql, type SQL } from 'drizzle-orm';
import type { Db, Executor, Tx } from '../../db/connect.js';
import {
  organizations,
  organizationUsers,
  partners,
  partnerUsers,
  roles,
  scimGroupMembers,
  scimGroups,
  scimTokens,
  scimUsers,
  sessions,
  users,
} from '../../db/schema/index.js';
import { ownedBy, type Target } from '../../db/tenant-scope.js';
import { filterToSql, type FilterTarget } from './repo-filter.js';
import { GROUP_SCHEMA, USER_SCHEMA } from './schemas.js';

export type ScimUserRow = typeof scimUsers.$inferSelect;
export type ScimGroupRow = typeof scimGroups.$inferSelect;
export type ScimTokenRow = typeof scimTokens.$inferSelect;
export type { ScimEmail } from '../../db/schema/index.js';

type TenantTable = { partnerId: any; orgId: any };
const inTenant = (table: TenantTable, t: Target): SQL => and(eq(table.partnerId, t.partnerId), ownedBy(t, table))!;

/** Every SCIM write of a tenant in turn: a retried create sees the first one's row (409 uniqueness), never a race. */
export const lockTenant = (tx: Tx, t: Target) =>
  tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`scim:${t.partnerId}:${t.orgId ?? ''}`}, 0))`);

// ---- Tokens

export const roleNames = (db: Executor, ids: string[]) =>
  db
    .select({ id: roles.id, name: roles.name })
    .from(roles)
    .where(
      sql`${roles.id} in (${sql.join(
        ids.map((i) => sql`${i}`),
        sql`, `,
      )})`,
    );

export async function insertScimToken(tx: Tx, values: typeof scimTokens.$inferInsert): Promise<ScimTokenRow> {
  const [created] = await tx.insert(scimTokens).values(values).returning();
  return created!;
}

/** One page (plus one row) of the target's tokens, newest first. */
export function listScimTokenRows(
  db: Executor,
  target: Target,
  q: { after: { c: string; id: string } | null; limit: number },
) {
  const after = q.after;
  return db
    .select()
    .from(scimTokens)
    .where(
      and(
        inTenant(scimTokens, target),
        after ? sql`(${scimTokens.createdAt}, ${scimTokens.id}) < (${new Date(after.c)}, ${after.id})` : undefined,
      ),
    )
    .orderBy(desc(scimTokens.createdAt), desc(scimTokens.id))
    .limit(q.limit + 1);
}

export async function revokeScimTokenRow(tx: Tx, id: string, now: Date): Promise<ScimTokenRow> {
  const [revoked] = await tx.update(scimTokens).set({ revokedAt: now }).where(eq(scimTokens.id, id)).returning();
  return revoked!;
}

export async function liveTokenByHash(db: Db, hash: string): Promise<ScimTokenRow | undefined> {
  const [row] = await db
    .select()
    .from(scimTokens)
    .where(and(eq(scimTokens.tokenHash, hash), isNull(scimTokens.revokedAt)))
    .limit(1);
  return row;
}

/** Last used now, unless written in the last minute (instances racing write once). */
export async function touchToken(db: Db, id: string, now: Date): Promise<void> {
  await db
    .update(scimTokens)
    .set({ lastUsedAt: now })
    .where(
      and(
        eq(scimTokens.id, id),
        or(isNull(scimTokens.lastUsedAt), lt(scimTokens.lastUsedAt, sql`${new Date(now.getTime() - 60_000)}`)),
      ),
    );
}

// ---- Accounts and memberships

export async function accountStatus(db: Executor, userId: string) {
  const [u] = await db.select({ status: users.status }).from(users).where(eq(users.id, userId));
  return u?.status;
}

export async function partnerMembership(db: Executor, partnerId: string, userId: string) {
  const [m] = await db
    .select()
    .from(partnerUsers)
    .where(and(eq(partnerUsers.partnerId, partnerId), eq(partnerUsers.userId, userId)));
  return m;
}

export async function orgMembership(db: Executor, orgId: string, userId: string) {
  const [m] = await db
    .select()
    .from(organizationUsers)
    .where(and(eq(organizationUsers.orgId, orgId), eq(organizationUsers.userId, userId)));
  return m;
}

export const insertPartnerMember = (tx: Tx, values: typeof partnerUsers.$inferInsert) =>
  tx.insert(partnerUsers).values(values);
export const insertOrgMember = (tx: Tx, values: typeof organizationUsers.$inferInsert) =>
  tx.insert(organizationUsers).values(values);

/** The sessions signed in to this tenant (another tenant's sessions are not this token's to end). */
export const sessionsInTenant = (target: Target) =>
  target.orgId
    ? eq(sessions.orgId, target.orgId)
    : and(eq(sessions.scope, 'partner'), eq(sessions.partnerId, target.partnerId));

/** The mapped roles of the user's groups, by lower-cased group name. */
export const mappedGroupRoles = (tx: Tx, scimUserId: string) =>
  tx
    .select({ roleId: scimGroups.roleId, name: scimGroups.displayName })
    .from(scimGroupMembers)
    .innerJoin(scimGroups, eq(scimGroups.id, scimGroupMembers.groupId))
    .innerJoin(roles, eq(roles.id, scimGroups.roleId))
    .where(and(eq(scimGroupMembers.scimUserId, scimUserId), isNotNull(scimGroups.roleId)))
    .orderBy(sql`lower(${scimGroups.displayName})`);

export async function setSuspended(tx: Tx, scimUserId: string, suspended: ScimUserRow['suspended']): Promise<void> {
  await tx.update(scimUsers).set({ suspended }).where(eq(scimUsers.id, scimUserId));
}

export async function accountByEmail(tx: Tx, address: string) {
  const [account] = await tx.select().from(users).where(sql`lower(${users.email}) = ${address}`).limit(1);
  return account;
}

export async function accountById(tx: Tx, id: string) {
  const [account] = await tx.select().from(users).where(eq(users.id, id));
  return account;
}

export async function accountIdByEmail(tx: Tx, address: string): Promise<string | undefined> {
  const [taken] = await tx.select({ id: users.id }).from(users).where(sql`lower(${users.email}) = ${address}`).limit(1);
  return taken?.id;
}

export async function insertAccount(tx: Tx, values: typeof users.$inferInsert) {
  const [account] = await tx.insert(users).values(values).returning();
  return account!;
}

export async function updateAccount(tx: Tx, id: string, set: Partial<typeof users.$inferInsert>): Promise<void> {
  await tx.update(users).set(set).where(eq(users.id, id));
}

/** Whether the account is a member anywhere or provisioned by another SCIM resource. */
export async function accountInUse(tx: Tx, userId: string): Promise<boolean> {
  const rest = await tx.execute(
    sql`select 1 from partner_users where user_id = ${userId} union all select 1 from organization_users where user_id = ${userId} union all select 1 from scim_users where user_id = ${userId} limit 1`,
  );
  return (rest as unknown as { rows: unknown[] }).rows.length > 0;
}

export async function deleteAccount(tx: Tx, id: string): Promise<void> {
  await tx.delete(users).where(eq(users.id, id));
}

/** Serialises invitations to one address. */
export const lockInvite = (tx: Tx, address: string) =>
  tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`invite:${address}`}, 0))`);

export async function tenantName(tx: Tx, t: Target): Promise<string | undefined> {
  if (t.orgId)
    return (await tx.select({ name: organizations.name }).from(organizations).where(eq(organizations.id, t.orgId)))[0]
      ?.name;
  return (await tx.select({ name: partners.name }).from(partners).where(eq(partners.id, t.partnerId)))[0]?.name;
}

// ---- Provisioned users

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

export const scimUsersByIds = (tx: Tx, ids: string[]) => tx.select().from(scimUsers).where(inArray(scimUsers.id, ids));

/** Which of the ids are users of the tenant. */
export const tenantUserIds = (tx: Tx, t: Target, ids: string[]) =>
  tx
    .select({ id: scimUsers.id })
    .from(scimUsers)
    .where(and(inTenant(scimUsers, t), inArray(scimUsers.id, ids)));

// ---- Groups

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

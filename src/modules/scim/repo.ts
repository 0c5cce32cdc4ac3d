// SCIM provisioning: the SQL of tokens, and of the accounts and memberships provisioning drives, here; users in
// repo-users.ts, groups in repo-groups.ts, the tenant condition and lock in repo-tenant.ts. Every resource query is
// limited to the token's tenant (ownedBy); every write of a tenant takes the tenant's lock first.
import { and, desc, eq, isNotNull, isNull, lt, or, sql } from 'drizzle-orm';
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
  sessions,
  users,
} from '../../db/schema/index.js';
import type { Target } from '../../db/tenant-filter.js';
import { inTenant } from './repo-tenant.js';
import { rowsOf } from '../../db/rows.js';

export * from './repo-groups.js';
export { lockTenant } from './repo-tenant.js';
export * from './repo-users.js';

export type ScimTokenRow = typeof scimTokens.$inferSelect;

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

/** An organisation's settings (the customer's controls over a token the partner made for it). */
export async function orgSettingsOf(db: Db, orgId: string): Promise<unknown> {
  const [row] = await db
    .select({ settings: organizations.settings })
    .from(organizations)
    .where(eq(organizations.id, orgId))
    .limit(1);
  return row?.settings;
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

export async function accountByEmail(tx: Tx, address: string) {
  const [account] = await tx.select().from(users).where(sql`lower(${users.email}) = ${address}`).limit(1);
  return account;
}

export async function accountById(tx: Tx, id: string) {
  const [account] = await tx.select().from(users).where(eq(users.id, id));
  return account;
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
  return rowsOf<unknown>(rest).length > 0;
}

export async function deleteAccount(tx: Tx, id: string): Promise<void> {
  await tx.delete(users).where(eq(users.id, id));
}

export async function tenantName(tx: Tx, t: Target): Promise<string | undefined> {
  if (t.orgId)
    return (await tx.select({ name: organizations.name }).from(organizations).where(eq(organizations.id, t.orgId)))[0]
      ?.name;
  return (await tx.select({ name: partners.name }).from(partners).where(eq(partners.id, t.partnerId)))[0]?.name;
}

// Users: the SQL of accounts and of memberships of a target scope (partner or organisation).
import { and, asc, eq, ilike, or, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../db/connect.js';
import { organizationUsers, organizations, partnerUsers, partners, roles, users } from '../../db/schema/index.js';
import { likePrefix } from '../../db/order.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import type { Target } from '../../db/tenant-filter.js';
import type { ActiveUserJson, UserRowJson } from './schemas.js';
import { asSystemWithin } from '../../db/row-security.js';
import { rowsOf } from '../../db/rows.js';

const base = {
  id: users.id,
  email: users.email,
  emailVerified: users.emailVerified,
  name: users.name,
  status: users.status,
  mfaEnabled: users.mfaEnabled,
  lastLoginAt: users.lastLoginAt,
  roleId: roles.id,
  roleName: roles.name,
};

type Row = { [K in keyof typeof base]: unknown } & {
  emailKey: string;
  membership: 'active' | 'pending';
  invitedAt: Date | null;
  orgAccess?: 'all' | 'selected' | 'none' | 'eligible' | 'all_except';
  orgIds?: string[];
  siteIds?: string[] | null;
  deviceGroupIds?: string[] | null;
};

/** A member of the scope as the repository reads it: the account's row, and whether the membership is accepted yet. */
export type MemberRecord = ActiveUserJson & { membership: 'active' | 'pending'; invitedAt: string | null };

/** A partner membership's org_ids mean what its orgAccess says: selected or eligible ones, or (all_except) excluded ones. */
export const orgAccessJson = (orgAccess: NonNullable<Row['orgAccess']>, orgIds: string[]) =>
  orgAccess === 'all_except'
    ? { orgAccess, orgIds: [], excludedOrgIds: orgIds }
    : { orgAccess, orgIds, excludedOrgIds: [] };

function toRecord(r: Row): MemberRecord {
  return {
    membership: r.membership,
    invitedAt: r.invitedAt ? r.invitedAt.toISOString() : null,
    id: r.id as string,
    email: r.email as string,
    emailVerified: r.emailVerified as boolean,
    name: r.name as string,
    status: r.status as ActiveUserJson['status'],
    mfaEnabled: r.mfaEnabled as boolean,
    lastLoginAt: r.lastLoginAt ? (r.lastLoginAt as Date).toISOString() : null,
    roleId: r.roleId as string,
    roleName: r.roleName as string,
    ...(r.orgAccess !== undefined ? orgAccessJson(r.orgAccess, r.orgIds ?? []) : {}),
    ...(r.siteIds !== undefined ? { siteIds: r.siteIds, deviceGroupIds: r.deviceGroupIds ?? null } : {}),
  };
}

/**
 * What the scope sees of a member: all of an accepted membership; of a pending one (an account that has not accepted
 * the offer) only its id, address, status and when it was invited, nothing of the account's profile.
 */
export function memberJson(m: MemberRecord): UserRowJson {
  if (m.membership === 'pending') return { id: m.id, email: m.email, status: 'pending', invitedAt: m.invitedAt };
  const { membership: _m, invitedAt: _i, ...row } = m;
  return row;
}

const cursorSchema = z.object({ e: z.string(), id: z.uuid() });

/**
 * Members of the scope, optionally only one user or only holders of one role; keyset-paginated by lower(email), then
 * user id. The sort key is on the membership row (email_key, kept by triggers), so a page at any depth is one index
 * scan of (scope id, email_key, user_id) in page order.
 */
export async function listMembers(
  db: Executor,
  target: Target,
  q: { limit: number; cursor?: string; search?: string; userId?: string; roleId?: string },
): Promise<{ data: UserRowJson[]; nextCursor: string | null }> {
  const page = await listMemberRecords(db, target, q);
  return { data: page.data.map(memberJson), nextCursor: page.nextCursor };
}

async function listMemberRecords(
  db: Executor,
  target: Target,
  q: { limit: number; cursor?: string; search?: string; userId?: string; roleId?: string },
): Promise<{ data: MemberRecord[]; nextCursor: string | null }> {
  const after = decodeCursor(q.cursor, cursorSchema);
  const m =
    target.kind === 'partner'
      ? { key: partnerUsers.emailKey, userId: partnerUsers.userId, status: partnerUsers.status }
      : { key: organizationUsers.emailKey, userId: organizationUsers.userId, status: organizationUsers.status };
  const filters = and(
    q.userId ? eq(users.id, q.userId) : undefined,
    // A pending member holds no role until it accepts.
    q.roleId ? eq(m.status, 'active') : undefined,
    // A pending member's name is its account's, not the scope's: it is not searched.
    q.search
      ? or(
          ilike(users.email, likePrefix(q.search)),
          and(eq(m.status, 'active'), ilike(users.name, likePrefix(q.search))),
        )
      : undefined,
    // A row comparison: the index's own order, so the scan starts at the cursor.
    after ? sql`(${m.key}, ${m.userId}) > (${after.e}, ${after.id}::uuid)` : undefined,
  );
  const order = [asc(m.key), asc(m.userId)];
  const rows: Row[] =
    target.kind === 'partner'
      ? await db
          .select({
            ...base,
            emailKey: partnerUsers.emailKey,
            membership: partnerUsers.status,
            invitedAt: partnerUsers.invitedAt,
            orgAccess: partnerUsers.orgAccess,
            orgIds: partnerUsers.orgIds,
          })
          .from(partnerUsers)
          .innerJoin(users, eq(users.id, partnerUsers.userId))
          .innerJoin(roles, eq(roles.id, partnerUsers.roleId))
          .where(
            and(
              eq(partnerUsers.partnerId, target.partnerId),
              q.roleId ? eq(partnerUsers.roleId, q.roleId) : undefined,
              filters,
            ),
          )
          .orderBy(...order)
          .limit(q.limit + 1)
      : await db
          .select({
            ...base,
            emailKey: organizationUsers.emailKey,
            membership: organizationUsers.status,
            invitedAt: organizationUsers.invitedAt,
            siteIds: organizationUsers.siteIds,
            deviceGroupIds: organizationUsers.deviceGroupIds,
          })
          .from(organizationUsers)
          .innerJoin(users, eq(users.id, organizationUsers.userId))
          .innerJoin(roles, eq(roles.id, organizationUsers.roleId))
          .where(
            and(
              eq(organizationUsers.orgId, target.orgId),
              q.roleId ? eq(organizationUsers.roleId, q.roleId) : undefined,
              filters,
            ),
          )
          .orderBy(...order)
          .limit(q.limit + 1);
  const page = pageOf(rows, q.limit, (r) => ({ e: r.emailKey, id: r.id as string }));
  return { data: page.data.map(toRecord), nextCursor: page.nextCursor };
}

/** The member of the scope, accepted or pending (see memberJson for what the scope may be shown). */
export async function findMember(db: Executor, target: Target, userId: string): Promise<MemberRecord | null> {
  return (await listMemberRecords(db, target, { limit: 1, userId })).data[0] ?? null;
}

export async function deleteMembership(db: Executor, target: Target, userId: string): Promise<boolean> {
  const rows =
    target.kind === 'partner'
      ? await db
          .delete(partnerUsers)
          .where(and(eq(partnerUsers.partnerId, target.partnerId), eq(partnerUsers.userId, userId)))
          .returning({ id: partnerUsers.id })
      : await db
          .delete(organizationUsers)
          .where(and(eq(organizationUsers.orgId, target.orgId), eq(organizationUsers.userId, userId)))
          .returning({ id: organizationUsers.id });
  return rows.length > 0;
}

export async function setMembershipRole(db: Executor, target: Target, userId: string, roleId: string): Promise<void> {
  if (target.kind === 'partner')
    await db
      .update(partnerUsers)
      .set({ roleId })
      .where(and(eq(partnerUsers.partnerId, target.partnerId), eq(partnerUsers.userId, userId)));
  else
    await db
      .update(organizationUsers)
      .set({ roleId })
      .where(and(eq(organizationUsers.orgId, target.orgId), eq(organizationUsers.userId, userId)));
}

export type UserRow = typeof users.$inferSelect;

export async function userNameOf(tx: Executor, userId: string): Promise<string | undefined> {
  const [user] = await tx.select({ name: users.name }).from(users).where(eq(users.id, userId));
  return user?.name;
}

export async function mfaStateOf(tx: Executor, userId: string) {
  const [user] = await tx
    .select({ mfaMethod: users.mfaMethod, mfaEnabled: users.mfaEnabled })
    .from(users)
    .where(eq(users.id, userId));
  return user;
}

export async function updateUserRow(
  tx: Executor,
  userId: string,
  set: { name?: string; status?: 'active' | 'disabled'; updatedAt: Date },
): Promise<void> {
  await tx.update(users).set(set).where(eq(users.id, userId));
}

/** The caller's own name or avatar; the updated row (none: the account is gone). */
export async function updateProfileRow(
  tx: Executor,
  userId: string,
  set: { name?: string; avatarUrl?: string | null; updatedAt: Date },
): Promise<UserRow | undefined> {
  const [user] = await tx.update(users).set(set).where(eq(users.id, userId)).returning();
  return user;
}

export async function insertInvitedUser(tx: Executor, email: string, name: string): Promise<UserRow | undefined> {
  const [user] = await tx.insert(users).values({ email, name, status: 'invited' }).returning();
  return user;
}

export async function insertPartnerMembership(tx: Executor, values: typeof partnerUsers.$inferInsert): Promise<void> {
  await tx.insert(partnerUsers).values(values);
}

export async function insertOrgMembership(tx: Executor, values: typeof organizationUsers.$inferInsert): Promise<void> {
  await tx.insert(organizationUsers).values(values);
}

export async function organizationNameOf(tx: Executor, orgId: string): Promise<string | undefined> {
  return (await tx.select({ name: organizations.name }).from(organizations).where(eq(organizations.id, orgId)))[0]
    ?.name;
}

export async function partnerNameOf(tx: Executor, partnerId: string): Promise<string | undefined> {
  return (await tx.select({ name: partners.name }).from(partners).where(eq(partners.id, partnerId)))[0]?.name;
}

/** Locks the partner row (administrators demoting each other at once take turns). */
export async function lockPartnerRow(tx: Executor, partnerId: string): Promise<void> {
  await tx.execute(sql`select id from ${partners} where id = ${partnerId} for update`);
}

/** Active members of a partner with their roles. */
export function activePartnerMembers(tx: Executor, partnerId: string) {
  return tx
    .select({ userId: partnerUsers.userId, roleId: partnerUsers.roleId })
    .from(partnerUsers)
    .innerJoin(users, eq(users.id, partnerUsers.userId))
    .where(and(eq(partnerUsers.partnerId, partnerId), eq(partnerUsers.status, 'active'), eq(users.status, 'active')));
}

/** Every partner membership of an account, whatever the tenant (read in the system context `account-wide`). */
export function partnerMembershipsOf(tx: Executor, userId: string) {
  return asSystemWithin(tx, 'account-wide', () =>
    tx
      .select({ partnerId: partnerUsers.partnerId, roleId: partnerUsers.roleId })
      .from(partnerUsers)
      .where(and(eq(partnerUsers.userId, userId), eq(partnerUsers.status, 'active'))),
  );
}

/** Whether the account holds any membership, accepted or pending, in any tenant (read in the system context `account-wide`). */
export async function belongsAnywhere(tx: Executor, userId: string): Promise<boolean> {
  const res = await asSystemWithin(tx, 'account-wide', () =>
    tx.execute(
      sql`select 1 from partner_users where user_id = ${userId} union all select 1 from organization_users where user_id = ${userId} limit 1`,
    ),
  );
  return rowsOf<unknown>(res).length > 0;
}

/** How many of `ids` (distinct) are sites or device groups of the organisation. */
export async function countIdsInOrg(
  db: Executor,
  table: 'sites' | 'device_groups',
  orgId: string,
  ids: string[],
): Promise<number> {
  const res = await db.execute(
    sql`select count(*)::int as n from ${sql.identifier(table)} where org_id = ${orgId} and id in ${sql`(${sql.join(
      ids.map((i) => sql`${i}`),
      sql`, `,
    )})`}`,
  );
  return Number(rowsOf<{ n: number }>(res)[0]?.n ?? 0);
}

/** The partner membership's current access, for the audit record of a change. */
export async function membershipOrgAccess(tx: Executor, partnerId: string, userId: string) {
  const [row] = await tx
    .select({ orgAccess: partnerUsers.orgAccess, orgIds: partnerUsers.orgIds })
    .from(partnerUsers)
    .where(and(eq(partnerUsers.partnerId, partnerId), eq(partnerUsers.userId, userId)));
  return row ?? null;
}

export async function setMembershipOrgAccess(
  tx: Executor,
  partnerId: string,
  userId: string,
  access: { orgAccess: NonNullable<Row['orgAccess']>; orgIds: string[] },
  now: Date,
): Promise<void> {
  await tx
    .update(partnerUsers)
    .set({ ...access, updatedAt: now })
    .where(and(eq(partnerUsers.partnerId, partnerId), eq(partnerUsers.userId, userId)));
}

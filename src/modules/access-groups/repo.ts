// The SQL of access groups: the groups of a partner, their members (by hand, or through the partner-level SCIM
// group a group is mapped to), and the relationships they are attached to.
import { and, asc, eq, ilike, inArray, isNull, sql } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { likePrefix } from '../../db/order.js';
import { rowsOf } from '../../db/rows.js';
import {
  accessGroupMembers,
  accessGroups,
  organizations,
  partnerUsers,
  relationshipAccessGroups,
  relationships,
  scimGroups,
  users,
} from '../../db/schema/index.js';

export type AccessGroupRow = typeof accessGroups.$inferSelect;

export interface GroupDetails {
  scimGroupName: string | null;
  memberCount: number;
  relationships: { id: string; name: string; orgId: string; orgName: string; status: string }[];
}

export async function insertGroup(tx: Executor, values: typeof accessGroups.$inferInsert): Promise<AccessGroupRow> {
  const [row] = await tx.insert(accessGroups).values(values).returning();
  return row!;
}

export async function findGroup(db: Executor, partnerId: string, id: string): Promise<AccessGroupRow | undefined> {
  const [row] = await db
    .select()
    .from(accessGroups)
    .where(and(eq(accessGroups.id, id), eq(accessGroups.partnerId, partnerId)));
  return row;
}

export async function updateGroup(
  tx: Executor,
  id: string,
  set: Partial<typeof accessGroups.$inferInsert>,
): Promise<AccessGroupRow> {
  const [row] = await tx.update(accessGroups).set(set).where(eq(accessGroups.id, id)).returning();
  return row!;
}

export async function deleteGroup(tx: Executor, id: string): Promise<void> {
  await tx.delete(accessGroups).where(eq(accessGroups.id, id));
}

/** The partner's groups by name (then id), after the cursor, optionally by name prefix. */
export async function listGroupRows(
  db: Executor,
  partnerId: string,
  q: { search?: string; relationshipId?: string; after: { n: string; id: string } | null; limit: number },
): Promise<AccessGroupRow[]> {
  const g = accessGroups;
  const after = q.after ? sql`(lower(${g.name}), ${g.id}) > (${q.after.n}, ${q.after.id}::uuid)` : undefined;
  return db
    .select()
    .from(g)
    .where(
      and(
        eq(g.partnerId, partnerId),
        q.search ? ilike(g.name, likePrefix(q.search)) : undefined,
        q.relationshipId
          ? sql`exists (select 1 from relationship_access_groups rg where rg.group_id = ${g.id} and rg.relationship_id = ${q.relationshipId})`
          : undefined,
        after,
      ),
    )
    .orderBy(asc(sql`lower(${g.name})`), asc(g.id))
    .limit(q.limit + 1);
}

/** For each group: its SCIM group's name, its members by hand, the relationships it is attached to (with names). */
export async function groupDetails(db: Executor, ids: string[]): Promise<Map<string, GroupDetails>> {
  const out = new Map<string, GroupDetails>(
    ids.map((id) => [id, { scimGroupName: null, memberCount: 0, relationships: [] }]),
  );
  if (ids.length === 0) return out;
  const scim = await db
    .select({ id: accessGroups.id, name: scimGroups.displayName })
    .from(accessGroups)
    .innerJoin(scimGroups, eq(scimGroups.id, accessGroups.scimGroupId))
    .where(inArray(accessGroups.id, ids));
  for (const r of scim) out.get(r.id)!.scimGroupName = r.name;
  const counts = await db
    .select({ id: accessGroupMembers.groupId, n: sql<number>`count(*)::int` })
    .from(accessGroupMembers)
    .where(inArray(accessGroupMembers.groupId, ids))
    .groupBy(accessGroupMembers.groupId);
  for (const r of counts) out.get(r.id)!.memberCount = Number(r.n);
  const rels = await db
    .select({
      groupId: relationshipAccessGroups.groupId,
      id: relationships.id,
      name: relationships.name,
      orgId: relationships.orgId,
      orgName: organizations.name,
      status: relationships.status,
    })
    .from(relationshipAccessGroups)
    .innerJoin(relationships, eq(relationships.id, relationshipAccessGroups.relationshipId))
    .innerJoin(organizations, eq(organizations.id, relationships.orgId))
    .where(inArray(relationshipAccessGroups.groupId, ids))
    .orderBy(asc(relationships.name), asc(relationships.id));
  for (const { groupId, ...r } of rels) out.get(groupId)!.relationships.push(r);
  return out;
}

/** A person of the partner's staff (any membership status), with the account's name and address. */
export async function partnerStaff(db: Executor, partnerId: string, userId: string) {
  const [row] = await db
    .select({ id: users.id, name: users.name, email: users.email })
    .from(partnerUsers)
    .innerJoin(users, eq(users.id, partnerUsers.userId))
    .where(and(eq(partnerUsers.partnerId, partnerId), eq(partnerUsers.userId, userId)));
  return row;
}

/** Adds a member by hand; false when it already was one. */
export async function insertMember(tx: Executor, partnerId: string, groupId: string, userId: string, at: Date) {
  const rows = await tx
    .insert(accessGroupMembers)
    .values({ partnerId, groupId, userId, createdAt: at })
    .onConflictDoNothing()
    .returning({ userId: accessGroupMembers.userId });
  return rows.length > 0;
}

/** Removes a member added by hand; false when it was none. */
export async function deleteMember(tx: Executor, groupId: string, userId: string): Promise<boolean> {
  const rows = await tx
    .delete(accessGroupMembers)
    .where(and(eq(accessGroupMembers.groupId, groupId), eq(accessGroupMembers.userId, userId)))
    .returning({ userId: accessGroupMembers.userId });
  return rows.length > 0;
}

export interface MemberRow {
  user_id: string;
  name: string;
  email: string;
  source: 'direct' | 'scim';
  added_at: Date | string | null;
}

/**
 * The group's members in user-id order after `after`: those added by hand, and the active SCIM users of the mapped
 * SCIM group (a person in both is listed once, as added by hand).
 */
export async function listMemberRows(
  db: Executor,
  g: AccessGroupRow,
  after: string | null,
  limit: number,
): Promise<MemberRow[]> {
  const scim = g.scimGroupId
    ? sql`union all select su.user_id, 'scim' as source, null::timestamptz as added_at
            from scim_group_members sm join scim_users su on su.id = sm.scim_user_id
            where sm.group_id = ${g.scimGroupId} and su.active and su.org_id is null`
    : sql``;
  return rowsOf<MemberRow>(
    await db.execute(sql`
      select distinct on (m.user_id) m.user_id, u.name, u.email, m.source, m.added_at from (
        select gm.user_id, 'direct' as source, gm.created_at as added_at from access_group_members gm where gm.group_id = ${g.id}
        ${scim}
      ) m join users u on u.id = m.user_id
      ${after ? sql`where m.user_id > ${after}::uuid` : sql``}
      order by m.user_id, m.source limit ${limit + 1}`),
  );
}

/** The partner's relationship, or undefined. */
export async function partnerRelationship(db: Executor, partnerId: string, id: string) {
  const [row] = await db
    .select({
      id: relationships.id,
      name: relationships.name,
      orgId: relationships.orgId,
      status: relationships.status,
    })
    .from(relationships)
    .where(and(eq(relationships.id, id), eq(relationships.partnerId, partnerId)));
  return row;
}

/** Attaches; the relationship is bound to groups from then on (false when the group already was attached). */
export async function attachGroup(tx: Executor, partnerId: string, relationshipId: string, groupId: string, at: Date) {
  await tx
    .update(relationships)
    .set({ groupsRequired: true })
    .where(and(eq(relationships.id, relationshipId), eq(relationships.groupsRequired, false)));
  const rows = await tx
    .insert(relationshipAccessGroups)
    .values({ partnerId, relationshipId, groupId, createdAt: at })
    .onConflictDoNothing()
    .returning({ groupId: relationshipAccessGroups.groupId });
  return rows.length > 0;
}

export async function detachGroup(tx: Executor, relationshipId: string, groupId: string): Promise<boolean> {
  const rows = await tx
    .delete(relationshipAccessGroups)
    .where(
      and(eq(relationshipAccessGroups.relationshipId, relationshipId), eq(relationshipAccessGroups.groupId, groupId)),
    )
    .returning({ groupId: relationshipAccessGroups.groupId });
  return rows.length > 0;
}

/** A partner-level SCIM group of the partner (its members are partner staff), or undefined. */
export async function partnerScimGroup(db: Executor, partnerId: string, id: string) {
  const [row] = await db
    .select({ id: scimGroups.id, name: scimGroups.displayName })
    .from(scimGroups)
    .where(and(eq(scimGroups.id, id), eq(scimGroups.partnerId, partnerId), isNull(scimGroups.orgId)));
  return row;
}

/** The partner's partner-level SCIM groups a group may be mapped to, by name. */
export const partnerScimGroups = (db: Executor, partnerId: string) =>
  db
    .select({ id: scimGroups.id, name: scimGroups.displayName })
    .from(scimGroups)
    .where(and(eq(scimGroups.partnerId, partnerId), isNull(scimGroups.orgId)))
    .orderBy(asc(sql`lower(${scimGroups.displayName})`), asc(scimGroups.id))
    .limit(500);

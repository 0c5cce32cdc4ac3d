// Pending memberships: the SQL of an offer made to an existing account and of the account's answer to it.
import { and, eq, sql } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { organizationUsers, partnerUsers, users } from '../../db/schema/index.js';
import { rowsOf } from '../../db/rows.js';

export type OfferTarget = { kind: 'partner'; partnerId: string } | { kind: 'organization'; orgId: string };

/** A pending partner membership; its id (the invitation's id). */
export async function insertPendingPartnerMembership(
  tx: Executor,
  values: Omit<typeof partnerUsers.$inferInsert, 'status' | 'invitedAt'>,
  now: Date,
): Promise<string> {
  const [row] = await tx
    .insert(partnerUsers)
    .values({ ...values, status: 'pending', invitedAt: now })
    .returning({ id: partnerUsers.id });
  return row!.id;
}

/** A pending organisation membership; its id (the invitation's id). */
export async function insertPendingOrgMembership(
  tx: Executor,
  values: Omit<typeof organizationUsers.$inferInsert, 'status' | 'invitedAt'>,
  now: Date,
): Promise<string> {
  const [row] = await tx
    .insert(organizationUsers)
    .values({ ...values, status: 'pending', invitedAt: now })
    .returning({ id: organizationUsers.id });
  return row!.id;
}

/** Offered again: the pending membership's invitedAt moves to now; its id, or null when it is not pending there. */
export async function refreshPendingMembership(
  tx: Executor,
  target: OfferTarget,
  userId: string,
  now: Date,
): Promise<string | null> {
  const [row] =
    target.kind === 'partner'
      ? await tx
          .update(partnerUsers)
          .set({ invitedAt: now, updatedAt: now })
          .where(
            and(
              eq(partnerUsers.partnerId, target.partnerId),
              eq(partnerUsers.userId, userId),
              eq(partnerUsers.status, 'pending'),
            ),
          )
          .returning({ id: partnerUsers.id })
      : await tx
          .update(organizationUsers)
          .set({ invitedAt: now, updatedAt: now })
          .where(
            and(
              eq(organizationUsers.orgId, target.orgId),
              eq(organizationUsers.userId, userId),
              eq(organizationUsers.status, 'pending'),
            ),
          )
          .returning({ id: organizationUsers.id });
  return row?.id ?? null;
}

export interface PendingRow {
  id: string;
  kind: 'partner' | 'organization';
  partner_id: string;
  org_id: string | null;
  tenant_name: string;
  role_id: string;
  role_name: string;
  invited_at: Date | string | null;
  invited_by: string | null;
}

/**
 * The account's pending memberships (one of them with `id`), with the offering tenant's and role's names and the
 * inviter named by the latest link mailed for it. Newest first.
 */
export async function pendingMembershipsOf(db: Executor, userId: string, id?: string): Promise<PendingRow[]> {
  const only = id ? sql`and m.id = ${id}` : sql``;
  const inviter = sql`(select f.data ->> 'inviterName' from auth_flows f where f.user_id = m.user_id and f.kind = 'membership_invite'
      and f.data ->> 'membershipId' = m.id::text order by f.created_at desc limit 1)`;
  return rowsOf<PendingRow>(
    await db.execute(sql`
      select m.id, 'partner' as kind, m.partner_id, null::uuid as org_id, p.name as tenant_name, m.role_id,
             r.name as role_name, m.invited_at, ${inviter} as invited_by
        from partner_users m join partners p on p.id = m.partner_id join roles r on r.id = m.role_id
        where m.user_id = ${userId} and m.status = 'pending' ${only}
      union all
      select m.id, 'organization', o.partner_id, m.org_id, o.name, m.role_id, r.name, m.invited_at, ${inviter}
        from organization_users m join organizations o on o.id = m.org_id join roles r on r.id = m.role_id
        where m.user_id = ${userId} and m.status = 'pending' ${only}
      order by invited_at desc nulls last, id`),
  );
}

export interface Accepted {
  kind: 'partner' | 'organization';
  partnerId: string;
  orgId: string | null;
  roleId: string;
}

/**
 * The account's pending membership becomes active; null when there is none with this id (never was, someone else's,
 * already answered or withdrawn). One conditional statement per table: of two racing answers, one finds the row.
 */
export async function activatePendingMembership(
  tx: Executor,
  id: string,
  userId: string,
  now: Date,
): Promise<Accepted | null> {
  const [p] = await tx
    .update(partnerUsers)
    .set({ status: 'active', updatedAt: now })
    .where(and(eq(partnerUsers.id, id), eq(partnerUsers.userId, userId), eq(partnerUsers.status, 'pending')))
    .returning({ partnerId: partnerUsers.partnerId, roleId: partnerUsers.roleId });
  if (p) return { kind: 'partner', partnerId: p.partnerId, orgId: null, roleId: p.roleId };
  const [o] = await tx
    .update(organizationUsers)
    .set({ status: 'active', updatedAt: now })
    .where(
      and(eq(organizationUsers.id, id), eq(organizationUsers.userId, userId), eq(organizationUsers.status, 'pending')),
    )
    .returning({
      orgId: organizationUsers.orgId,
      partnerId: organizationUsers.partnerId,
      roleId: organizationUsers.roleId,
    });
  return o ? { kind: 'organization', partnerId: o.partnerId!, orgId: o.orgId, roleId: o.roleId } : null;
}

/** Deletes the account's pending membership; what it was, or null when there is none with this id. */
export async function deletePendingMembership(tx: Executor, id: string, userId: string): Promise<Accepted | null> {
  const [p] = await tx
    .delete(partnerUsers)
    .where(and(eq(partnerUsers.id, id), eq(partnerUsers.userId, userId), eq(partnerUsers.status, 'pending')))
    .returning({ partnerId: partnerUsers.partnerId, roleId: partnerUsers.roleId });
  if (p) return { kind: 'partner', partnerId: p.partnerId, orgId: null, roleId: p.roleId };
  const [o] = await tx
    .delete(organizationUsers)
    .where(
      and(eq(organizationUsers.id, id), eq(organizationUsers.userId, userId), eq(organizationUsers.status, 'pending')),
    )
    .returning({
      orgId: organizationUsers.orgId,
      partnerId: organizationUsers.partnerId,
      roleId: organizationUsers.roleId,
    });
  return o ? { kind: 'organization', partnerId: o.partnerId!, orgId: o.orgId, roleId: o.roleId } : null;
}

/** The account's address and whether it is proven. */
export async function addressOf(db: Executor, userId: string) {
  const [u] = await db
    .select({ email: users.email, emailVerified: users.emailVerified })
    .from(users)
    .where(eq(users.id, userId));
  return u;
}

/** The address is proven, if it is still the one the link was mailed to. */
export async function markAddressProven(tx: Executor, userId: string, email: string, now: Date): Promise<void> {
  await tx
    .update(users)
    .set({ emailVerified: true, updatedAt: now })
    .where(and(eq(users.id, userId), sql`lower(${users.email}) = lower(${email})`));
}

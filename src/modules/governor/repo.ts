// The governor module's SQL: the freeze of a partner or an organisation (a column of the tenant row, watched by every
// instance's session cache), the admins a freeze is mailed to, and co-sign requests.
import { and, desc, eq, sql } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { rowsOf } from '../../db/rows.js';
import { coSignRequests, type FreezeRecord, organizations, partners } from '../../db/schema/index.js';

import { ORG_ADMIN_ROLE_ID, PARTNER_ADMIN_ROLE_ID } from '../../access/catalog.js';

export type CoSignRow = typeof coSignRequests.$inferSelect;

/** The partner's freeze, locked for the change (undefined: no such partner). */
export async function partnerFreezeForUpdate(tx: Executor, partnerId: string) {
  const [row] = await tx
    .select({ id: partners.id, name: partners.name, freeze: partners.freeze })
    .from(partners)
    .where(eq(partners.id, partnerId))
    .for('update');
  return row;
}

export async function setPartnerFreeze(tx: Executor, partnerId: string, freeze: FreezeRecord | null, at: Date) {
  await tx.update(partners).set({ freeze, updatedAt: at }).where(eq(partners.id, partnerId));
}

/** The organisation's freeze, locked for the change. */
export async function orgFreezeForUpdate(tx: Executor, orgId: string) {
  const [row] = await tx
    .select({ id: organizations.id, name: organizations.name, freeze: organizations.freeze })
    .from(organizations)
    .where(eq(organizations.id, orgId))
    .for('update');
  return row;
}

export async function setOrgFreeze(tx: Executor, orgId: string, freeze: FreezeRecord | null, at: Date) {
  await tx.update(organizations).set({ freeze, updatedAt: at }).where(eq(organizations.id, orgId));
}

/** The organisations of the partner under a freeze of their own, by name (the partner's governor view). */
export async function frozenOrgs(ex: Executor, partnerId: string) {
  return ex
    .select({ id: organizations.id, name: organizations.name, freeze: organizations.freeze })
    .from(organizations)
    .where(and(eq(organizations.partnerId, partnerId), sql`${organizations.freeze} is not null`))
    .orderBy(organizations.name)
    .limit(500);
}

/**
 * Whom a partner's freeze is mailed to: its Partner Admins and the Organization Admins of its organisations (both
 * sides), at most 500 addresses.
 */
export async function adminsOfPartnerAndOrgs(tx: Executor, partnerId: string): Promise<string[]> {
  const res = await tx.execute(sql`
    select u.email from partner_users pu join users u on u.id = pu.user_id
      where pu.partner_id = ${partnerId} and pu.role_id = ${PARTNER_ADMIN_ROLE_ID} and pu.status = 'active' and u.status = 'active'
    union
    select u.email from organization_users ou join organizations o on o.id = ou.org_id join users u on u.id = ou.user_id
      where o.partner_id = ${partnerId} and ou.role_id = ${ORG_ADMIN_ROLE_ID} and ou.status = 'active' and u.status = 'active'
    order by 1 limit 500`);
  return rowsOf<{ email: string }>(res).map((r) => r.email);
}

export async function insertCoSign(tx: Executor, values: typeof coSignRequests.$inferInsert): Promise<CoSignRow> {
  const [row] = await tx.insert(coSignRequests).values(values).returning();
  return row!;
}

export async function coSignById(ex: Executor, id: string, partnerId: string): Promise<CoSignRow | undefined> {
  const [row] = await ex
    .select()
    .from(coSignRequests)
    .where(and(eq(coSignRequests.id, id), eq(coSignRequests.partnerId, partnerId)));
  return row;
}

/** Approves a pending request still within its time; undefined when it is not (approved already, or expired). */
export async function approveCoSignRow(
  tx: Executor,
  id: string,
  by: { userId: string; name: string },
  now: Date,
  unlockUntil: Date,
): Promise<CoSignRow | undefined> {
  const [row] = await tx
    .update(coSignRequests)
    .set({
      status: 'approved',
      approvedBy: by.userId,
      approvedByName: by.name,
      approvedAt: now,
      unlockExpiresAt: unlockUntil,
    })
    .where(
      and(eq(coSignRequests.id, id), eq(coSignRequests.status, 'pending'), sql`${coSignRequests.expiresAt} > ${now}`),
    )
    .returning();
  return row;
}

/** The partner's co-sign requests, newest first (the principal's own only, when given). */
export async function listCoSigns(ex: Executor, partnerId: string, principalId: string | null, limit: number) {
  return ex
    .select()
    .from(coSignRequests)
    .where(
      and(
        eq(coSignRequests.partnerId, partnerId),
        principalId ? eq(coSignRequests.principalId, principalId) : undefined,
      ),
    )
    .orderBy(desc(coSignRequests.createdAt))
    .limit(limit);
}

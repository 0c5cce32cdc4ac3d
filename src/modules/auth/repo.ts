// The auth module's SQL entry: users (invitations, registration, password removal) and the names of memberships;
// login facts, sessions, refresh rotation and signing keys are in its repo-*.ts parts, re-exported here. The only
// auth files that import drizzle-orm or the schema. Tenant conditions come from src/db/tenant-filter.ts.
import { and, eq, inArray, sql } from 'drizzle-orm';
import { PARTNER_ADMIN_ROLE_ID } from '../../access/catalog.js';
import type { Executor } from '../../db/connect.js';
import { organizations, partnerUsers, partners, roles, users } from '../../db/schema/index.js';
import type { SessionContext } from '../identity/index.js';

export * from './repo-login.js';
export * from './repo-refresh.js';
export * from './repo-sessions.js';
export * from './repo-signing-keys.js';

// ---- Users: invitations, registration, password removal

/** Whether the person is a member of the partner's own staff (an invitation link made before the mark was recorded). */
export async function isPartnerMember(db: Executor, partnerId: string, userId: string): Promise<boolean> {
  const [row] = await db
    .select({ id: partnerUsers.id })
    .from(partnerUsers)
    .where(and(eq(partnerUsers.partnerId, partnerId), eq(partnerUsers.userId, userId)))
    .limit(1);
  return Boolean(row);
}

export async function tenantNames(db: Executor, ctx: SessionContext) {
  const [p] = ctx.partnerId
    ? await db.select({ name: partners.name }).from(partners).where(eq(partners.id, ctx.partnerId))
    : [];
  const [o] = ctx.orgId
    ? await db.select({ name: organizations.name }).from(organizations).where(eq(organizations.id, ctx.orgId))
    : [];
  return { partnerName: p?.name, orgName: o?.name };
}

/** An invited user becomes active with a password; null when the user is no longer invited. */
export async function activateInvitedUser(
  tx: Executor,
  userId: string,
  input: { passwordHash: string; name: string; now: Date },
) {
  const [activated] = await tx
    .update(users)
    .set({
      status: 'active',
      passwordHash: input.passwordHash,
      passwordChangedAt: input.now,
      // The invitation was mailed to this address: opening it proves the address.
      emailVerified: true,
      name: input.name,
      updatedAt: input.now,
    })
    .where(and(eq(users.id, userId), eq(users.status, 'invited')))
    .returning();
  return activated ?? null;
}

export async function removePasswordHash(tx: Executor, userId: string, now: Date): Promise<void> {
  await tx
    .update(users)
    .set({
      passwordHash: null,
      passwordChangedAt: now,
      credentialVersion: sql`${users.credentialVersion} + 1`,
      updatedAt: now,
    })
    .where(eq(users.id, userId));
}

export async function emailTaken(tx: Executor, email: string): Promise<boolean> {
  const existing = await tx
    .select({ id: users.id })
    .from(users)
    .where(sql`lower(${users.email}) = lower(${email})`)
    .limit(1);
  return existing.length > 0;
}

export async function insertActiveUser(
  tx: Executor,
  input: { email: string; name: string; passwordHash: string },
  now: Date,
) {
  const [user] = await tx
    .insert(users)
    .values({
      email: input.email,
      name: input.name,
      passwordHash: input.passwordHash,
      status: 'active',
      passwordChangedAt: now,
    })
    .returning();
  return user!;
}

export async function partnerSlugTaken(tx: Executor, slug: string): Promise<boolean> {
  return (await tx.select({ id: partners.id }).from(partners).where(eq(partners.slug, slug)).limit(1)).length > 0;
}

export async function insertPartner(tx: Executor, name: string, slug: string) {
  const [partner] = await tx
    .insert(partners)
    .values({ name, slug })
    .returning({ id: partners.id, name: partners.name, slug: partners.slug });
  return partner!;
}

/** The partner's first administrator: Partner Admin over every organisation. */
export async function insertPartnerAdmin(tx: Executor, partnerId: string, userId: string, now: Date): Promise<void> {
  await tx.insert(partnerUsers).values({
    partnerId,
    userId,
    roleId: PARTNER_ADMIN_ROLE_ID,
    orgAccess: 'all',
    lastUsedAt: now,
  });
}

// ---- Names of the caller's memberships (POST /auth/switch-context)

const NAMED = { partners, organizations, roles } as const;

export const namesOf = async (db: Executor, kind: keyof typeof NAMED, ids: string[]) => {
  const table = NAMED[kind];
  return new Map(
    ids.length
      ? (await db.select({ id: table.id, name: table.name }).from(table).where(inArray(table.id, ids))).map((r) => [
          r.id,
          r.name,
        ])
      : [],
  );
};

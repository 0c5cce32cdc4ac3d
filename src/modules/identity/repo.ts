// The identity core's SQL entry: the user lookups of a sign-in and the stored password hash; the stored flows,
// sessions, memberships, known devices and the sign-in statements are in its repo-*.ts parts, re-exported here.
import { and, eq, ne, sql } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { users } from '../../db/schema/index.js';

export * from './repo-devices.js';
export * from './repo-flows.js';
export * from './repo-memberships.js';
export * from './repo-sessions.js';
export * from './repo-sign-in.js';

export type UserRow = typeof users.$inferSelect;

// ---- Users

export const findUserByEmail = async (db: Executor, email: string): Promise<UserRow | null> =>
  (await db.select().from(users).where(sql`lower(${users.email}) = lower(${email})`).limit(1))[0] ?? null;

export async function findUser(db: Executor, userId: string): Promise<UserRow | undefined> {
  const [user] = await db.select().from(users).where(eq(users.id, userId)).limit(1);
  return user;
}

/** Holds the user's row until the transaction ends: one credential or device change of an account at a time. */
export async function lockUser(tx: Executor, userId: string): Promise<void> {
  await tx.execute(sql`select id from users where id = ${userId} for update`);
}

/** A new password hash: failed sign-ins and lock cleared, the credential version moved on (pending flows void). */
export async function storePasswordHash(tx: Executor, userId: string, passwordHash: string, now: Date): Promise<void> {
  await tx
    .update(users)
    .set({
      passwordHash,
      passwordChangedAt: now,
      failedLoginCount: 0,
      lockedUntil: null,
      credentialVersion: sql`${users.credentialVersion} + 1`,
      updatedAt: now,
    })
    .where(eq(users.id, userId));
}

// ---- Addresses

/**
 * Serialises every write that claims an address (invitations, SCIM provisioning, a proven change of address): the
 * unique index on lower(email) would otherwise fail one of two racers with a database error.
 */
export async function lockAddress(tx: Executor, email: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`invite:${email.toLowerCase()}`}, 0))`);
}

/** Whether an account other than `userId` uses the address. */
export async function addressTakenByOther(tx: Executor, email: string, userId: string): Promise<boolean> {
  const [hit] = await tx
    .select({ id: users.id })
    .from(users)
    .where(and(sql`lower(${users.email}) = lower(${email})`, ne(users.id, userId)))
    .limit(1);
  return Boolean(hit);
}

/** The account's address proven (`email` given: it also becomes the login address). */
export async function markAddressProven(
  tx: Executor,
  userId: string,
  now: Date,
  email?: string,
): Promise<UserRow | undefined> {
  const [user] = await tx
    .update(users)
    .set({ emailVerified: true, updatedAt: now, ...(email !== undefined ? { email } : {}) })
    .where(eq(users.id, userId))
    .returning();
  return user;
}

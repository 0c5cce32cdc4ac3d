// The identity core's SQL entry: the user lookups of a sign-in and the stored password hash; the stored flows,
// sessions, memberships, known devices and the sign-in statements are in its repo-*.ts parts, re-exported here.
import { eq, sql } from 'drizzle-orm';
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

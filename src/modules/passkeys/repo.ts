// The SQL of the passkeys module: a user's WebAuthn credentials and the MFA state a new one turns on.
// Every statement is keyed by the user (or the credential) the caller has established.
import { and, desc, eq, sql } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { passkeys, users } from '../../db/schema/index.js';

export type PasskeyRow = typeof passkeys.$inferSelect;
export type UserRow = typeof users.$inferSelect;
type NewPasskey = Omit<typeof passkeys.$inferInsert, 'id' | 'createdAt' | 'lastUsedAt'>;

/** Locks the account row (two removals at once cannot each leave the other as the last factor). */
export async function lockUser(db: Executor, userId: string): Promise<void> {
  await db.execute(sql`select id from users where id = ${userId} for update`);
}

/** The user's passkeys, in no particular order (excludeCredentials, allowCredentials). */
export const passkeysOf = (db: Executor, userId: string): Promise<PasskeyRow[]> =>
  db.select().from(passkeys).where(eq(passkeys.userId, userId));

/** The user's passkeys, newest first (the list the user sees). */
export const passkeysNewestFirst = (db: Executor, userId: string): Promise<PasskeyRow[]> =>
  db.select().from(passkeys).where(eq(passkeys.userId, userId)).orderBy(desc(passkeys.createdAt));

/** The registered credential, of `userId` when given (null: any user's, for passwordless sign-in). */
export async function findByCredential(
  db: Executor,
  credentialId: string,
  userId: string | null,
): Promise<PasskeyRow | undefined> {
  const [key] = await db
    .select()
    .from(passkeys)
    .where(and(eq(passkeys.credentialId, credentialId), userId ? eq(passkeys.userId, userId) : undefined));
  return key;
}

export async function findOwnPasskey(db: Executor, userId: string, id: string): Promise<PasskeyRow | undefined> {
  const [row] = await db
    .select()
    .from(passkeys)
    .where(and(eq(passkeys.id, id), eq(passkeys.userId, userId)));
  return row;
}

/** Compare-and-set on the counter: false when another use moved it first. */
export async function moveCounter(
  db: Executor,
  key: Pick<PasskeyRow, 'id' | 'counter'>,
  next: { counter: number; backedUp: boolean },
  now: Date,
): Promise<boolean> {
  const moved = await db
    .update(passkeys)
    .set({ counter: next.counter, lastUsedAt: now, backedUp: next.backedUp })
    .where(and(eq(passkeys.id, key.id), eq(passkeys.counter, key.counter)))
    .returning({ id: passkeys.id });
  return moved.length > 0;
}

/** The new credential, or undefined when it is registered already. */
export async function insertPasskey(db: Executor, values: NewPasskey): Promise<PasskeyRow | undefined> {
  const [inserted] = await db.insert(passkeys).values(values).onConflictDoNothing().returning();
  return inserted;
}

/** MFA is on with `method` as the primary factor; pending sign-in challenges issued before are void. */
export async function enablePasskeyFactor(
  db: Executor,
  userId: string,
  method: NonNullable<UserRow['mfaMethod']>,
  now: Date,
): Promise<void> {
  await db
    .update(users)
    .set({
      mfaEnabled: true,
      mfaMethod: method,
      credentialVersion: sql`${users.credentialVersion} + 1`,
      updatedAt: now,
    })
    .where(eq(users.id, userId));
}

export async function renameOwnPasskey(
  db: Executor,
  userId: string,
  id: string,
  name: string,
): Promise<PasskeyRow | undefined> {
  const [row] = await db
    .update(passkeys)
    .set({ name })
    .where(and(eq(passkeys.id, id), eq(passkeys.userId, userId)))
    .returning();
  return row;
}

export async function deletePasskeyRow(db: Executor, id: string): Promise<void> {
  await db.delete(passkeys).where(eq(passkeys.id, id));
}

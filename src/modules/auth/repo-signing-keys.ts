// Ed25519 signing keys: created, rotated and listed (part of repo.ts).
import { desc, eq, sql } from 'drizzle-orm';
import type { Db, Executor } from '../../db/connect.js';
import { signingKeys } from '../../db/schema/index.js';

// ---- Ed25519 signing keys

export type SigningKeyRow = typeof signingKeys.$inferSelect;

/** Serialises key creation and rotation across instances (inside the caller's transaction). */
export async function lockSigningKeys(tx: Executor): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(7242002)`);
}

export async function hasActiveSigningKey(tx: Executor): Promise<boolean> {
  return (await tx.select().from(signingKeys).where(eq(signingKeys.active, true)).limit(1)).length > 0;
}

export async function insertSigningKey(
  tx: Executor,
  row: { kid: string; publicJwk: unknown; privateJwkEnc: string },
): Promise<void> {
  await tx.insert(signingKeys).values(row);
}

/** Retires the active key; its kid, or null when there was none. */
export async function retireActiveSigningKey(tx: Executor, now: Date): Promise<string | null> {
  const [old] = await tx
    .update(signingKeys)
    .set({ active: false, retiredAt: now })
    .where(eq(signingKeys.active, true))
    .returning({ kid: signingKeys.kid });
  return old?.kid ?? null;
}

export async function listSigningKeys(db: Db): Promise<SigningKeyRow[]> {
  return db.select().from(signingKeys).orderBy(desc(signingKeys.createdAt));
}

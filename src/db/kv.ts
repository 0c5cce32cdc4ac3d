// The statements of the database store of src/platform/kv.ts (used when REDIS_URL is not set): a log of rate-limit
// hits per key, serialised per key by a transaction-level advisory lock, and single-use markers with an expiry.
import { and, eq, lte, sql } from 'drizzle-orm';
import type { Db } from './connect.js';
import { kvEntries, rateLimitHits } from './schema/index.js';

/**
 * Records a hit at `at` unless `limit` hits since `since` are already logged: the count and the insert run under the
 * key's advisory lock, so they cannot interleave between instances. Full: the oldest hit of the window.
 */
export async function recordHitUnlessFull(
  db: Db,
  key: string,
  limit: number,
  since: Date,
  at: Date,
): Promise<{ full: true; oldest: Date } | { full: false; before: number }> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`);
    const rows = await tx
      .select({ at: rateLimitHits.at })
      .from(rateLimitHits)
      .where(and(eq(rateLimitHits.key, key), sql`${rateLimitHits.at} > ${since}`))
      .orderBy(rateLimitHits.at);
    if (rows.length >= limit) return { full: true as const, oldest: rows[0]!.at };
    await tx.insert(rateLimitHits).values({ key, at });
    return { full: false as const, before: rows.length };
  });
}

/** Hits of the key logged after `since`. */
export async function countHits(db: Db, key: string, since: Date): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(rateLimitHits)
    .where(and(eq(rateLimitHits.key, key), sql`${rateLimitHits.at} > ${since}`));
  return row?.n ?? 0;
}

/** Forgets the key's hits. */
export async function deleteHits(db: Db, key: string): Promise<void> {
  await db.delete(rateLimitHits).where(eq(rateLimitHits.key, key));
}

/** Sets the marker until `expiresAt` if absent or expired at `now`; true when this call set it. */
export async function claimMarker(db: Db, key: string, expiresAt: Date, now: Date): Promise<boolean> {
  const rows = await db
    .insert(kvEntries)
    .values({ key, value: true, expiresAt })
    .onConflictDoUpdate({
      target: kvEntries.key,
      set: { value: true, expiresAt },
      // Only an expired marker may be taken over.
      setWhere: lte(kvEntries.expiresAt, now),
    })
    .returning({ key: kvEntries.key });
  return rows.length === 1;
}

/** Drops hits logged at or before `hitsBefore` and markers expired at `now`. */
export async function sweepKv(db: Db, hitsBefore: Date, now: Date): Promise<void> {
  await db.delete(rateLimitHits).where(lte(rateLimitHits.at, hitsBefore));
  await db.delete(kvEntries).where(lte(kvEntries.expiresAt, now));
}

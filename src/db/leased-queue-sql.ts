// The claim statement of the durable queues in the database (the mail outbox, webhook deliveries; the mechanics are
// src/platform/leased-queue.ts): due rows are taken for a lease with FOR UPDATE SKIP LOCKED, so several instances never
// take the same row and a crashed instance's rows come back once its lease runs out.
import { and, inArray, isNull, lte, or, sql, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Db } from './connect.js';

/** The columns a leased table has: an id, when the row is due, whose lease holds it, how often it was tried. */
export type LeasedTable = PgTable & { id: PgColumn; notBefore: PgColumn; leasedUntil: PgColumn; attempts: PgColumn };

export interface ClaimOptions {
  now: Date;
  leaseMs: number;
  limit: number;
  /** What else makes a row claimable (not given up, the head of its line, ...). */
  where?: SQL;
  orderBy: SQL | PgColumn;
}

/**
 * Takes up to `limit` due rows for this instance for one lease and counts the attempt. Rows another instance holds
 * (locked now, or leased and not yet expired) are skipped.
 */
export async function claimDue<T extends LeasedTable>(db: Db, table: T, o: ClaimOptions): Promise<T['$inferSelect'][]> {
  const t = table as unknown as { id: PgColumn; notBefore: PgColumn; leasedUntil: PgColumn; attempts: PgColumn };
  const due = db
    .select({ id: t.id })
    .from(table as PgTable)
    .where(and(o.where, lte(t.notBefore, o.now), or(isNull(t.leasedUntil), lte(t.leasedUntil, o.now))))
    .orderBy(o.orderBy)
    .limit(o.limit)
    .for('update', { skipLocked: true });
  return (await db
    .update(table as PgTable)
    .set({ leasedUntil: new Date(o.now.getTime() + o.leaseMs), attempts: sql`${t.attempts} + 1` } as never)
    .where(inArray(t.id, due))
    .returning()) as T['$inferSelect'][];
}

// First run: the SQL of setup (whether a partner exists, the lock that lets one setup run at a time).
import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { partners } from '../../db/schema/index.js';
import { queryRows } from '../../db/rows.js';

export async function anyPartnerExists(db: Executor): Promise<boolean> {
  const [row] = await db.select({ id: partners.id }).from(partners).limit(1);
  return Boolean(row);
}

/** Takes the transaction-scoped advisory lock `key` if free; false when another transaction holds it. */
export async function tryXactLock(tx: Executor, key: number): Promise<boolean> {
  const [row] = await queryRows<{ locked: boolean }>(tx, sql`select pg_try_advisory_xact_lock(${key}) as locked`);
  return Boolean(row?.locked);
}

// How many migrations the database has applied (drizzle's journal table); 0 before the first migration.
import { sql } from 'drizzle-orm';
import type { Executor } from './connect.js';
import { queryRows } from './rows.js';

export async function appliedMigrationCount(db: Executor): Promise<number> {
  try {
    const [row] = await queryRows<{ n: number }>(db, sql`select count(*)::int as n from drizzle.__drizzle_migrations`);
    return row?.n ?? 0;
  } catch {
    return 0;
  }
}

// How many migrations the database has applied (drizzle's journal table); 0 before the first migration.
import { sql } from 'drizzle-orm';
import type { Executor } from './connect.js';

export async function appliedMigrationCount(db: Executor): Promise<number> {
  try {
    const r = (await db.execute(sql`select count(*)::int as n from drizzle.__drizzle_migrations`)) as unknown as
      | { rows?: { n: number }[] }
      | { n: number }[];
    return (Array.isArray(r) ? r : (r.rows ?? []))[0]?.n ?? 0;
  } catch {
    return 0;
  }
}

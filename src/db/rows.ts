// The rows of a raw statement (`db.execute(sql...)`). Drizzle types that answer by driver: node-postgres and PGlite
// both give `{ rows }`, and some drivers give the array itself; the caller names the row shape its SQL selects.
import type { SQL } from 'drizzle-orm';
import type { Executor } from './connect.js';

/** The rows of an `execute` result, as `T` (the columns the statement selects, with their SQL names). */
export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] } | null)?.rows ?? []) as T[];
}

/** Runs one raw statement and returns its rows as `T`. */
export async function queryRows<T>(db: Executor, statement: SQL): Promise<T[]> {
  return rowsOf<T>(await db.execute(statement));
}

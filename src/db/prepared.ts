// Named prepared statements for the hot path: parsed and planned once per connection, not on every request.
// PostgreSQL (node-postgres): the protocol's named statements (`{ name, text, values }`), prepared by the driver on
// each pooled connection the first time it runs there. PGlite: SQL `PREPARE` once per database, then `EXECUTE` through
// the simple protocol (PGlite's extended protocol cannot bind parameters to EXECUTE, and its unnamed statement is
// re-parsed and re-planned on every call); EXECUTE arguments are therefore literals, and only values that pass the
// statement's own argument check (UUIDs here) are ever written into one.
import type { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';
import type { Db } from './connect.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A statement argument: what it accepts and how it is written as a literal (PGlite EXECUTE). */
export interface PreparedArg<T> {
  type: string;
  check(v: T): boolean;
  literal(v: T): string;
}

export const uuidArg: PreparedArg<string> = {
  type: 'uuid',
  check: (v) => typeof v === 'string' && UUID.test(v),
  literal: (v) => `'${v.toLowerCase()}'::uuid`,
};

type Client = { kind: 'pg'; pool: pg.Pool } | { kind: 'pglite'; pglite: PGlite };

function clientOf(db: Db): Client {
  const c = (db as unknown as { $client?: unknown }).$client as Record<string, unknown> | undefined;
  if (!c) throw new Error('prepared statements need a drizzle database with $client');
  if (typeof c.exec === 'function' && typeof c.transaction === 'function' && !('totalCount' in c)) return { kind: 'pglite', pglite: c as unknown as PGlite };
  return { kind: 'pg', pool: c as unknown as pg.Pool };
}

/** Databases (PGlite instances) on which a statement name has been prepared. */
const preparedOn = new WeakMap<object, Map<string, Promise<void>>>();

/**
 * A statement with a fixed name and text, run with positional arguments ($1, $2, ...). Returns the rows as the
 * driver parses them (timestamps may be Date or string, arrays arrays or text: callers read them defensively).
 * Never inside a transaction: it runs on the database handle, not a transaction's.
 */
export function preparedStatement<Row, A extends unknown[]>(name: string, text: string, args: { [K in keyof A]: PreparedArg<A[K]> }) {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bad statement name ${name}`);
  return async (db: Db, ...values: A): Promise<Row[] | null> => {
    for (let i = 0; i < args.length; i++) if (!args[i]!.check(values[i] as never)) return null;
    const client = clientOf(db);
    if (client.kind === 'pg') {
      const config: pg.QueryConfig = { name, text, values: values as unknown[] };
      const result = await client.pool.query(config);
      return result.rows as Row[];
    }
    const pglite = client.pglite;
    let names = preparedOn.get(pglite);
    if (!names) preparedOn.set(pglite, (names = new Map()));
    let ready = names.get(name);
    if (!ready) {
      ready = pglite.exec(`prepare ${name} (${args.map((a) => a.type).join(', ')}) as ${text}`).then(() => undefined);
      names.set(name, ready);
      ready.catch(() => names.delete(name));
    }
    await ready;
    const call = `execute ${name} (${args.map((a, i) => a.literal(values[i] as never)).join(', ')})`;
    const results = await pglite.exec(call);
    return (results[0]?.rows ?? []) as Row[];
  };
}

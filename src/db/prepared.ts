// Named prepared statements for the hot path: parsed and planned once per connection, not on every request.
// PostgreSQL (node-postgres): the protocol's named statements (`{ name, text, values }`), prepared by the driver on
// each pooled connection the first time it runs there. PGlite: SQL `PREPARE` once per database, then `EXECUTE` through
// the simple protocol (PGlite's extended protocol cannot bind parameters to EXECUTE, and its unnamed statement is
// re-parsed and re-planned on every call); EXECUTE arguments are therefore literals, and only values that pass the
// statement's own argument check are ever written into one (UUIDs, timestamps, booleans; text as hex only).
import type { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';
import type { Db, Tx } from './connect.js';

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

/**
 * Text, written for PGlite as the hex of its UTF-8 bytes (`convert_from(decode('…', 'hex'), 'UTF8')`): the literal holds
 * only hex digits whatever the value, so no quoting rule or server setting can turn a value into SQL.
 */
export const textArg: PreparedArg<string> = {
  type: 'text',
  check: (v) => typeof v === 'string' && v.length <= 4096 && !v.includes('\0'),
  literal: (v) => `convert_from(decode('${Buffer.from(v, 'utf8').toString('hex')}', 'hex'), 'UTF8')`,
};

export const boolArg: PreparedArg<boolean> = {
  type: 'boolean',
  check: (v) => typeof v === 'boolean',
  literal: (v) => (v ? 'true' : 'false'),
};

export const timestampArg: PreparedArg<Date> = {
  type: 'timestamptz',
  check: (v) => v instanceof Date && Number.isFinite(v.getTime()),
  literal: (v) => `'${v.toISOString()}'::timestamptz`,
};

/** The same argument, or SQL null. */
export const nullable = <T>(arg: PreparedArg<T>): PreparedArg<T | null> => ({
  type: arg.type,
  check: (v) => v === null || arg.check(v),
  literal: (v) => (v === null ? 'null' : arg.literal(v)),
});

type Client = { kind: 'pg'; pool: pg.Pool } | { kind: 'pglite'; pglite: PGlite };

function clientOf(db: Db): Client {
  const c = (db as unknown as { $client?: unknown }).$client as Record<string, unknown> | undefined;
  if (!c) throw new Error('prepared statements need a drizzle database with $client');
  if (typeof c.exec === 'function' && typeof c.transaction === 'function' && !('totalCount' in c))
    return { kind: 'pglite', pglite: c as unknown as PGlite };
  return { kind: 'pg', pool: c as unknown as pg.Pool };
}

/** Databases (PGlite instances) on which a statement name has been prepared. */
const preparedOn = new WeakMap<object, Map<string, Promise<void>>>();

/**
 * A statement with a fixed name and text, run with positional arguments ($1, $2, ...). Returns the rows as the
 * driver parses them (timestamps may be Date or string, arrays arrays or text: callers read them defensively).
 * Never inside a transaction: it runs on the database handle, not a transaction's.
 */
export function preparedStatement<Row, A extends unknown[]>(
  name: string,
  text: string,
  args: { [K in keyof A]: PreparedArg<A[K]> },
) {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bad statement name ${name}`);
  const valid = (values: A) => args.every((a, i) => a.check(values[i] as never));
  const executeCall = (values: A) =>
    `execute ${name} (${args.map((a, i) => a.literal(values[i] as never)).join(', ')})`;
  const prepare = (pglite: PGlite, run: (sql: string) => Promise<unknown>) => {
    let names = preparedOn.get(pglite);
    if (!names) preparedOn.set(pglite, (names = new Map()));
    let ready = names.get(name);
    if (!ready) {
      ready = run(`prepare ${name} (${args.map((a) => a.type).join(', ')}) as ${text}`).then(() => undefined);
      names.set(name, ready);
      ready.catch(() => names.delete(name));
    }
    return ready;
  };
  const run = async (db: Db, ...values: A): Promise<Row[] | null> => {
    if (!valid(values)) return null;
    const client = clientOf(db);
    if (client.kind === 'pg') {
      const config: pg.QueryConfig = { name, text, values: values as unknown[] };
      const result = await client.pool.query(config);
      return result.rows as Row[];
    }
    const pglite = client.pglite;
    await prepare(pglite, (q) => pglite.exec(q));
    const results = await pglite.exec(executeCall(values));
    return (results[0]?.rows ?? []) as Row[];
  };
  /**
   * The same statement inside a transaction: `tx` runs it, `db` (the database the transaction belongs to) says where it
   * is prepared. A PREPARE made inside a transaction outlives its rollback (prepared statements are not transactional).
   */
  const inTransaction = async (db: Db, tx: Tx, ...values: A): Promise<Row[] | null> => {
    if (!valid(values)) return null;
    const client = clientOf(db);
    const session = (tx as unknown as { session?: { client?: unknown } }).session?.client;
    if (!session) throw new Error('prepared statements in a transaction need a drizzle transaction');
    if (client.kind === 'pg') {
      const result = await (session as pg.PoolClient).query({ name, text, values: values as unknown[] });
      return result.rows as Row[];
    }
    const inTx = session as Pick<PGlite, 'exec'>;
    await prepare(client.pglite, (q) => inTx.exec(q));
    const results = await inTx.exec(executeCall(values));
    return (results[0]?.rows ?? []) as Row[];
  };
  return Object.assign(run, { inTransaction });
}

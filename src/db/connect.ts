import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync, openSync, closeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
// Each driver (PGlite, or pg) is imported by the function that opens it: a process loads only the one it uses.
import type { PGlite } from '@electric-sql/pglite';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { APP_ROLE, asSystem, currentRowContext, ensureContext, SET_CONTEXT_SQL } from './row-security.js';
import * as schema from './schema/index.js';

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
/** A transaction handle. Inside a transaction use only this handle, never the outer db (PGlite deadlocks). */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
/** Either: repositories take whichever they are given, so services decide the transaction boundary. */
export type Executor = Db | Tx;

/** Beside this file in src/db, or dist/migrations (copied by the build) when running compiled. */
function findMigrations(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const dir of [join(here, 'migrations'), join(here, '..', 'migrations')]) {
    if (existsSync(join(dir, 'meta', '_journal.json'))) return dir;
  }
  return join(here, 'migrations');
}
export const MIGRATIONS_DIR = findMigrations();

/**
 * The build's initdb'd empty data directory for this PGlite version (scripts/build-server.mjs), beside the compiled
 * code; null from src/ or when it is missing, and PGlite then runs initdb itself.
 */
function pgdataTemplate(): string | null {
  const pkg = join(dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')), '..', 'package.json');
  const name = `pgdata-${(JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version}.tgz`;
  const here = dirname(fileURLToPath(import.meta.url));
  return [join(here, name), join(here, '..', name)].find((p) => existsSync(p)) ?? null;
}

/**
 * PGlite runs PostgreSQL in this process: its default shared_buffers (128 MB) were ~110 MB of RSS from the start.
 * 32 MB holds a small deployment's working set; reads past it come from the operating system's page cache.
 */
const PGLITE_START_PARAMS = ['-c', 'shared_buffers=32MB'];

export interface Database {
  db: Db;
  kind: 'pglite' | 'postgres';
  ping(): Promise<void>;
  /** Applies the committed migrations. */
  migrate(): Promise<void>;
  /** Connection pool occupancy (PostgreSQL only). */
  poolStats?(): { total: number; idle: number; waiting: number };
  close(): Promise<void>;
}

export class DataDirLockedError extends Error {
  constructor(dir: string, pid: number) {
    super(
      `Data directory ${dir} is in use by process ${pid}; refusing to open it twice (PGlite has no lock of its own).`,
    );
  }
}

/** PGlite has no cross-process lock: two processes on one directory silently lose writes. */
function lockDataDir(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  const lockPath = join(dir, 'gatehouse.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lockPath, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(lockPath, 'utf8').trim());
      if (pid && pid !== process.pid && isAlive(pid)) throw new DataDirLockedError(dir, pid);
      rmSync(lockPath, { force: true }); // stale lock from a process that died
    }
  }
  throw new Error(`Could not lock ${dir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * PGlite answers a query inside the calling thread and resolves it through promise jobs only: a request's chain of
 * queries never gives the event loop an I/O turn, so concurrent requests are not even read until it has finished.
 * On PostgreSQL every query is a socket round trip and they are read at once. Two tabs refreshing the same token
 * then looked like a replay on PGlite (the twin was read after the winner's answer was ready) and killed the
 * session. Each statement and each transaction first gives the loop one turn, as a round trip to a server does.
 */
function yieldBeforeEachStatement(client: PGlite): void {
  const query = client.query.bind(client);
  const exec = client.exec.bind(client);
  const transaction = client.transaction.bind(client);
  Object.assign(client, {
    query: async (...args: Parameters<typeof query>) => (await nextTurn(), query(...args)),
    exec: async (...args: Parameters<typeof exec>) => (await nextTurn(), exec(...args)),
    transaction: async (...args: Parameters<typeof transaction>) => (await nextTurn(), transaction(...args)),
  });
}

export async function openPglite(dataDir: string | undefined, opts: OpenOptions = {}): Promise<Database> {
  const unlock = dataDir ? lockDataDir(dataDir) : () => {};
  try {
    const [{ PGlite }, { drizzle: drizzlePglite }, { migrate: migratePglite }] = await Promise.all([
      import('@electric-sql/pglite'),
      import('drizzle-orm/pglite'),
      import('drizzle-orm/pglite/migrator'),
    ]);
    const pgDir = dataDir ? join(dataDir, 'pg') : undefined;
    const template = pgDir && !existsSync(join(pgDir, 'PG_VERSION')) ? pgdataTemplate() : null;
    const client = await PGlite.create(pgDir, {
      startParams: [...PGlite.defaultStartParams, ...PGLITE_START_PARAMS],
      ...(template ? { loadDataDir: new Blob([readFileSync(template)]) } : {}),
    });
    yieldBeforeEachStatement(client);
    const rows = scopeEachStatement(client, opts.rowSecurity ?? true);
    const db = drizzlePglite(client, { schema }) as unknown as Db;
    return {
      db,
      kind: 'pglite',
      ping: async () => void (await client.query('select 1')),
      migrate: () => rows.asOwner(() => migratePglite(db as never, { migrationsFolder: MIGRATIONS_DIR })),
      close: async () => {
        await client.close();
        unlock();
      },
    };
  } catch (err) {
    unlock();
    throw err;
  }
}

export async function openPostgres(url: string, poolSize = 10, opts: OpenOptions = {}): Promise<Database> {
  const [{ default: pg }, { drizzle: drizzlePg }, { migrate: migratePg }] = await Promise.all([
    import('pg'),
    import('drizzle-orm/node-postgres'),
    import('drizzle-orm/node-postgres/migrator'),
  ]);
  // A server that does not answer fails the request (503, src/http/outage.ts) instead of queueing it for ever.
  const pool = new (scopedPoolClass(pg.Pool, opts.rowSecurity ?? true))({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: 5000,
  });
  pool.on('error', () => {}); // idle-client errors surface on the next query instead of crashing the process
  // A checked-out client (inside a transaction, between statements) also emits 'error' when the server goes away;
  // the statement that follows fails and is mapped to 503, so the event itself must not crash the process.
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = drizzlePg(pool, { schema }) as unknown as Db;
  return {
    db,
    kind: 'postgres',
    ping: async () => void (await pool.query('select 1')),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    // Several instances starting at once serialise on an advisory lock held by one dedicated connection.
    migrate: () =>
      pool.asOwner(async () => {
        const client = await pool.connect();
        try {
          await client.query('select pg_advisory_lock(7242001)');
          try {
            await migratePg(db as never, { migrationsFolder: MIGRATIONS_DIR });
          } finally {
            await client.query('select pg_advisory_unlock(7242001)');
          }
        } finally {
          client.release();
        }
      }),
    close: () => pool.end(),
  };
}

export async function openDatabase(opts: {
  databaseUrl?: string;
  dataDir: string;
  rowSecurity?: boolean;
}): Promise<Database> {
  const o = { rowSecurity: opts.rowSecurity ?? true };
  return opts.databaseUrl ? openPostgres(opts.databaseUrl, 10, o) : openPglite(opts.dataDir, o);
}

export interface OpenOptions {
  /**
   * Run every statement as `gatehouse_app` under the caller's row-security context (default). Off: statements run
   * as the login role in the system context, which bypasses the policies only when that role is a superuser; it
   * exists to measure what row security costs (bench/hot-path.ts).
   */
  rowSecurity?: boolean;
}

type PgPoolClass = typeof import('pg').Pool;
type PgClient = import('pg').PoolClient & { rowContext?: string };

/**
 * A pool whose every statement first brings its connection's row-security settings in step with the caller's
 * context (src/db/row-security.ts). Drizzle runs single statements through `query` and transactions on a client
 * from `connect`: both pass here. Migrations run as the owner, in the system context `process`.
 */
function scopedPoolClass(Pool: PgPoolClass, rowSecurity: boolean) {
  return class ScopedPool extends Pool {
    #owner = 0;
    async asOwner<T>(fn: () => Promise<T>): Promise<T> {
      this.#owner++;
      try {
        return await asSystem('process', fn);
      } finally {
        this.#owner--;
      }
    }
    // biome-ignore lint/suspicious/noExplicitAny: pg's overloads (promise and callback) are kept as they are
    override connect(...args: any[]): any {
      if (args.length) return (super.connect as (...a: unknown[]) => unknown)(...args);
      return (async () => {
        const client = (await super.connect()) as PgClient;
        try {
          const role = rowSecurity && !this.#owner ? APP_ROLE : null;
          await ensureContext(client, (v) => client.query(SET_CONTEXT_SQL, v), role);
        } catch (err) {
          client.release(err as Error);
          throw err;
        }
        return client;
      })();
    }
    // biome-ignore lint/suspicious/noExplicitAny: as above
    override query(...args: any[]): any {
      if (typeof args[args.length - 1] === 'function') return (super.query as (...a: unknown[]) => unknown)(...args);
      return (async () => {
        const client = (await this.connect()) as PgClient;
        try {
          const result = await client.query(args[0], args[1]);
          client.release();
          return result;
        } catch (err) {
          client.release(err as Error);
          throw err;
        }
      })();
    }
  };
}

/**
 * PGlite is one connection: the settings and the statement must run back to back, so each statement (and each
 * transaction, whole) takes a turn on a lock, sets the context when it differs from the connection's, then runs.
 */
function scopeEachStatement(client: PGlite, rowSecurity: boolean) {
  const query = client.query.bind(client);
  const exec = client.exec.bind(client);
  const transaction = client.transaction.bind(client);
  const conn: { rowContext?: string } = {};
  let owner = 0;
  let tail: Promise<unknown> = Promise.resolve();
  const turn = <T>(fn: () => Promise<T>): Promise<T> => {
    const ctx = currentRowContext();
    const run = async () => {
      await ensureContext(conn, (v) => query(SET_CONTEXT_SQL, v), rowSecurity && !owner ? APP_ROLE : null, ctx);
      return fn();
    };
    const result = tail.then(run, run);
    tail = result.catch(() => {});
    return result;
  };
  Object.assign(client, {
    query: (...args: Parameters<typeof query>) => turn(() => query(...args)),
    exec: (...args: Parameters<typeof exec>) => turn(() => exec(...args)),
    transaction: (...args: Parameters<typeof transaction>) => turn(() => transaction(...args)),
  });
  return {
    asOwner: async <T>(fn: () => Promise<T>): Promise<T> => {
      owner++;
      try {
        return await asSystem('process', fn);
      } finally {
        owner--;
      }
    },
  };
}

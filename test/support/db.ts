// A fresh, migrated database per test file: a copy of a PGlite template directory, or (DATABASE_URL set)
// a PostgreSQL database cloned from a migrated template database.
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { adminUrl } from './addresses.js';
import { MIGRATIONS_DIR, openPglite, openPostgres, type Database } from '../../src/db/connect.js';

/** Changes whenever a migration changes, so a stale template is never reused. */
export function migrationsFingerprint(): string {
  const h = createHash('sha256');
  for (const f of readdirSync(MIGRATIONS_DIR, { recursive: true }).map(String).sort()) {
    const p = join(MIGRATIONS_DIR, f);
    if (f.endsWith('.sql') || f.endsWith('.json')) h.update(f).update(readFileSync(p));
  }
  return h.digest('hex').slice(0, 12);
}

export const pgliteTemplateDir = () => join(tmpdir(), `gatehouse-template-${migrationsFingerprint()}`);
export const pgTemplateName = () => `gh_template_${migrationsFingerprint()}`;

export { adminUrl };

/** Called once per run (vitest globalSetup). */
export async function prepareTemplate(): Promise<void> {
  const baseUrl = process.env.DATABASE_URL;
  if (baseUrl) {
    const admin = new pg.Client({ connectionString: adminUrl(baseUrl) });
    await admin.connect();
    try {
      const name = pgTemplateName();
      const exists = await admin.query('select 1 from pg_database where datname = $1', [name]);
      if (exists.rowCount) return;
      const building = `${name}_build_${randomBytes(3).toString('hex')}`;
      await admin.query(`create database "${building}"`);
      const db = await openPostgres(adminUrl(baseUrl, building), 2);
      await db.migrate();
      await db.close();
      await admin.query(`alter database "${building}" rename to "${name}"`).catch(async () => {
        await admin.query(`drop database if exists "${building}"`); // another run built it meanwhile
      });
    } finally {
      await admin.end();
    }
    return;
  }
  const dir = pgliteTemplateDir();
  if (existsSync(join(dir, 'ready'))) return;
  // Built aside and renamed into place: two runs starting at once must not write one PGlite directory together
  // (that silently corrupts it, and every copy then aborts on open).
  const building = `${dir}.build-${process.pid}-${randomBytes(3).toString('hex')}`;
  const db = await openPglite(building);
  await db.migrate();
  await db.close();
  writeFileSync(join(building, 'ready'), new Date().toISOString()); // marks the template complete
  if (existsSync(join(dir, 'ready'))) return void rmSync(building, { recursive: true, force: true }); // another run won
  rmSync(dir, { recursive: true, force: true });
  try {
    renameSync(building, dir);
  } catch {
    rmSync(building, { recursive: true, force: true });
  }
}

export interface TestDatabase {
  database: Database;
  /** Connection string of this file's PostgreSQL database (undefined on PGlite). */
  url?: string;
  /** Data directory of this file's PGlite (undefined on PostgreSQL). */
  dataDir?: string;
  drop(): Promise<void>;
}

export async function freshDatabase(): Promise<TestDatabase> {
  const baseUrl = process.env.DATABASE_URL;
  // Off only to measure what row-level security costs (bench/hot-path.ts); the suite runs with it on.
  const rowSecurity = process.env.DATABASE_ROW_SECURITY !== 'off';
  if (baseUrl) {
    const name = `gh_test_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: adminUrl(baseUrl) });
    await admin.connect();
    await admin.query(`create database "${name}" template "${pgTemplateName()}"`);
    await admin.end();
    const url = adminUrl(baseUrl, name);
    const database = await openPostgres(url, 10, { rowSecurity });
    return {
      database,
      url,
      drop: async () => {
        await database.close().catch(() => {});
        const a = new pg.Client({ connectionString: adminUrl(baseUrl) });
        await a.connect();
        await a.query(`drop database if exists "${name}" with (force)`);
        await a.end();
      },
    };
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-test-'));
  cpSync(join(pgliteTemplateDir(), 'pg'), join(dataDir, 'pg'), { recursive: true });
  const database = await openPglite(dataDir, { rowSecurity });
  return {
    database,
    dataDir,
    drop: async () => {
      await database.close().catch(() => {});
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * ANALYZE as the owner: the application's role (gatehouse_app) owns no table, and ANALYZE skips tables it does not
 * own (PostgreSQL's autovacuum, which runs as a superuser, does it in production).
 */
export async function analyzeAsOwner(db: Database['db']): Promise<void> {
  const { sql } = await import('drizzle-orm');
  await db.transaction(async (tx) => {
    await tx.execute(sql`select set_config('role', 'none', true)`);
    await tx.execute(sql`analyze`);
  });
}

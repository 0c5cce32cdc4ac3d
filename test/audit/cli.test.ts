// `gatehouse audit verify` (src/cli/main.ts; also `npm run audit:verify`) as an operator runs it, in a child process against the test's
// database: exit 0 and a line per chain when every chain holds, exit 1 naming the broken record after a tamper.
// On PGlite the running app holds the data directory (gatehouse.lock), so the app is closed first.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite, type Database } from '../../src/db/connect.js';
import { startApp, type TestApp } from '../support/app.js';
import { createPartner } from '../support/fixtures.js';
import { appendRecords, asTamperer } from './seed.js';
import { runCli as runGatehouse } from '../cli/helpers.js';

let t: TestApp;
let partnerA: string;
let partnerB: string;
let idsA: string[] = [];
/** The database as the CLI will see it, once the app has let go of it. */
let database: Database | null = null;

function runCli(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    ENCRYPTION_KEY: t.env.ENCRYPTION_KEY!,
  };
  if (t.testDb.url) env.DATABASE_URL = t.testDb.url;
  else env.DATA_DIR = t.testDb.dataDir!;
  return runGatehouse(['audit', 'verify'], env);
}

beforeAll(async () => {
  t = await startApp();
  partnerA = (await createPartner(t)).id;
  partnerB = (await createPartner(t)).id;
  idsA = await appendRecords(t.deps.db, partnerA, 1200, (i) => ({ action: 'cli.test', details: { i } }));
  await appendRecords(t.deps.db, partnerB, 5, (i) => ({ action: 'cli.test', details: { i } }));
  await appendRecords(t.deps.db, null, 3, (i) => ({ action: 'cli.global', details: { i } }));
  if (t.testDb.dataDir) {
    // Let go of the PGlite directory (and its lock) without deleting it.
    await t.app.close();
    await t.deps.store.close();
    await t.testDb.database.close();
  }
});
afterAll(async () => {
  if (database && database !== t.testDb.database) await database.close();
  if (t?.testDb.dataDir)
    await import('node:fs').then((fs) => fs.rmSync(t.testDb.dataDir!, { recursive: true, force: true }));
  else await t?.close();
});

async function db(): Promise<Database> {
  database ??= t.testDb.dataDir ? await openPglite(t.testDb.dataDir) : t.testDb.database;
  return database;
}

describe('npm run audit:verify', () => {
  it('exits 0 with one line per chain (every partner and the global chain) when all hold', async () => {
    const res = await runCli();
    expect(res.code, res.stderr + res.stdout).toBe(0);
    expect(res.stdout).toContain(`ok      partner ${partnerA}: 1200 records`);
    expect(res.stdout).toContain(`ok      partner ${partnerB}: 5 records`);
    expect(res.stdout).toMatch(/^ok {6}global: \d+ records$/m);
    expect(res.stdout).toMatch(/^all \d+ chains intact/m);
  }, 180_000);

  it('exits 1 and names the first broken record of the tampered chain; the other chains still pass', async () => {
    const d = await db();
    await asTamperer(d.db, (tx) =>
      tx.execute(sql`update audit_logs set action = 'cli.forged' where id = ${idsA[1100]}`),
    );
    if (t.testDb.dataDir) {
      await d.close();
      database = null;
    }
    const res = await runCli();
    expect(res.code, res.stderr + res.stdout).toBe(1);
    expect(res.stdout).toContain(`BROKEN  partner ${partnerA}: 1200 records, first broken record ${idsA[1100]}`);
    expect(res.stdout).toContain(`ok      partner ${partnerB}: 5 records`);
    expect(res.stdout).toMatch(/^1 of \d+ chains broken/m);
  }, 180_000);

  it.runIf(!process.env.DATABASE_URL)(
    'refuses (exit 2) a PGlite directory another process holds, rather than opening it twice',
    async () => {
      const held = await openPglite(t.testDb.dataDir!);
      try {
        const res = await runCli();
        expect(res.code).toBe(2);
        expect(res.stderr).toMatch(/held by a running Gatehouse server \(process \d+\)/);
      } finally {
        await held.close();
      }
    },
    180_000,
  );
});

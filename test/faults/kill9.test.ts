// kill -9 of the service in the middle of work loses nothing committed and leaves no partial rows (PostgreSQL).
// The service runs as a child process (src/main.ts through tsx) on this test file's fresh database, so SIGKILL is a
// real one: no shutdown hook, no finally block, the database ends the connection and rolls back what was open.
import { spawn, type ChildProcess } from 'node:child_process';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contacts } from '../../src/db/schema/index.js';
import { freePort, startApp, type TestApp } from '../support/app.js';
import { ApiClient } from '../support/client.js';
import { createOrg, createPartner, signedInOrgMember } from '../support/fixtures.js';

const onPostgres = Boolean(process.env.DATABASE_URL);
let t: TestApp;

beforeAll(async () => {
  if (onPostgres) t = await startApp();
}, 120_000);
afterAll(async () => t?.close());

interface Child {
  proc: ChildProcess;
  origin: string;
}

/** Starts the service as its own process on this file's database; resolves once /readyz answers 200. */
async function spawnService(): Promise<Child> {
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: process.cwd(),
    // The same PUBLIC_URL as the in-process app: tokens it signs name that issuer.
    env: { ...process.env, ...t.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const until = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`service exited (${proc.exitCode}): ${stderr}`);
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status === 200).catch(() => false);
    if (ok) return { proc, origin };
    if (Date.now() > until) throw new Error(`service did not become ready: ${stderr}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function kill9(child: Child): Promise<void> {
  if (child.proc.exitCode !== null || child.proc.signalCode) return;
  await new Promise<void>((resolve) => {
    child.proc.once('exit', () => resolve());
    child.proc.kill('SIGKILL');
  });
}

/** Waits until a connection of this database (other than ours) has held a transaction open for `ms`. */
async function transactionOpenFor(ms: number, timeoutMs = 30_000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const rows = await t.deps.db.execute<{ n: number }>(
      sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and xact_start is not null and now() - xact_start > make_interval(secs => ${ms / 1000})`,
    );
    if (Number((rows as unknown as { rows: { n: number }[] }).rows[0]!.n) > 0) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

const csvOf = (n: number, tag: string) =>
  ['externalId,firstName,lastName,email', ...Array.from({ length: n }, (_, i) => `${tag}-${i},${tag}First${i},${tag}Last${i % 997},${tag}${i}@kill.example`)].join('\n');

describe.skipIf(!onPostgres)('kill -9 during work loses nothing committed and leaves no partial rows', () => {
  it('a contacts import killed mid-transaction: the earlier import is intact, none of the killed one\'s rows exist', async () => {
    const partner = await createPartner(t);
    const org = await createOrg(t, partner.id);
    const admin = await signedInOrgMember(t, org);
    const child = await spawnService();
    try {
      const api = new ApiClient(child.origin).withToken(admin.session.accessToken);
      const first = await api.request('POST', '/contacts/import', { rawBody: csvOf(25, 'kept'), contentType: 'text/csv', query: { orgId: org.id } });
      expect(first.status, first.text).toBe(200);

      const big = api.request('POST', '/contacts/import', { rawBody: csvOf(20_000, 'killed'), contentType: 'text/csv', query: { orgId: org.id } }).catch((err: Error) => err);
      expect(await transactionOpenFor(100), 'the import held a transaction open').toBe(true);
      await kill9(child);
      expect(await big).toBeInstanceOf(Error); // the connection died with the process: no answer
    } finally {
      await kill9(child);
    }
    // The server rolled the killed import back: what was committed before is all there is.
    const rows = await t.deps.db.select({ externalId: contacts.externalId }).from(contacts).where(eq(contacts.orgId, org.id));
    expect(rows).toHaveLength(25);
    expect(rows.every((r) => r.externalId!.startsWith('kept-'))).toBe(true);

    // And the service starts again on the same database and imports.
    const again = await spawnService();
    try {
      const api = new ApiClient(again.origin).withToken(admin.session.accessToken);
      const res = await api.request('POST', '/contacts/import', { rawBody: csvOf(10, 'after'), contentType: 'text/csv', query: { orgId: org.id } });
      expect(res.status, res.text).toBe(200);
    } finally {
      await kill9(again);
    }
    expect(await t.deps.db.select().from(contacts).where(eq(contacts.orgId, org.id))).toHaveLength(35);
  }, 180_000);
});

// `gatehouse setup`: the first partner and its administrator from the command line (automation), refused once a
// partner exists, audited as the `cli` actor; every command answers --help; a PGlite directory held by another
// process is refused with a clear message.
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogs, partnerUsers, users } from '../../src/db/schema/index.js';
import { openPglite } from '../../src/db/connect.js';
import { cliDatabase, rowsOf, STRONG, type CliDb } from './helpers.js';

let c: CliDb;
beforeAll(async () => {
  c = await cliDatabase();
});
afterAll(async () => c?.drop());

describe('gatehouse --help', () => {
  it('lists every command, and each command and group answers --help', async () => {
    const top = await c.run(['--help']);
    expect(top.code).toBe(0);
    for (const cmd of ['setup', 'users', 'keys', 'audit', 'db', 'config']) expect(top.stdout).toContain(cmd);
    const sub = await Promise.all(
      [
        ['setup'],
        ['users', 'reset-password'],
        ['users', 'reset-mfa'],
        ['users', 'disable'],
        ['keys', 'rotate-signing'],
        ['keys', 'rotate-encryption'],
        ['audit', 'verify'],
        ['audit', 'export'],
        ['db', 'migrate'],
        ['config', 'check'],
      ].map((a) => c.run([...a, '--help'])),
    );
    for (const r of sub) {
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/Usage: gatehouse /);
      expect(r.stdout).toContain('--json');
    }
  }, 180_000);
});

describe('gatehouse setup', () => {
  const args = [
    'setup',
    '--company',
    'Acme IT',
    '--email',
    'owner@acme.test',
    '--name',
    'Olive Owner',
    '--password-stdin',
    '--json',
  ];

  it('refuses a weak password (exit 1, weak_password) and creates nothing', async () => {
    const r = await c.run(args, { stdin: 'password\n' });
    expect(r.code).toBe(1);
    expect(r.json()).toMatchObject({ ok: false, code: 'weak_password' });
    expect(
      await c.inspect(
        async (d) => rowsOf<{ n: number }>(await d.db.execute(sql`select count(*)::int as n from partners`))[0]!.n,
      ),
    ).toBe(0);
  }, 60_000);

  it('creates the partner and its administrator (Partner Admin, all organisations), audited as the cli actor', async () => {
    const r = await c.run(args, { stdin: `${STRONG}\n` });
    expect(r.code, r.stderr).toBe(0);
    const out = r.json();
    expect(out).toMatchObject({
      ok: true,
      partner: { name: 'Acme IT', slug: 'acme-it' },
      admin: { email: 'owner@acme.test' },
      signInUrl: 'http://localhost:3999/login',
    });
    expect(r.stdout).not.toContain(STRONG);
    await c.inspect(async (d) => {
      const [u] = await d.db.select().from(users).where(eq(users.email, 'owner@acme.test'));
      expect(u!.status).toBe('active');
      expect(u!.passwordHash).toMatch(/^\$argon2id\$/);
      const [m] = await d.db.select().from(partnerUsers).where(eq(partnerUsers.userId, u!.id));
      expect(m).toMatchObject({ partnerId: out.partner.id, orgAccess: 'all' });
      const [rec] = await d.db.select().from(auditLogs).where(eq(auditLogs.action, 'partner.create'));
      expect(rec).toMatchObject({ partnerId: out.partner.id, actorUserId: null, actorEmail: null });
      expect(rec!.details).toMatchObject({ via: 'cli', actorType: 'cli' });
      expect(String((rec!.details as { operator: string }).operator)).toMatch(/@/);
    });
  }, 60_000);

  it('is refused once a partner exists (exit 1, setup_completed)', async () => {
    const r = await c.run(
      ['setup', '--company', 'Other', '--email', 'x@other.test', '--name', 'X', '--password-stdin'],
      { stdin: `${STRONG}\n` },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Setup is complete');
  }, 60_000);

  it('refuses a password on the command line: only --password-stdin or --password-env', async () => {
    const r = await c.run([
      'setup',
      '--company',
      'Other',
      '--email',
      'x@other.test',
      '--name',
      'X',
      '--password',
      STRONG,
    ]);
    expect(r.code).toBe(64);
  }, 60_000);
});

describe.runIf(!process.env.DATABASE_URL)('beside a running server on the same PGlite directory', () => {
  it('refuses with exit 2 and a message naming the cause and what to do', async () => {
    const held = await openPglite(c.env.DATA_DIR!);
    try {
      const r = await c.run(['users', 'disable', '--email', 'owner@acme.test']);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(
        /^gatehouse: the embedded database in .* is held by a running Gatehouse server \(process \d+\): stop the server first/,
      );
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    } finally {
      await held.close();
    }
  }, 60_000);
});

// Each operator command as a process on the test's database: users reset-password / reset-mfa / disable,
// keys rotate-signing / rotate-encryption, audit verify / export, db migrate, config check. Every change is
// audited as the `cli` actor; the rules of the API hold (strength, last administrator, sessions ended).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hash } from '@node-rs/argon2';
import { and, eq, sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogs, authFlows, partnerUsers, signingKeys, users } from '../../src/db/schema/index.js';
import { KeyRing } from '../../src/modules/auth/keys.js';
import { PARTNER_ADMIN_ROLE_ID } from '../../src/modules/roles/catalog.js';
import { parseKey, SecretBox } from '../../src/platform/secret-box.js';
import { adminUrl } from '../support/db.js';
import { cliDatabase, rowsOf, STRONG, type CliDb } from './helpers.js';

let c: CliDb;
let partnerId: string;
let techId: string;
const T = 300_000; // several CLI processes per test, each opening the database

beforeAll(async () => {
  c = await cliDatabase();
  const setup = await c.run(
    [
      'setup',
      '--company',
      'Ops Co',
      '--email',
      'owner@ops.test',
      '--name',
      'Owner',
      '--password-env',
      'ADMIN_PW',
      '--json',
    ],
    { env: { ADMIN_PW: STRONG } },
  );
  expect(setup.code, setup.stderr + setup.stdout).toBe(0);
  partnerId = setup.json().partner.id;
  const box = new SecretBox(parseKey(c.env.ENCRYPTION_KEY!));
  await c.inspect(async (d) => {
    const [tech] = await d.db
      .insert(users)
      .values({
        email: 'tech@ops.test',
        name: 'Tech',
        passwordHash: await hash('Old-password-for-tech-1'),
        status: 'active',
        mfaEnabled: true,
        mfaMethod: 'totp',
      })
      .returning();
    techId = tech!.id;
    await d.db
      .update(users)
      .set({ mfaSecret: box.seal('JBSWY3DPEHPK3PXP', `totp:${techId}`) })
      .where(eq(users.id, techId));
    await d.db
      .insert(partnerUsers)
      .values({ partnerId, userId: techId, roleId: PARTNER_ADMIN_ROLE_ID, orgAccess: 'all' });
  });
}, 300_000);
afterAll(async () => c?.drop());

const cliRecords = (action: string) =>
  c.inspect(async (d) =>
    (await d.db.select().from(auditLogs).where(eq(auditLogs.action, action))).filter(
      (r) => (r.details as { actorType?: string }).actorType === 'cli',
    ),
  );

describe('gatehouse users', () => {
  it(
    'reset-password without a password prints a single-use reset link (1 hour) and audits it',
    async () => {
      const r = await c.run(['users', 'reset-password', '--email', 'tech@ops.test', '--json']);
      expect(r.code, r.stderr).toBe(0);
      const out = r.json();
      expect(out.resetUrl).toMatch(/^http:\/\/localhost:3999\/reset-password\?token=[\w-]{40,}$/);
      expect(out.expiresInSeconds).toBe(3600);
      const flows = await c.inspect((d) =>
        d.db
          .select()
          .from(authFlows)
          .where(and(eq(authFlows.userId, techId), eq(authFlows.kind, 'password_reset'))),
      );
      expect(flows).toHaveLength(1);
      expect(await cliRecords('auth.password.reset_link')).toHaveLength(1);
    },
    T,
  );

  it(
    'reset-password --password-stdin refuses a weak password and sets a strong one (the link dies, sessions end)',
    async () => {
      const weak = await c.run(['users', 'reset-password', '--email', 'tech@ops.test', '--password-stdin'], {
        stdin: 'tech1234\n',
      });
      expect(weak.code).toBe(1);
      expect(weak.stderr).toMatch(/^gatehouse: .*(weak|guess|email)/i);
      const r = await c.run(['users', 'reset-password', '--email', 'tech@ops.test', '--password-stdin', '--json'], {
        stdin: `${STRONG}\n`,
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.json()).toMatchObject({ passwordSet: true, email: 'tech@ops.test' });
      await c.inspect(async (d) => {
        const [u] = await d.db.select().from(users).where(eq(users.id, techId));
        expect(u!.passwordHash).toMatch(/^\$argon2id\$/);
        const live = await d.db.execute(
          sql`select count(*)::int as n from auth_flows where user_id = ${techId} and kind = 'password_reset' and consumed_at is null`,
        );
        expect(rowsOf<{ n: number }>(live)[0]!.n).toBe(0);
      });
      expect(await cliRecords('auth.password.reset')).toHaveLength(1);
    },
    T,
  );

  it(
    'reset-mfa clears every factor',
    async () => {
      const r = await c.run(['users', 'reset-mfa', '--email', 'tech@ops.test', '--json']);
      expect(r.code, r.stderr).toBe(0);
      const [u] = await c.inspect((d) => d.db.select().from(users).where(eq(users.id, techId)));
      expect(u).toMatchObject({ mfaEnabled: false, mfaSecret: null });
      expect(await cliRecords('user.mfa_reset')).toHaveLength(1);
    },
    T,
  );

  it(
    'disable disables an account, and keeps the last administrator of a partner (exit 1, last_admin)',
    async () => {
      const r = await c.run(['users', 'disable', '--email', 'tech@ops.test', '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.json()).toMatchObject({ status: 'disabled' });
      const last = await c.run(['users', 'disable', '--email', 'owner@ops.test', '--json']);
      expect(last.code).toBe(1);
      expect(last.json()).toMatchObject({ ok: false, code: 'last_admin' });
      const unknown = await c.run(['users', 'reset-mfa', '--email', 'nobody@ops.test']);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('not found');
    },
    T,
  );
});

describe('gatehouse keys', () => {
  it(
    'rotate-signing makes a new active key and keeps the retired one published',
    async () => {
      const first = await c.run(['keys', 'rotate-signing', '--json']);
      expect(first.code, first.stderr).toBe(0);
      const second = await c.run(['keys', 'rotate-signing', '--json']);
      const out = second.json();
      expect(out.retiredKid).toBe(first.json().kid);
      await c.inspect(async (d) => {
        const rows = await d.db.select().from(signingKeys);
        expect(rows.filter((k) => k.active).map((k) => k.kid)).toEqual([out.kid]);
        const ring = new KeyRing(d.db, new SecretBox(parseKey(c.env.ENCRYPTION_KEY!)));
        await ring.init();
        const kids = ring.jwks().keys.map((k) => k.kid);
        expect(kids).toContain(out.kid);
        expect(kids).toContain(out.retiredKid);
        expect(ring.signingKey().kid).toBe(out.kid);
      });
      expect(await cliRecords('keys.signing.rotate')).toHaveLength(2);
    },
    T,
  );

  it(
    'rotate-encryption re-seals every sealed value under the new key, with progress, and a rerun has nothing left',
    async () => {
      const oldKey = c.env.ENCRYPTION_KEY!;
      const newKey = randomBytes(32).toString('base64');
      await c.inspect((d) =>
        d.db
          .update(users)
          .set({ mfaSecret: new SecretBox(parseKey(oldKey)).seal('JBSWY3DPEHPK3PXP', `totp:${techId}`) })
          .where(eq(users.id, techId)),
      );
      const refused = await c.run(['keys', 'rotate-encryption'], { env: { ENCRYPTION_KEY: newKey } });
      expect(refused.code).toBe(64);
      expect(refused.stderr).toContain('ENCRYPTION_KEYS_PREVIOUS');
      const env = { ENCRYPTION_KEY: newKey, ENCRYPTION_KEYS_PREVIOUS: oldKey };
      const r = await c.run(['keys', 'rotate-encryption', '--json'], { env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/re-sealing signing keys: 2\/2/);
      const out = r.json();
      expect(out).toMatchObject({ ok: true, failed: 0, resealed: 3 });
      const fresh = new SecretBox(parseKey(newKey));
      await c.inspect(async (d) => {
        const [u] = await d.db.select().from(users).where(eq(users.id, techId));
        expect(u!.mfaSecret!.split('.')[1]).toBe(fresh.currentKeyId);
        expect(fresh.open(u!.mfaSecret!, `totp:${techId}`)).toBe('JBSWY3DPEHPK3PXP');
        for (const k of await d.db.select().from(signingKeys))
          expect(fresh.open(k.privateJwkEnc, `signing-key:${k.kid}`)).toContain('"d"');
      });
      const again = await c.run(['keys', 'rotate-encryption', '--json'], { env });
      expect(again.json()).toMatchObject({ ok: true, resealed: 0, failed: 0 });
    },
    T,
  );
});

describe('gatehouse audit', () => {
  it(
    'verify reports every chain intact',
    async () => {
      const r = await c.run(['audit', 'verify', '--json']);
      expect(r.code, r.stderr).toBe(0);
      const out = r.json();
      expect(out.ok).toBe(true);
      expect(out.chains.map((x: { partnerId: string | null }) => x.partnerId)).toContain(partnerId);
    },
    T,
  );

  it(
    "export writes the partner's records as JSON lines to stdout, or CSV to a file, and is itself audited",
    async () => {
      const r = await c.run(['audit', 'export', '--partner', partnerId]);
      expect(r.code, r.stderr).toBe(0);
      const lines = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { action: string; partnerId: string });
      expect(lines[0]!.action).toBe('audit.export');
      expect(lines.map((l) => l.action)).toContain('partner.create');
      expect(lines.every((l) => l.partnerId === partnerId)).toBe(true);
      const dir = mkdtempSync(join(tmpdir(), 'gh-export-'));
      try {
        const f = await c.run([
          'audit',
          'export',
          '--partner',
          partnerId,
          '--format',
          'csv',
          '--output',
          join(dir, 'a.csv'),
          '--json',
        ]);
        expect(f.code, f.stderr).toBe(0);
        const csv = readFileSync(join(dir, 'a.csv'), 'utf8');
        expect(csv.split('\n')[0]).toContain('action');
        expect(csv).toContain('partner.create');
        expect(f.json().bytes).toBe(Buffer.byteLength(csv));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    T,
  );
});

describe('gatehouse db migrate', () => {
  it('applies every migration to an empty database, then has nothing to do', async () => {
    let env: Record<string, string>;
    let cleanup: () => Promise<void>;
    if (process.env.DATABASE_URL) {
      const name = `gh_cli_${randomBytes(5).toString('hex')}`;
      const admin = new pg.Client({ connectionString: adminUrl(process.env.DATABASE_URL) });
      await admin.connect();
      await admin.query(`create database "${name}"`);
      env = { DATABASE_URL: adminUrl(process.env.DATABASE_URL, name) };
      cleanup = async () => {
        await admin.query(`drop database if exists "${name}" with (force)`);
        await admin.end();
      };
    } else {
      const dir = mkdtempSync(join(tmpdir(), 'gh-migrate-'));
      env = { DATA_DIR: dir };
      cleanup = async () => rmSync(dir, { recursive: true, force: true });
    }
    try {
      const journal = JSON.parse(readFileSync('src/db/migrations/meta/_journal.json', 'utf8')) as {
        entries: unknown[];
      };
      const r = await c.run(['db', 'migrate', '--json'], { env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.json()).toMatchObject({ ok: true, applied: journal.entries.length, total: journal.entries.length });
      const again = await c.run(['db', 'migrate', '--json'], { env });
      expect(again.json()).toMatchObject({ ok: true, applied: 0 });
    } finally {
      await cleanup();
    }
  }, 300_000);
});

describe('gatehouse config check', () => {
  it(
    'prints the effective configuration with every secret masked',
    async () => {
      const r = await c.run(['config', 'check', '--json'], {
        env: {
          DATABASE_URL: 'postgres://app:s3cret-db-pw@db.internal:5432/gh',
          SMTP_URL: 'smtp://mail:s3cret-smtp@mx.internal:25',
          TWILIO_AUTH_TOKEN: 's3cret-twilio',
        },
      });
      expect(r.code, r.stderr).toBe(0);
      for (const secret of ['s3cret', c.env.ENCRYPTION_KEY!]) expect(r.stdout).not.toContain(secret);
      const out = r.json();
      expect(out.config.databaseUrl).toBe('postgres://db.internal:5432/gh');
      expect(out.config.encryptionKey).toBe('********');
      expect(out.config.port).toBe(3000);
    },
    T,
  );

  it(
    'refuses an invalid environment (exit 78) naming the variable',
    async () => {
      const r = await c.run(['config', 'check'], { env: { PORT: 'eighty', ACCESS_TOKEN_TTL: '5' } });
      expect(r.code).toBe(78);
      expect(r.stderr).toContain('PORT');
      expect(r.stderr).toContain('ACCESS_TOKEN_TTL');
    },
    T,
  );
});

// First run: on a database without any partner, a single-use setup link (hashed, 1 hour) creates the first partner
// and its administrator in one transaction; any partner closes setup. Registration stays off and says how to open it.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partners } from '../../src/db/schema/index.js';
import { issueSetupLink, SETUP_TTL_MS } from '../../src/modules/setup/service.js';
import { startApp, type TestApp } from '../support/app.js';
import { strongPassword } from '../auth/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp({ RATE_LIMIT_REGISTER_PARTNER: '100/3600' });
});
afterAll(async () => t?.close());

const tokenOf = (link: string) => new URL(link).searchParams.get('token')!;
const newLink = async () => (await issueSetupLink(t.deps))!;
const body = (token: string, extra: Record<string, unknown> = {}) => ({
  token,
  companyName: 'First MSP',
  email: `admin-${Math.random().toString(36).slice(2, 8)}@first.test`,
  password: strongPassword(),
  name: 'First Admin',
  ...extra,
});
const partnerCount = async () => (await t.deps.db.select({ n: sql<number>`count(*)::int` }).from(partners))[0]!.n;

describe('the setup link', () => {
  it('is issued while no partner exists, points at the console setup page, and is stored only as a hash', async () => {
    expect((await t.client().get('/setup/status')).body).toEqual({ needed: true, registrationOpen: false });
    const link = await newLink();
    expect(link).toMatch(new RegExp(`^${t.deps.config.appUrl}/setup\\?token=[A-Za-z0-9_-]{40,}$`));
    const rows = await t.deps.db.execute(
      sql`select token_hash, expires_at, created_at from auth_flows where kind = 'first_run_setup'`,
    );
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(tokenOf(link));
    const first = ((rows as unknown as { rows?: { expires_at: string; created_at: string }[] }).rows ??
      (rows as unknown as { expires_at: string; created_at: string }[]))[0]!;
    expect(new Date(first.expires_at).getTime() - t.deps.clock.now().getTime()).toBeLessThanOrEqual(SETUP_TTL_MS);
  });

  it('refuses an unknown token (401 invalid_setup_token) and writes nothing', async () => {
    const res = await t.client().post('/setup', body('x'.repeat(43)));
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('invalid_setup_token');
    expect(await partnerCount()).toBe(0);
  });

  it('refuses a weak password or a bad body without spending the link', async () => {
    const token = tokenOf(await newLink());
    const weak = await t.client().post('/setup', body(token, { password: 'password1' }));
    expect(weak.status).toBe(400);
    expect(weak.body.code).toBe('weak_password');
    const bad = await t.client().post('/setup', body(token, { email: 'not-an-email' }));
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
    const ok = await t.client().post('/setup', body(token));
    expect(ok.status).toBe(201);
    expect(ok.body.tokenType).toBe('Bearer');
    expect(ok.body.partner.name).toBe('First MSP');
    expect(ok.body.user.permissions).toContain('*:*');
  });

  it('closes once a partner exists: status says so, every other link is refused (409 setup_completed), no new link is issued', async () => {
    expect((await t.client().get('/setup/status')).body).toEqual({ needed: false, registrationOpen: false });
    expect(await issueSetupLink(t.deps)).toBeNull();
    const rows = (await t.deps.db.execute(
      sql`select count(*)::int as n from auth_flows where kind = 'first_run_setup' and consumed_at is null`,
    )) as unknown as { rows?: { n: number }[] };
    expect((rows.rows ?? (rows as unknown as { n: number }[]))[0]!.n).toBeGreaterThan(0); // links issued before setup
    const res = await t.client().post('/setup', body('y'.repeat(43)));
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('setup_completed');
    expect(await partnerCount()).toBe(1);
  });
});

describe('setup is single-use under concurrency', () => {
  it('of concurrent setups with one link and with several links, exactly one creates a partner', async () => {
    const fresh = await startApp({ RATE_LIMIT_REGISTER_PARTNER: '100/3600' });
    try {
      const links = async () => tokenOf((await issueSetupLink(fresh.deps))!);
      const one = await links();
      const others = [await links(), await links()];
      const attempts = [one, one, one, ...others, ...others].map((token) => fresh.client().post('/setup', body(token)));
      const statuses = (await Promise.all(attempts)).map((r) => r.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      // The losers are refused (409 setup_completed, 401 spent link); a 503 is a pool connect timeout on a loaded machine.
      expect(
        statuses.filter((s) => s !== 201).every((s) => s === 409 || s === 401 || s === 503),
        String(statuses),
      ).toBe(true);
      const [{ n }] = (await fresh.deps.db.select({ n: sql<number>`count(*)::int` }).from(partners)) as [{ n: number }];
      expect(n).toBe(1);
    } finally {
      await fresh.close();
    }
  }, 180_000);
});

describe('registration stays off by default', () => {
  it('answers 404 not_found naming ENABLE_REGISTRATION', async () => {
    const res = await t
      .client()
      .post('/auth/register-partner', { companyName: 'X', email: 'x@reg.test', password: strongPassword(), name: 'X' });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
    expect(res.body.message).toContain('ENABLE_REGISTRATION');
  });
});

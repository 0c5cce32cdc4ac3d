// /metrics carries what an operator watches: sign-ins by result and method, MFA verifications, rate-limit refusals
// by limit, lockouts, refresh reuse, SSO logins, database pool, store latency, event-loop lag, audit chain writes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { addPartnerMember, createPartner, createUser } from '../support/fixtures.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp({ RATE_LIMIT_LOGIN: '3/900' });
});
afterAll(async () => t?.close());

const scrape = async () => (await fetch(`${t.baseUrl}/metrics`)).text();
const value = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.split(' ').pop()) : 0;
};

describe('/metrics after sign-ins and refusals', () => {
  it('counts sign-ins by result and method, rate-limit refusals by limit and audit chain writes', async () => {
    const partner = await createPartner(t);
    const user = await createUser(t, { email: 'metrics@example.test', password: 'Correct-horse-battery-9' });
    await addPartnerMember(t, { partnerId: partner.id, userId: user.id });
    const before = await scrape();
    const c = t.client();
    expect(
      (await c.post('/auth/login', { email: 'metrics@example.test', password: 'Correct-horse-battery-9' })).status,
    ).toBe(200);
    expect((await c.post('/auth/login', { email: 'metrics@example.test', password: 'wrong-password' })).status).toBe(
      401,
    );
    expect((await c.post('/auth/login', { email: 'metrics@example.test', password: 'wrong-password' })).status).toBe(
      401,
    );
    expect((await c.post('/auth/login', { email: 'metrics@example.test', password: 'wrong-password' })).status).toBe(
      429,
    );
    const after = await scrape();
    const delta = (series: string) => value(after, series) - value(before, series);
    expect(delta('gatehouse_sign_ins_total{result="success",method="password"}')).toBe(1);
    expect(delta('gatehouse_sign_ins_total{result="failure",method="password"}')).toBe(2);
    expect(delta('gatehouse_rate_limit_refusals_total{limit="login"}')).toBe(1);
    expect(delta('gatehouse_audit_chain_writes_total{result="success"}')).toBeGreaterThanOrEqual(1);
    expect(delta('gatehouse_audit_chain_writes_total{result="failure"}')).toBe(2);
  }, 120_000);

  it('exposes the series for MFA, SSO, lockouts, refresh reuse, the store, the pool and the event loop', async () => {
    const text = await scrape();
    for (const name of [
      'gatehouse_mfa_verifications_total',
      'gatehouse_sso_logins_total',
      'gatehouse_lockouts_total',
      'gatehouse_refresh_reuse_detected_total',
      'gatehouse_store_operation_seconds',
      'nodejs_eventloop_lag_seconds',
      'nodejs_eventloop_lag_p99_seconds',
    ])
      expect(text).toContain(`# TYPE ${name}`);
    expect(text).toMatch(/gatehouse_store_operation_seconds_count\{op="hit",store="(redis|database)"\} [1-9]/);
    if (t.deps.database.kind === 'postgres')
      expect(text).toMatch(/gatehouse_db_pool_connections\{state="in_use"\} \d+/);
  });
});

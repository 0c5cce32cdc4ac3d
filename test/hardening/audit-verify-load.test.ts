// No request stalls the event loop: the hash-chain verification and the audit export walk every record
// of a partner. Both go in keyset batches with a query (an I/O turn) between them, so /healthz stays responsive
// 100 ms while 20,000 records are verified or exported.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { partnerAdmin } from '../support/fixtures.js';
import { expectStatus } from '../onboarding/helpers.js';
import { expectResponsive, whilePolling } from './loop-latency.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp({ LOG_LEVEL: 'warn' });
});
afterAll(async () => t?.close());

const RECORDS = 20_000;

/** Records appended straight into the partner's chain (their hashes are not a valid chain: the walk is what counts). */
async function seed(partnerId: string) {
  await t.deps.db.execute(sql`
    insert into audit_logs (id, at, action, result, actor_email, partner_id, resource_type, resource_id, ip, user_agent, details, prev_hash, hash)
    select gen_random_uuid(), now() - (g || ' seconds')::interval, 'contact.update', 'success', 'seed@example.test', ${partnerId}::uuid, 'contact',
      gen_random_uuid()::text, '203.0.113.7', 'Mozilla/5.0 (seed)', jsonb_build_object('changed', jsonb_build_array('title', 'phone'), 'n', g),
      md5(g::text), md5((g + 1)::text)
    from generate_series(1, ${RECORDS}) as g`);
}

describe('audit verification and export of 20,000 records do not stall the service', () => {
  it('/healthz stays responsive (p95 < 500 ms, none ≥ 2 s) during GET /audit-logs/verify and a JSON Lines export', {
    timeout: 180_000,
  }, async () => {
    const { api, partner } = await partnerAdmin(t);
    await seed(partner.id);
    const verify = await whilePolling(
      t.baseUrl,
      async () => expectStatus(await api.get('/audit-logs/verify'), 200).body as { ok: boolean; checked: number },
    );
    expect(verify.result.checked).toBeGreaterThanOrEqual(RECORDS);
    expect(verify.result.ok).toBe(false);
    expectResponsive(verify.latency, 'verify');

    const exported = await whilePolling(t.baseUrl, async () => {
      const res = await api.get('/audit-logs/export', { query: { format: 'jsonl' } });
      expectStatus(res, 200);
      return res.text.split('\n').filter(Boolean).length;
    });
    expect(exported.result).toBeGreaterThanOrEqual(RECORDS);
    expectResponsive(exported.latency, 'export');
  });
});

// kill -9 of the webhook worker loses nothing (PostgreSQL): the service runs as a child process and is killed while
// deliveries are in flight; the next instance takes over once the leases run out, and the receiver ends up with every
// event, in sequence order, a repeat only for what was in flight (at least once; receivers drop repeats by webhook-id).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { kill9, spawnService } from '../support/child-service.js';
import { createOrg, createPartner, signedInPartnerMember } from '../support/fixtures.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';
import { deliveryRows, recordEvent, subscribe, until } from './helpers.js';

const onPostgres = Boolean(process.env.DATABASE_URL);
let t: TestApp;
let rcv: Receiver;

beforeAll(async () => {
  if (!onPostgres) return;
  rcv = await startReceiver();
  // A short lease: what the killed instance held is retried by the next one two seconds later.
  t = await startApp({ WEBHOOKS_ALLOW_INSECURE: 'true', WEBHOOKS_LEASE_SECONDS: '2' });
}, 120_000);
afterAll(async () => {
  await t?.close();
  await rcv?.close();
});

describe.skipIf(!onPostgres)('kill -9 of the webhook worker loses nothing', () => {
  it('killed mid-delivery, the next instance delivers every event, in order', async () => {
    // Only the child processes deliver.
    await t.deps.webhooks.stop();
    const partnerId = (await createPartner(t)).id;
    const orgId = (await createOrg(t, partnerId)).id;
    const admin = await signedInPartnerMember(t, partnerId);
    const hook = await subscribe(admin.api, rcv, { events: ['device.'] });
    rcv.delayMs = 150;
    const total = 20;
    for (let i = 1; i <= total; i++) await recordEvent(t, { action: `device.step${i}`, partnerId, orgId });

    const first = await spawnService(t);
    try {
      await rcv.waitFor((r) => r.length >= 3, 'a few deliveries', 30_000);
      // Mid-request: the receiver is answering slowly, so one delivery is in flight.
      await new Promise((r) => setTimeout(r, 60));
    } finally {
      await kill9(first);
    }
    const before = rcv.received.length;
    expect(before).toBeLessThan(total);
    const rows = await deliveryRows(t, hook.id);
    expect(rows.filter((d) => d.status === 'pending').length).toBeGreaterThan(0);

    const next = await spawnService(t);
    try {
      await until(
        'every delivery delivered',
        async () => (await deliveryRows(t, hook.id)).every((d) => d.status === 'delivered'),
        60_000,
      );
    } finally {
      await kill9(next);
    }
    const seqs = rcv.received.map((r) => r.body.data.sequence as number);
    // Every event arrived; none out of order; a repeat only of the one in flight at the kill.
    expect([...new Set(seqs)]).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]!).toBeGreaterThanOrEqual(seqs[i - 1]!);
    expect(seqs.length - total).toBeLessThanOrEqual(1);
    expect(rcv.received.every((r) => r.verified)).toBe(true);
  }, 180_000);
});

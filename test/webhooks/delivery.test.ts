// Audit webhooks: deliveries are signed per Standard Webhooks and verify with the standardwebhooks
// library, carry the record and its hash-chain position, follow the event filter and the tenant, arrive in order
// and at least once across a receiver outage, back off with jitter, are dead-lettered after the window, and can be
// redelivered. A real HTTP receiver (node:http) in the test; WEBHOOKS_ALLOW_INSECURE=true so it may be on loopback.
import { eq } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { auditLogs, webhookDeliveries, webhooks } from '../../src/db/schema/index.js';
import { recordHash } from '../../src/modules/audit/chain.js';
import { PARTNER_ADMIN_ROLE_ID } from '../../src/modules/roles/catalog.js';
import { RETRY_WINDOW_MS } from '../../src/modules/webhooks/fanout.js';
import { RETRY, retryDelayMs } from '../../src/modules/webhooks/worker.js';
import { startApp, type TestApp } from '../support/app.js';
import type { ApiClient } from '../support/client.js';
import { createOrg, createPartner, sessionFor, signedInPartnerMember } from '../support/fixtures.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';
import { deliveryRows, recordEvent, sleep, subscribe, until } from './helpers.js';

let t: TestApp;
let rcv: Receiver;
let partnerId: string;
let orgA: string;
let orgB: string;
let adminId: string;

beforeAll(async () => {
  rcv = await startReceiver();
  t = await startApp({ WEBHOOKS_ALLOW_INSECURE: 'true', WEBHOOKS_LEASE_SECONDS: '30' });
  partnerId = (await createPartner(t)).id;
  orgA = (await createOrg(t, partnerId)).id;
  orgB = (await createOrg(t, partnerId)).id;
  adminId = (await signedInPartnerMember(t, partnerId)).user.id;
}, 120_000);
afterAll(async () => {
  await t?.close();
  await rcv?.close();
});
beforeEach(async () => {
  // No delivery of an earlier test may still be in flight when the receiver's log is cleared.
  await t.deps.webhooks.stop();
  await t.deps.db.delete(webhooks);
  t.deps.webhooks.start();
  rcv.received.length = 0;
  rcv.requests.length = 0;
  rcv.mode = 'accept';
});

/** A fresh session of the partner admin (the test clock moves past access-token lifetimes). */
async function admin(): Promise<ApiClient> {
  const s = await sessionFor(t, adminId, { scope: 'partner', partnerId, roleId: PARTNER_ADMIN_ROLE_ID }, true);
  return t.client().withToken(s.accessToken);
}
const kick = () => t.deps.webhooks.kick();
const actionsOf = (path?: string) =>
  rcv.received.filter((r) => !path || r.path === path).map((r) => r.body.data.record.action);

describe('a delivery is signed per Standard Webhooks and verifies with the standardwebhooks verifier', () => {
  it('an audited change made through the API reaches the receiver signed, with the record and its chain position', async () => {
    const api = await admin();
    const hook = await subscribe(api, rcv, { events: ['role.'] });
    const role = await api.post('/roles', {
      name: `Auditors ${Date.now()}`,
      permissions: [{ resource: 'audit', action: 'read' }],
    });
    expect(role.status, role.text).toBe(201);
    const [got] = await rcv.waitFor((r) => r.length >= 1, 'the role.create delivery');
    expect(got!.verified, got!.verifyError ?? '').toBe(true);
    const [row] = await deliveryRows(t, hook.id);
    expect(got!.webhookId).toBe(row!.id);
    expect(got!.body).toMatchObject({
      type: 'audit.record',
      data: { webhookId: hook.id, sequence: 1, record: { action: 'role.create', partnerId, resourceId: role.body.id } },
    });
    const [stored] = await t.deps.db.select().from(auditLogs).where(eq(auditLogs.id, got!.body.data.record.id));
    expect(got!.body.data.chain).toEqual({ seq: stored!.seq, prevHash: stored!.prevHash, hash: stored!.hash });
    // The receiver can recompute the hash from what it got, and link it to the previous record of the chain.
    const { record, chain } = got!.body.data;
    expect(recordHash({ ...record, at: new Date(record.at) }, chain.prevHash)).toBe(chain.hash);
    await until('the row to be delivered', async () => (await deliveryRows(t, hook.id))[0]?.status === 'delivered');
  });

  it('a changed body, another secret or an old timestamp fails the verifier', async () => {
    const api = await admin();
    const hook = await subscribe(api, rcv, { events: ['user.'] });
    await recordEvent(t, { action: 'user.invite', partnerId });
    kick();
    const [got] = await rcv.waitFor((r) => r.length >= 1, 'the delivery');
    const headers = {
      'webhook-id': got!.webhookId,
      'webhook-timestamp': got!.timestamp,
      'webhook-signature': got!.signature,
    };
    expect(() => new Webhook(hook.secret).verify(got!.raw, headers)).not.toThrow();
    expect(() => new Webhook(hook.secret).verify(got!.raw.replace('user.invite', 'user.invitE'), headers)).toThrow();
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(got!.raw, headers)).toThrow();
    expect(() =>
      new Webhook(hook.secret).verify(got!.raw, {
        ...headers,
        'webhook-timestamp': String(Number(got!.timestamp) - 3600),
      }),
    ).toThrow();
  });
});

describe('the event filter: only actions starting with a subscribed prefix are delivered', () => {
  it('role. and auth.login match role.create and auth.login.failed, not user.invite or auth.logout', async () => {
    const hook = await subscribe(await admin(), rcv, { events: ['role.', 'auth.login'] });
    for (const action of ['user.invite', 'role.create', 'auth.logout', 'auth.login.failed', 'role.delete'])
      await recordEvent(t, { action, partnerId, orgId: orgA });
    kick();
    await rcv.waitFor((r) => r.length >= 3, 'three deliveries');
    await sleep(200);
    expect(actionsOf()).toEqual(['role.create', 'auth.login.failed', 'role.delete']);
    expect(rcv.received.map((r) => r.body.data.sequence)).toEqual([1, 2, 3]);
    expect((await deliveryRows(t, hook.id)).map((d) => d.action)).toEqual([
      'role.create',
      'auth.login.failed',
      'role.delete',
    ]);
  });
});

describe("tenant isolation: an organisation's subscription gets its own events only; a partner's gets all of its tenants'", () => {
  it('org A, org B, partner-wide and another partner each receive exactly their events', async () => {
    const api = await admin();
    const other = await createPartner(t);
    const otherOrg = (await createOrg(t, other.id)).id;
    const otherAdmin = await signedInPartnerMember(t, other.id);
    await subscribe(api, rcv, { events: ['*'], orgId: orgA }, '/a');
    await subscribe(api, rcv, { events: ['*'], orgId: orgB }, '/b');
    await subscribe(api, rcv, { events: ['*'] }, '/partner');
    await subscribe(otherAdmin.api, rcv, { events: ['*'] }, '/other');
    rcv.received.length = 0;
    await recordEvent(t, { action: 'device.a', partnerId, orgId: orgA });
    await recordEvent(t, { action: 'device.b', partnerId, orgId: orgB });
    await recordEvent(t, { action: 'partner.own', partnerId, orgId: null });
    await recordEvent(t, { action: 'other.org', partnerId: other.id, orgId: otherOrg });
    await recordEvent(t, { action: 'global.event', partnerId: null });
    kick();
    // The subscriptions' own webhook.create records are in the partner-wide feeds too.
    const mine = (path: string) => actionsOf(path).filter((a) => !a.startsWith('webhook.'));
    // Each feed's last event has arrived (a feed is in order); then a moment for any that should not come.
    await rcv.waitFor(
      () => mine('/partner').includes('partner.own') && ['/a', '/b', '/other'].every((p) => mine(p).length > 0),
      'every feed',
    );
    await sleep(300);
    expect(mine('/a')).toEqual(['device.a']);
    expect(mine('/b')).toEqual(['device.b']);
    expect(mine('/partner')).toEqual(['device.a', 'device.b', 'partner.own']);
    expect(mine('/other')).toEqual(['other.org']);
    expect(rcv.received.every((r) => r.verified)).toBe(true);
  });
});

describe('a receiver that is down for a while gets every event once it is back, once each and in order', () => {
  it('eight events queued during an outage arrive 1..8 after it', async () => {
    const hook = await subscribe(await admin(), rcv, { events: ['device.'] });
    await rcv.down();
    for (let i = 1; i <= 5; i++) await recordEvent(t, { action: `device.step${i}`, partnerId, orgId: orgA });
    kick();
    const [head] = await until('the first failed attempt', async () => {
      const rows = await deliveryRows(t, hook.id);
      return rows[0]?.attempts === 1 && rows[0].leasedUntil === null ? rows : undefined;
    });
    expect(head!.lastError).toMatch(/connection failed/);
    for (let i = 6; i <= 8; i++) await recordEvent(t, { action: `device.step${i}`, partnerId, orgId: orgA });
    kick();
    await sleep(300);
    // Only the head was tried: the later events wait for it.
    expect((await deliveryRows(t, hook.id)).slice(1).every((d) => d.attempts === 0 && d.status === 'pending')).toBe(
      true,
    );
    await rcv.up();
    t.clock.advance(RETRY.capMs);
    kick();
    await rcv.waitFor((r) => r.length >= 8, 'all eight');
    await sleep(300);
    expect(rcv.received.map((r) => r.body.data.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(actionsOf()).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((i) => `device.step${i}`));
    expect(new Set(rcv.received.map((r) => r.webhookId)).size).toBe(8);
    expect((await deliveryRows(t, hook.id)).every((d) => d.status === 'delivered')).toBe(true);
  });
});

describe('a failed delivery is retried with exponential backoff and jitter', () => {
  it('the delay after attempt n lies in [base·2^(n-1)/2, base·2^(n-1)], capped; not due = not sent', async () => {
    expect(retryDelayMs(1, () => 0)).toBe(RETRY.baseMs / 2);
    expect(retryDelayMs(1, () => 1)).toBe(RETRY.baseMs);
    expect(retryDelayMs(4, () => 1)).toBe(RETRY.baseMs * 8);
    expect(retryDelayMs(40, () => 1)).toBe(RETRY.capMs);
    const hook = await subscribe(await admin(), rcv, { events: ['device.'] });
    rcv.mode = 'refuse';
    await recordEvent(t, { action: 'device.retry', partnerId, orgId: orgA });
    kick();
    for (let attempt = 1; attempt <= 3; attempt++) {
      const [row] = await until(`attempt ${attempt}`, async () => {
        const rows = await deliveryRows(t, hook.id);
        return rows[0]?.attempts === attempt && rows[0].leasedUntil === null ? rows : undefined;
      });
      expect(row!.lastStatus).toBe(503);
      expect(row!.status).toBe('pending');
      const delay = row!.notBefore.getTime() - row!.lastAttemptAt!.getTime();
      const full = RETRY.baseMs * 2 ** (attempt - 1);
      expect(delay).toBeGreaterThanOrEqual(full / 2);
      expect(delay).toBeLessThanOrEqual(full);
      // Not due yet: a kick sends nothing.
      const before = rcv.requests.length;
      kick();
      await sleep(150);
      expect(rcv.requests.length).toBe(before);
      t.clock.advance(full + 1);
      kick();
    }
    rcv.mode = 'accept';
    await until('the delivery', async () => (await deliveryRows(t, hook.id))[0]?.status === 'delivered');
    expect(actionsOf()).toEqual(['device.retry']);
  });
});

describe('after the 24-hour window a delivery is dead-lettered, and redeliver queues it again', () => {
  it('failed past the window → status failed, the next event goes; redeliver (all failed, then one) sends them in order', async () => {
    const api0 = await admin();
    const hook = await subscribe(api0, rcv, { events: ['device.'] });
    rcv.mode = 'refuse';
    await recordEvent(t, { action: 'device.one', partnerId, orgId: orgA });
    await recordEvent(t, { action: 'device.two', partnerId, orgId: orgA });
    kick();
    await until('the first attempt', async () => (await deliveryRows(t, hook.id))[0]?.attempts === 1);
    t.clock.advance(RETRY_WINDOW_MS + 1);
    kick();
    const rows = await until('both dead-lettered', async () => {
      const r = await deliveryRows(t, hook.id);
      return r.every((d) => d.status === 'failed') ? r : undefined;
    });
    expect(rows.map((d) => d.failedAt)).not.toContain(null);
    expect(t.logs()).toContain('webhook delivery dead-lettered');
    expect(await (await fetch(`${t.baseUrl}/metrics`)).text()).toMatch(
      /gatehouse_webhook_deliveries_total\{result="dead_lettered"\} [1-9]/,
    );
    // A later event is not held back by the dead letters.
    rcv.mode = 'accept';
    await recordEvent(t, { action: 'device.three', partnerId, orgId: orgA });
    kick();
    await rcv.waitFor((r) => r.length >= 1, 'the later event');
    expect(actionsOf()).toEqual(['device.three']);

    const api = await admin();
    const failed = await api.get(`/webhooks/${hook.id}/deliveries`, { query: { status: 'failed' } });
    expect(failed.status, failed.text).toBe(200);
    expect(failed.body.data.map((d: { sequence: number }) => d.sequence)).toEqual([2, 1]);
    expect(failed.body.data[0]).toMatchObject({
      status: 'failed',
      lastStatus: 503,
      lastError: expect.stringMatching(/503/),
    });
    const again = await api.post(`/webhooks/${hook.id}/redeliver`, {});
    expect(again.status, again.text).toBe(200);
    expect(again.body).toEqual({ queued: 2 });
    await rcv.waitFor((r) => r.length >= 3, 'the redelivered two');
    expect(actionsOf()).toEqual(['device.three', 'device.one', 'device.two']);
    expect(rcv.received.every((r) => r.verified)).toBe(true);
    // One delivery by id, delivered already: sent again with the same webhook-id (receivers drop repeats by it).
    const one = rows[0]!;
    const res = await api.post(`/webhooks/${hook.id}/redeliver`, { deliveryId: one.id });
    expect(res.body).toEqual({ queued: 1 });
    await rcv.waitFor((r) => r.length >= 4, 'the single redelivery');
    expect(rcv.received[3]!.webhookId).toBe(one.id);
    expect(
      (await api.post(`/webhooks/${hook.id}/redeliver`, { deliveryId: '00000000-0000-4000-8000-000000000000' })).status,
    ).toBe(404);
    const audited = await t.deps.db
      .select()
      .from(auditLogs)
      .where(eq(auditLogs.action, 'webhook.redeliver'))
      .orderBy(auditLogs.seq);
    expect(audited.map((a) => (a.details as { queued: number }).queued)).toEqual([2, 1]);
  });
});

describe('the delivery log pages by keyset', () => {
  it('five deliveries in pages of two, newest first, each once', async () => {
    const hook = await subscribe(await admin(), rcv, { events: ['device.'] });
    for (let i = 1; i <= 5; i++) await recordEvent(t, { action: `device.p${i}`, partnerId, orgId: orgA });
    kick();
    await until(
      'all delivered',
      async () => (await deliveryRows(t, hook.id)).filter((d) => d.status === 'delivered').length === 5,
    );
    const api = await admin();
    const seen: number[] = [];
    let cursor: string | undefined;
    do {
      const res = await api.get(`/webhooks/${hook.id}/deliveries`, {
        query: { limit: 2, ...(cursor ? { cursor } : {}) },
      });
      expect(res.status, res.text).toBe(200);
      seen.push(...res.body.data.map((d: { sequence: number }) => d.sequence));
      cursor = res.body.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual([5, 4, 3, 2, 1]);
  });
});

describe('ping sends a signed test event now and reports the answer', () => {
  it('ok with the receiver status; ok false when it refuses', async () => {
    const api = await admin();
    const hook = await subscribe(api, rcv, { events: ['nothing.'] });
    const res = await api.post(`/webhooks/${hook.id}/ping`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ ok: true, status: 204, error: null });
    expect(rcv.received).toHaveLength(1);
    expect(rcv.received[0]!.body).toMatchObject({ type: 'webhook.ping', data: { webhookId: hook.id } });
    expect(rcv.received[0]!.verified).toBe(true);
    rcv.mode = 'refuse';
    expect((await api.post(`/webhooks/${hook.id}/ping`)).body).toEqual({
      ok: false,
      status: 503,
      error: expect.stringMatching(/503/),
    });
    // Not queued: nothing in the delivery log.
    expect(await deliveryRows(t, hook.id)).toHaveLength(0);
  });
});

describe('a redirect is refused, not followed', () => {
  it('a 302 answer fails the delivery; the redirect target is never asked', async () => {
    const hook = await subscribe(await admin(), rcv, { events: ['device.'] });
    rcv.mode = 'redirect';
    await recordEvent(t, { action: 'device.redirected', partnerId, orgId: orgA });
    kick();
    const [row] = await until('the refused attempt', async () => {
      const rows = await deliveryRows(t, hook.id);
      return rows[0]?.attempts === 1 && rows[0].leasedUntil === null ? rows : undefined;
    });
    expect(row!.lastError).toMatch(/redirect/);
    expect(row!.status).toBe('pending');
    expect(rcv.requests).toEqual(['/hook']);
    const ping = await (await admin()).post(`/webhooks/${hook.id}/ping`);
    expect(ping.body).toMatchObject({ ok: false, error: expect.stringMatching(/redirect/) });
  });
});

describe('a rolled-back change queues nothing', () => {
  it('the audit record and its delivery go with the transaction', async () => {
    const hook = await subscribe(await admin(), rcv, { events: ['device.'] });
    await expect(
      t.deps.db.transaction(async (tx) => {
        await t.deps.audit.record(tx, { action: 'device.rolledback', partnerId, orgId: orgA }, null);
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    kick();
    await sleep(200);
    expect(await deliveryRows(t, hook.id)).toHaveLength(0);
    expect(rcv.requests).toHaveLength(0);
    expect(await t.deps.db.select().from(webhookDeliveries)).toHaveLength(0);
  });
});

// Audit webhook subscriptions through the API: the secret is shown once and sealed at rest; audit:manage
// and the tenant decide who may subscribe to what; and without WEBHOOKS_ALLOW_INSECURE the one outbound guard refuses
// http, private, loopback and link-local URLs when set and again when sending (a row pointed at loopback later).
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogs, webhooks } from '../../src/db/schema/index.js';
import { PARTNER_ADMIN_ROLE_ID } from '../../src/modules/roles/catalog.js';
import { openSecret } from '../../src/modules/webhooks/sender.js';
import { startApp, type TestApp } from '../support/app.js';
import {
  createOrg,
  createPartner,
  signedInOrgMember,
  signedInPartnerMember,
  type SignedInMember,
} from '../support/fixtures.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';
import { deliveryRows, recordEvent, until } from './helpers.js';

let t: TestApp;
let rcv: Receiver;
let partnerId: string;
let orgA: { id: string; partnerId: string };
let orgB: { id: string; partnerId: string };
let admin: SignedInMember;

/** A global unicast address literal: passes the guard without DNS; its events filter matches nothing. */
const PUBLIC_URL = 'https://93.184.215.14/hooks/gatehouse?token=receiver-own-token';

beforeAll(async () => {
  rcv = await startReceiver();
  t = await startApp();
  partnerId = (await createPartner(t)).id;
  orgA = await createOrg(t, partnerId);
  orgB = await createOrg(t, partnerId);
  admin = await signedInPartnerMember(t, partnerId);
}, 120_000);
afterAll(async () => {
  await t?.close();
  await rcv?.close();
});

describe('the signing secret is shown once and sealed at rest', () => {
  it('201 carries whsec_…; get, list and update never do; the row holds it sealed, bound to its subscription', async () => {
    const res = await admin.api.post('/webhooks', { url: PUBLIC_URL, events: ['nothing.'], description: 'SIEM' });
    expect(res.status, res.text).toBe(201);
    const { id, secret } = res.body;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(res.body).toMatchObject({
      partnerId,
      orgId: null,
      url: PUBLIC_URL,
      events: ['nothing.'],
      description: 'SIEM',
      active: true,
    });
    for (const r of [
      await admin.api.get(`/webhooks/${id}`),
      await admin.api.get('/webhooks'),
      await admin.api.patch(`/webhooks/${id}`, { description: 'SIEM 2' }),
    ]) {
      expect(r.status, r.text).toBe(200);
      expect(r.text).not.toContain(secret);
      expect(r.text).not.toContain(secret.slice(6));
      expect(r.text).not.toMatch(/secret/i);
    }
    const [row] = await t.deps.db.select().from(webhooks).where(eq(webhooks.id, id));
    expect(row!.secretSealed).toMatch(/^gh1\./);
    expect(row!.secretSealed).not.toContain(secret.slice(6, 20));
    expect(openSecret(t.deps.box, id, row!.secretSealed)).toBe(secret);
    // Sealed to its subscription: copied to another, it does not open.
    expect(() => openSecret(t.deps.box, crypto.randomUUID(), row!.secretSealed)).toThrow();
    // The audit trail names the host only: a URL's query often carries the receiver's own token.
    const [audit] = await t.deps.db.select().from(auditLogs).where(eq(auditLogs.resourceId, id));
    expect(audit!.action).toBe('webhook.create');
    expect(JSON.stringify(audit!.details)).not.toContain('receiver-own-token');
    expect(audit!.details).toMatchObject({ host: '93.184.215.14' });
  });
});

describe('who may subscribe: audit:manage, within the tenant', () => {
  it('an organisation admin (no audit:manage) is refused; a custom organisation role with it manages its organisation only', async () => {
    const orgAdmin = await signedInOrgMember(t, orgA);
    const refused = await orgAdmin.api.post('/webhooks', { url: PUBLIC_URL, events: ['nothing.'] });
    expect([refused.status, refused.body.code]).toEqual([403, 'forbidden']);
    const role = await admin.api.post('/roles', {
      orgId: orgA.id,
      name: `Streamers ${Date.now()}`,
      permissions: [{ resource: 'audit', action: 'manage' }],
    });
    expect(role.status, role.text).toBe(201);
    const streamer = await signedInOrgMember(t, orgA, { roleId: role.body.id });
    const own = await streamer.api.post('/webhooks', { url: PUBLIC_URL, events: ['nothing.'] });
    expect(own.status, own.text).toBe(201);
    expect(own.body.orgId).toBe(orgA.id);
    // Organisation B's subscription does not exist for it; naming B is 404.
    const theirs = await admin.api.post('/webhooks', { url: PUBLIC_URL, events: ['nothing.'], orgId: orgB.id });
    expect(theirs.status).toBe(201);
    expect((await streamer.api.get(`/webhooks/${theirs.body.id}`)).status).toBe(404);
    expect((await streamer.api.patch(`/webhooks/${theirs.body.id}`, { active: false })).status).toBe(404);
    expect(
      (await streamer.api.post('/webhooks', { url: PUBLIC_URL, events: ['nothing.'], orgId: orgB.id })).status,
    ).toBe(404);
    const listed = await streamer.api.get('/webhooks');
    expect(listed.body.data.map((w: { id: string }) => w.id)).toEqual([own.body.id]);
  });

  it('a partner member with access to selected organisations cannot see or make a partner-wide subscription', async () => {
    const selected = await signedInPartnerMember(t, partnerId, {
      roleId: PARTNER_ADMIN_ROLE_ID,
      orgAccess: 'selected',
      orgIds: [orgA.id],
    });
    const res = await selected.api.post('/webhooks', { url: PUBLIC_URL, events: ['nothing.'] });
    expect([res.status, res.body.code]).toEqual([403, 'full_org_access_required']);
    const wide = await admin.api.post('/webhooks', { url: PUBLIC_URL, events: ['nothing.'] });
    expect((await selected.api.get(`/webhooks/${wide.body.id}`)).body.code).toBe('full_org_access_required');
    expect((await selected.api.get('/webhooks')).body.code).toBe('full_org_access_required');
    // Its own organisation is fine.
    expect(
      (await selected.api.post('/webhooks', { url: PUBLIC_URL, events: ['nothing.'], orgId: orgA.id })).status,
    ).toBe(201);
  });

  it('refuses bad bodies with 400 validation_failed', async () => {
    for (const body of [
      { url: PUBLIC_URL, events: [] },
      { url: PUBLIC_URL, events: ['Role.'] },
      { url: 'not a url', events: ['*'] },
      { url: 'ftp://93.184.215.14/x', events: ['*'] },
      { url: PUBLIC_URL, events: ['*'], secret: 'mine' },
    ]) {
      const res = await admin.api.post('/webhooks', body);
      expect([res.status, res.body.code], JSON.stringify(body)).toEqual([400, 'validation_failed']);
    }
  });
});

describe('the outbound guard refuses private, loopback and link-local addresses and plain http (no WEBHOOKS_ALLOW_INSECURE)', () => {
  const refused = [
    'http://93.184.215.14/hook', // plain http, public address
    'https://10.0.0.1/hook',
    'https://127.0.0.1/hook',
    'https://localhost/hook',
    'https://169.254.169.254/latest/meta-data', // cloud metadata
    'https://192.168.1.10/hook',
    'https://172.16.5.4/hook',
    'https://100.64.0.1/hook',
    'https://0.0.0.0/hook',
    'https://2130706433/hook', // 127.0.0.1 as one number
    'https://[::1]/hook',
    'https://[fd00::1]/hook',
    'https://[fe80::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
  ];

  it('on create and on update: 400 validation_failed naming url', async () => {
    const ok = await admin.api.post('/webhooks', { url: PUBLIC_URL, events: ['nothing.'] });
    for (const url of refused) {
      const res = await admin.api.post('/webhooks', { url, events: ['*'] });
      expect([res.status, res.body.code], url).toEqual([400, 'validation_failed']);
      expect(Object.keys(res.body.details.fieldErrors)).toEqual(['url']);
      const upd = await admin.api.patch(`/webhooks/${ok.body.id}`, { url });
      expect(upd.status, url).toBe(400);
    }
  });

  it('at send time too: a subscription whose URL points at loopback gets nothing sent, the attempt says refused; ping too', async () => {
    const res = await admin.api.post('/webhooks', { url: PUBLIC_URL, events: ['device.'], orgId: orgA.id });
    // As if the name had been re-pointed at an internal address after the check.
    await t.deps.db
      .update(webhooks)
      .set({ url: `https://127.0.0.1:${rcv.port}/hook` })
      .where(eq(webhooks.id, res.body.id));
    await recordEvent(t, { action: 'device.moved', partnerId, orgId: orgA.id });
    t.deps.webhooks.kick();
    const [row] = await until('the refused attempt', async () => {
      const rows = await deliveryRows(t, res.body.id);
      return rows[0]?.attempts === 1 && rows[0].leasedUntil === null ? rows : undefined;
    });
    expect(row!.lastError).toMatch(/^refused: .*private address/);
    const ping = await admin.api.post(`/webhooks/${res.body.id}/ping`);
    expect(ping.body).toMatchObject({ ok: false, status: null, error: expect.stringMatching(/private address/) });
    // Plain http is refused the same way.
    await t.deps.db
      .update(webhooks)
      .set({ url: `http://127.0.0.1:${rcv.port}/hook` })
      .where(eq(webhooks.id, res.body.id));
    expect((await admin.api.post(`/webhooks/${res.body.id}/ping`)).body.error).toMatch(/https/);
    expect(rcv.requests).toEqual([]);
  });

  it('WEBHOOKS_ALLOW_INSECURE is refused in production', async () => {
    const { loadConfig } = await import('../../src/config.js');
    expect(() => loadConfig({ ...t.env, NODE_ENV: 'production', WEBHOOKS_ALLOW_INSECURE: 'true' })).toThrow(
      /WEBHOOKS_ALLOW_INSECURE/,
    );
  });
});

describe('pausing and deleting', () => {
  it('active: false queues nothing new; delete removes the subscription and its log; both audited', async () => {
    const res = await admin.api.post('/webhooks', { url: PUBLIC_URL, events: ['device.'], orgId: orgA.id });
    const id = res.body.id;
    expect((await admin.api.patch(`/webhooks/${id}`, { active: false })).body.active).toBe(false);
    await recordEvent(t, { action: 'device.paused', partnerId, orgId: orgA.id });
    expect(await deliveryRows(t, id)).toHaveLength(0);
    expect((await admin.api.delete(`/webhooks/${id}`)).body).toEqual({ success: true });
    expect((await admin.api.get(`/webhooks/${id}`)).status).toBe(404);
    const actions = (
      await t.deps.db.select().from(auditLogs).where(eq(auditLogs.resourceId, id)).orderBy(auditLogs.seq)
    ).map((a) => a.action);
    expect(actions).toEqual(['webhook.create', 'webhook.update', 'webhook.delete']);
  });
});

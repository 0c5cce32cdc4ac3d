// Enrollment keys and the agent endpoints: defaults maxUsage 1 and 60 minutes, optional site;
// the key is shown once and stored hashed; enrolment places the device in the key's site; expired, exhausted and
// unknown keys are refused; maxUsage holds under concurrent enrolments; an inventory report replaces the previous one.
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devices, enrollmentKeys } from '../../src/db/schema/index.js';
import { startApp, type TestApp } from '../support/app.js';
import { createOrg, createSite, partnerAdmin } from '../support/fixtures.js';
import { createKey, enroll, enrolledDevice, expectError, expectStatus } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  // The per-IP enrolment limit is not under test here; every agent of this file comes from 127.0.0.1.
  t = await startApp({ RATE_LIMIT_ENROLL: '10000/60' });
});
afterAll(async () => t?.close());

const HOUR = 60 * 60 * 1000;

async function tenant() {
  const { api, partner } = await partnerAdmin(t);
  const org = await createOrg(t, partner.id);
  const site = await createSite(t, org.id, 'HQ');
  return { api, partner, org, site };
}

describe('enrollment keys', () => {
  it('defaults: maxUsage 1, expiry 60 minutes after creation, no site; the key is shown once', async () => {
    const { api, org } = await tenant();
    const before = t.clock.now().getTime();
    const key = await createKey(api, { orgId: org.id, name: 'defaults' });
    const after = t.clock.now().getTime();
    expect(key).toEqual({
      id: expect.any(String),
      orgId: org.id,
      siteId: null,
      deviceGroupId: null,
      name: 'defaults',
      maxUsage: 1,
      usageCount: 0,
      expiresAt: expect.any(String),
      createdAt: expect.any(String),
      key: expect.stringMatching(/^\S{20,}$/),
    });
    const expires = Date.parse(key.expiresAt);
    expect(expires).toBeGreaterThanOrEqual(before + HOUR - 1);
    expect(expires).toBeLessThanOrEqual(after + HOUR + 1);
    expect(Math.abs(expires - Date.parse(key.createdAt) - HOUR)).toBeLessThan(5000);
    const read = expectStatus(await api.get(`/enrollment-keys/${key.id}`), 200);
    const { key: _shownOnce, ...withoutKey } = key;
    expect(read.body).toEqual(withoutKey);
    const list = expectStatus(await api.get('/enrollment-keys', { query: { orgId: org.id } }), 200);
    expect(list.body.data).toEqual([withoutKey]);
    expect(read.text + list.text).not.toContain(key.key);
  });

  it('the database holds only a hash of the key, never the key itself', async () => {
    const { api, org, site } = await tenant();
    const key = await createKey(api, { orgId: org.id, siteId: site.id, name: 'hashed', maxUsage: 3 });
    const [row] = await t.deps.db.select().from(enrollmentKeys).where(eq(enrollmentKeys.id, key.id));
    expect(row!.keyHash).not.toBe(key.key);
    expect(row!.keyHash).not.toContain(key.key);
    expect(row!.keyHash).toMatch(/^[0-9a-f]{64}$/);
    // No column of any table carries the plaintext (the audit record of the creation included).
    const tables = ['enrollment_keys', 'audit_logs', 'devices'];
    for (const table of tables) {
      const res = (await t.deps.db.execute(
        sql.raw(`select count(*)::int as n from ${table} t where t::text like '%${key.key.replace(/'/g, "''")}%'`),
      )) as unknown as { rows: { n: number }[] };
      expect(Number(res.rows[0]!.n), table).toBe(0);
    }
    // The stored hash is not itself a usable key.
    expectError(await enroll(t, { enrollmentKey: row!.keyHash }), 401, 'enrollment_key_invalid');
    expectStatus(await enroll(t, { enrollmentKey: key.key }), 201);
  });

  it('maxUsage, expiresAt and siteId may be given; bad values are refused', async () => {
    const { api, partner, org, site } = await tenant();
    const expiresAt = new Date(t.clock.now().getTime() + 7 * 24 * HOUR).toISOString();
    const key = await createKey(api, { orgId: org.id, siteId: site.id, name: 'wave 1', maxUsage: 36, expiresAt });
    expect(key).toMatchObject({ siteId: site.id, maxUsage: 36, usageCount: 0, expiresAt });
    const otherOrg = await createOrg(t, partner.id);
    const foreignSite = await createSite(t, otherOrg.id);
    expectError(
      await api.post('/enrollment-keys', { orgId: org.id, siteId: foreignSite.id, name: 'x' }),
      400,
      'validation_failed',
    );
    expectError(
      await api.post('/enrollment-keys', { orgId: org.id, name: 'x', maxUsage: 0 }),
      400,
      'validation_failed',
    );
    expectError(
      await api.post('/enrollment-keys', {
        orgId: org.id,
        name: 'x',
        expiresAt: new Date(t.clock.now().getTime() - 1000).toISOString(),
      }),
      400,
      'validation_failed',
    );
    expectError(
      await api.raw.post('/enrollment-keys', { orgId: org.id, name: 'x', key: 'my-own-key-1234' }),
      400,
      'validation_failed',
    );
    expectError(await api.raw.post('/enrollment-keys', { name: 'x' }), 400, 'validation_failed');
  });

  it('a deleted key stops working at once', async () => {
    const { api, org, site } = await tenant();
    const key = await createKey(api, { orgId: org.id, siteId: site.id, maxUsage: 10 });
    expectStatus(await enroll(t, { enrollmentKey: key.key }), 201);
    expect(expectStatus(await api.delete(`/enrollment-keys/${key.id}`), 200).body).toEqual({ success: true });
    expectError(await api.get(`/enrollment-keys/${key.id}`), 404, 'not_found');
    expectError(await enroll(t, { enrollmentKey: key.key }), 401, 'enrollment_key_invalid');
    expectError(await api.delete(`/enrollment-keys/${key.id}`), 404, 'not_found');
  });
});

describe('POST /agents/enroll', () => {
  it("places the device in the key's site and answers deviceId, agentToken, orgId, siteId", async () => {
    const { api, org, site } = await tenant();
    const other = await createSite(t, org.id, 'Branch');
    const key = await createKey(api, { orgId: org.id, siteId: site.id, maxUsage: 2 });
    const res = expectStatus(
      await enroll(t, {
        enrollmentKey: key.key,
        hostname: 'NW-HQ-001',
        osType: 'windows',
        osVersion: '11 23H2',
        agentVersion: '2.4.0',
      }),
      201,
    );
    expect(res.body).toEqual({
      deviceId: expect.any(String),
      agentToken: expect.any(String),
      orgId: org.id,
      siteId: site.id,
    });
    const device = expectStatus(await api.get(`/devices/${res.body.deviceId}`), 200);
    expect(device.body).toMatchObject({
      id: res.body.deviceId,
      orgId: org.id,
      siteId: site.id,
      hostname: 'NW-HQ-001',
      osType: 'windows',
      osVersion: '11 23H2',
      agentVersion: '2.4.0',
      inventory: null,
    });
    // The key's site wins over a site named in the body.
    const second = expectStatus(await enroll(t, { enrollmentKey: key.key, siteId: other.id }), 201);
    expect(second.body.siteId).toBe(site.id);
    expect(expectStatus(await api.get(`/enrollment-keys/${key.id}`), 200).body.usageCount).toBe(2);
  });

  it('a key without a site takes the site named in the body; with neither, 400 site_required and the use is not counted', async () => {
    const { api, partner, org, site } = await tenant();
    const key = await createKey(api, { orgId: org.id, maxUsage: 2 });
    expectError(await enroll(t, { enrollmentKey: key.key }), 400, 'site_required');
    const foreign = await createSite(t, (await createOrg(t, partner.id)).id);
    expectError(await enroll(t, { enrollmentKey: key.key, siteId: foreign.id }), 400, 'site_required');
    expect(expectStatus(await api.get(`/enrollment-keys/${key.id}`), 200).body.usageCount).toBe(0);
    const ok = expectStatus(await enroll(t, { enrollmentKey: key.key, siteId: site.id }), 201);
    expect(ok.body).toMatchObject({ orgId: org.id, siteId: site.id });
    expect(expectStatus(await api.get(`/enrollment-keys/${key.id}`), 200).body.usageCount).toBe(1);
    expect((await t.deps.db.select().from(devices).where(eq(devices.orgId, org.id))).map((d) => d.siteId)).toEqual([
      site.id,
    ]);
  });

  it('an unknown key is enrollment_key_invalid; a used-up key enrollment_key_exhausted (401)', async () => {
    const { api, org, site } = await tenant();
    expectError(await enroll(t, { enrollmentKey: 'ghek_this-key-does-not-exist' }), 401, 'enrollment_key_invalid');
    const single = await createKey(api, { orgId: org.id, siteId: site.id });
    expectStatus(await enroll(t, { enrollmentKey: single.key }), 201);
    expectError(await enroll(t, { enrollmentKey: single.key }), 401, 'enrollment_key_exhausted');
    const two = await createKey(api, { orgId: org.id, siteId: site.id, maxUsage: 2 });
    expectStatus(await enroll(t, { enrollmentKey: two.key }), 201);
    expectStatus(await enroll(t, { enrollmentKey: two.key }), 201);
    expectError(await enroll(t, { enrollmentKey: two.key }), 401, 'enrollment_key_exhausted');
    expect(expectStatus(await api.get(`/enrollment-keys/${two.id}`), 200).body).toMatchObject({
      maxUsage: 2,
      usageCount: 2,
    });
    expect(await t.deps.db.select().from(devices).where(eq(devices.orgId, org.id))).toHaveLength(3);
    expectError(
      await t.client().raw.post('/agents/enroll', { enrollmentKey: two.key, hostname: 'x', osType: 'amiga' }),
      400,
      'validation_failed',
    );
  });

  it('an expired key is enrollment_key_expired (401); a key given a longer life still works', async () => {
    const { api, org, site } = await tenant();
    const short = await createKey(api, { orgId: org.id, siteId: site.id, maxUsage: 5 });
    const usedUp = await createKey(api, { orgId: org.id, siteId: site.id });
    const long = await createKey(api, {
      orgId: org.id,
      siteId: site.id,
      maxUsage: 5,
      expiresAt: new Date(t.clock.now().getTime() + 3 * HOUR).toISOString(),
    });
    expectStatus(await enroll(t, { enrollmentKey: usedUp.key }), 201);
    t.clock.advance(59 * 60 * 1000);
    expectStatus(await enroll(t, { enrollmentKey: short.key }), 201);
    t.clock.advance(2 * 60 * 1000);
    expectError(await enroll(t, { enrollmentKey: short.key }), 401, 'enrollment_key_expired');
    // Expired and used up at once: expiry is what the agent is told.
    expectError(await enroll(t, { enrollmentKey: usedUp.key }), 401, 'enrollment_key_expired');
    expectStatus(await enroll(t, { enrollmentKey: long.key }), 201);
    expect(await t.deps.db.select().from(devices).where(eq(devices.orgId, org.id))).toHaveLength(3);
  });

  it('maxUsage holds under concurrency: 50 simultaneous enrolments against maxUsage 5 create exactly 5 devices', async () => {
    const { api, org, site } = await tenant();
    const key = await createKey(api, { orgId: org.id, siteId: site.id, maxUsage: 5, name: 'race' });
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        enroll(t, { enrollmentKey: key.key, hostname: `race-${String(i).padStart(2, '0')}` }),
      ),
    );
    const created = results.filter((r) => r.status === 201);
    expect(created).toHaveLength(5);
    for (const r of results.filter((x) => x.status !== 201)) expectError(r, 401, 'enrollment_key_exhausted');
    expect(new Set(created.map((r) => r.body.deviceId)).size).toBe(5);
    const rows = await t.deps.db.select().from(devices).where(eq(devices.enrollmentKeyId, key.id));
    expect(rows).toHaveLength(5);
    expect(expectStatus(await api.get('/devices', { query: { orgId: org.id } }), 200).body.data).toHaveLength(5);
    expect(expectStatus(await api.get(`/enrollment-keys/${key.id}`), 200).body.usageCount).toBe(5);
  });
});

describe('POST /agents/inventory', () => {
  it("replaces the device's previous inventory and patch state; a second report does not append", async () => {
    const { api, org, site } = await tenant();
    const agent = await enrolledDevice(t, api, org.id, site.id, 'inv-1');
    const bystander = await enrolledDevice(t, api, org.id, site.id, 'inv-2');
    const first = await t.client().post(
      '/agents/inventory',
      {
        hardware: { cpu: 'Intel i5', ramGb: 16, tpm: true },
        software: [
          { name: 'Chrome', version: '120' },
          { name: 'Office', version: '2021' },
        ],
        patches: [
          { id: 'KB500001', status: 'missing', severity: 'critical' },
          { id: 'KB500002', status: 'installed' },
        ],
      },
      { token: agent.agentToken },
    );
    expect(expectStatus(first, 200).body).toEqual({ success: true, deviceId: agent.deviceId, software: 2, patches: 2 });
    const one = expectStatus(await api.get(`/devices/${agent.deviceId}`), 200).body;
    expect(one.inventory).toMatchObject({
      hardware: { cpu: 'Intel i5', ramGb: 16, tpm: true },
      software: [
        { name: 'Chrome', version: '120' },
        { name: 'Office', version: '2021' },
      ],
      patches: [
        { id: 'KB500001', status: 'missing', severity: 'critical' },
        { id: 'KB500002', status: 'installed' },
      ],
    });

    t.clock.advance(60_000);
    const second = await t.client().post(
      '/agents/inventory',
      {
        hardware: { cpu: 'Intel i7' },
        software: [{ name: 'Firefox', version: '121' }],
        patches: [{ id: 'KB500001', status: 'installed' }],
      },
      { token: agent.agentToken },
    );
    expectStatus(second, 200);
    const two = expectStatus(await api.get(`/devices/${agent.deviceId}`), 200).body;
    expect(two.inventory!.hardware).toEqual({ cpu: 'Intel i7' });
    expect(two.inventory!.software).toEqual([{ name: 'Firefox', version: '121' }]);
    expect(two.inventory!.patches).toEqual([{ id: 'KB500001', status: 'installed' }]);
    expect(Date.parse(two.inventory!.reportedAt)).toBeGreaterThan(Date.parse(one.inventory!.reportedAt));
    expect(Date.parse(two.lastSeenAt!)).toBeGreaterThan(Date.parse(one.lastSeenAt!));
    // An empty report empties the state; another device's state is untouched.
    expectStatus(
      await t
        .client()
        .post('/agents/inventory', { hardware: {}, software: [], patches: [] }, { token: agent.agentToken }),
      200,
    );
    expect(expectStatus(await api.get(`/devices/${agent.deviceId}`), 200).body.inventory).toMatchObject({
      hardware: {},
      software: [],
      patches: [],
    });
    expect(expectStatus(await api.get(`/devices/${bystander.deviceId}`), 200).body.inventory).toBeNull();
  });

  it('a wrong, missing or non-agent token is 401 invalid_agent_token and changes nothing', async () => {
    const { api, org, site } = await tenant();
    const agent = await enrolledDevice(t, api, org.id, site.id);
    const body = { hardware: { cpu: 'x' }, software: [], patches: [] };
    expectError(
      await t.client().post('/agents/inventory', body, { token: `${agent.agentToken}x` }),
      401,
      'invalid_agent_token',
    );
    expectError(
      await t.client().post('/agents/inventory', body, { token: 'ghat_not-a-real-token' }),
      401,
      'invalid_agent_token',
    );
    expectError(await t.client().post('/agents/inventory', body), 401, 'invalid_agent_token');
    expectError(await api.post('/agents/inventory', body), 401, 'invalid_agent_token'); // a user's access token is not an agent token
    expect(expectStatus(await api.get(`/devices/${agent.deviceId}`), 200).body.inventory).toBeNull();
    // Once the device is deleted its token is dead.
    expectStatus(await api.delete(`/devices/${agent.deviceId}`), 200);
    expectError(
      await t.client().post('/agents/inventory', body, { token: agent.agentToken }),
      401,
      'invalid_agent_token',
    );
  });
});

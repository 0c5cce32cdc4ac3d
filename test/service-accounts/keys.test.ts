// API keys, each security property a named test: the hash only at rest, the key shown once, revocation
// on another instance, the CIDR allow-list (IPv4 and IPv6, through X-Forwarded-For with TRUST_PROXY), expiry, two
// active keys, tenant isolation of a key, people-only routes, the per-key rate limit, last use and the audit trail.
import { createHash, randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceAccountKeys } from '../../src/db/schema/index.js';
import { API_KEY_PATTERN } from '../../src/modules/service-accounts/key-format.js';
import { startApp, startPeer, type TestApp } from '../support/app.js';
import { auditRecords, createSite, type OnboardingTenant, onboardingTenant } from '../support/fixtures.js';
import { createServiceAccount, issueKey, serviceAccountWithKey } from '../support/service-accounts.js';
import { waitForRecord } from '../audit/helpers.js';
import { expectError, ORG_ADMIN, ORG_VIEWER, PARTNER_TECH, PARTNER_VIEWER } from '../onboarding/helpers.js';

let t: TestApp;
let w: OnboardingTenant;
beforeAll(async () => {
  t = await startApp({ TRUST_PROXY: 'true', RATE_LIMIT_API_KEY: '40/60' });
  w = await onboardingTenant(t);
});
afterAll(async () => t?.close());

const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });
const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((r) => r.id);

describe('a key is stored as its SHA-256 only', () => {
  it('the row holds sha256(key) and nothing of the secret; the trail and the log never see it', async () => {
    const sa = await serviceAccountWithKey(w.admin.api, { roleId: PARTNER_VIEWER });
    const secret = sa.key.key.split('_').pop()!;
    const [row] = await t.deps.db.select().from(serviceAccountKeys).where(eq(serviceAccountKeys.id, sa.key.id));
    expect(row!.keyHash).toBe(createHash('sha256').update(sa.key.key).digest('hex'));
    const everything = JSON.stringify(
      await t.deps.db.execute(
        sql`select * from service_account_keys k join service_accounts a on a.id = k.service_account_id where k.id = ${sa.key.id}`,
      ),
    );
    expect(everything).not.toContain(secret);
    expect((await sa.api.get('/orgs/organizations')).status).toBe(200);
    const trail = JSON.stringify(await t.deps.db.execute(sql`select * from audit_logs`));
    expect(trail).not.toContain(secret);
    expect(t.logs()).not.toContain(secret);
  });
});

describe('a key is shown once', () => {
  it('the 201 carries the key in the gh_<environment>_<id prefix>_<secret> form; no later answer does', async () => {
    const account = await createServiceAccount(w.admin.api, { roleId: PARTNER_VIEWER });
    const created = await w.admin.api.post(`/service-accounts/${account.id}/keys`, { name: 'ci' });
    expect(created.status, created.text).toBe(201);
    const key = created.body.key as string;
    expect(key).toMatch(API_KEY_PATTERN);
    expect(key).toMatch(/^gh_test_[0-9a-f]{12}_[0-9A-Za-z]{43}$/); // 43 base62 characters = 256 bits
    expect(key.startsWith(`${created.body.prefix}_`)).toBe(true);
    expect(created.body.id.replace(/-/g, '').slice(0, 12)).toBe(key.split('_')[2]);
    const list = await w.admin.api.get(`/service-accounts/${account.id}/keys`);
    expect(list.body.data).toEqual([
      expect.objectContaining({ id: created.body.id, prefix: created.body.prefix, name: 'ci', active: true }),
    ]);
    expect(list.body.data[0]).not.toHaveProperty('key');
    const secret = key.split('_').pop()!;
    for (const text of [
      list.text,
      (await w.admin.api.get(`/service-accounts/${account.id}`)).text,
      (await w.admin.api.get('/service-accounts')).text,
    ])
      expect(text).not.toContain(secret);
  });
});

describe('a key authenticates as its service account, in its scope', () => {
  it('reads what the role allows, is refused what it does not (403 forbidden), and sees only its organisation', async () => {
    const sa = await serviceAccountWithKey(w.admin.api, { roleId: ORG_VIEWER, orgId: w.orgs[0].id });
    const orgs = await sa.api.get('/orgs/organizations');
    expect(orgs.status, orgs.text).toBe(200);
    expect(ids(orgs)).toEqual([w.orgs[0].id]);
    expectError(await sa.api.post('/orgs/sites', { orgId: w.orgs[0].id, name: 'nope' }), 403, 'forbidden');
  });

  it("tenant isolation: organisation A's key cannot read organisation B (404), nor another partner", async () => {
    const sa = await serviceAccountWithKey(w.admin.api, { roleId: ORG_VIEWER, orgId: w.orgs[0].id });
    const siteB = await createSite(t, w.orgs[1].id);
    expectError(await sa.api.get(`/orgs/organizations/${w.orgs[1].id}`), 404, 'not_found');
    expectError(await sa.api.get(`/orgs/sites/${siteB.id}`), 404, 'not_found');
    expectError(await sa.api.get('/orgs/sites', { query: { orgId: w.orgs[1].id } }), 404, 'not_found');
    expect(ids(await sa.api.get('/orgs/sites'))).not.toContain(siteB.id);
    const other = await onboardingTenant(t);
    expectError(await sa.api.get(`/orgs/organizations/${other.orgs[0].id}`), 404, 'not_found');
    // The partner's own account reaches both organisations.
    const partnerSa = await serviceAccountWithKey(w.admin.api, { roleId: PARTNER_VIEWER });
    expect(ids(await partnerSa.api.get('/orgs/organizations'))).toEqual(
      expect.arrayContaining([w.orgs[0].id, w.orgs[1].id]),
    );
    expect(ids(await partnerSa.api.get('/orgs/organizations'))).not.toContain(other.orgs[0].id);
  });

  it('a role change applies on the next request; disabling or deleting the account refuses its keys at once', async () => {
    const sa = await serviceAccountWithKey(w.admin.api, { roleId: ORG_VIEWER, orgId: w.orgs[0].id });
    expectError(
      await sa.api.post('/orgs/sites', { orgId: w.orgs[0].id, name: `S ${randomUUID().slice(0, 6)}` }),
      403,
      'forbidden',
    );
    expect((await w.admin.api.patch(`/service-accounts/${sa.account.id}`, { roleId: ORG_ADMIN })).status).toBe(200);
    expect(
      (await sa.api.post('/orgs/sites', { orgId: w.orgs[0].id, name: `S ${randomUUID().slice(0, 6)}` })).status,
    ).toBe(201);
    expect((await w.admin.api.patch(`/service-accounts/${sa.account.id}`, { disabled: true })).status).toBe(200);
    expectError(await sa.api.get('/orgs/organizations'), 401, 'unauthenticated');
    expect((await w.admin.api.patch(`/service-accounts/${sa.account.id}`, { disabled: false })).status).toBe(200);
    expect((await sa.api.get('/orgs/organizations')).status).toBe(200);
    expect((await w.admin.api.delete(`/service-accounts/${sa.account.id}`)).status).toBe(200);
    expectError(await sa.api.get('/orgs/organizations'), 401, 'unauthenticated');
  });

  it('a wrong secret, an unknown prefix and a key of another environment are 401', async () => {
    const sa = await serviceAccountWithKey(w.admin.api, { roleId: PARTNER_VIEWER });
    const [, env, prefix, secret] = sa.key.key.split('_');
    const flipped = `${secret!.slice(0, -1)}${secret!.endsWith('A') ? 'B' : 'A'}`;
    for (const bad of [
      `gh_${env}_${prefix}_${flipped}`,
      `gh_${env}_000000000000_${secret}`,
      `gh_live_${prefix}_${secret}`,
      'gh_test_short',
    ]) {
      expectError(await sa.api.get('/orgs/organizations', { token: bad }), 401, 'unauthenticated');
    }
  });
});

describe('actions by a key are audited with the service account as the actor', () => {
  it('actorType service_account, actorUserId = the account, the key named; no e-mail', async () => {
    const sa = await serviceAccountWithKey(w.admin.api, { roleId: ORG_ADMIN, orgId: w.orgs[0].id });
    const site = await sa.api.post('/orgs/sites', {
      orgId: w.orgs[0].id,
      name: `Made by a key ${randomUUID().slice(0, 6)}`,
    });
    expect(site.status, site.text).toBe(201);
    const [record] = await auditRecords(t, 'site.create', site.body.id);
    expect(record).toMatchObject({ actorUserId: sa.account.id, actorEmail: null, orgId: w.orgs[0].id });
    expect(record!.details).toMatchObject({
      actorType: 'service_account',
      serviceAccountName: sa.account.name,
      clientId: sa.account.clientId,
      keyId: sa.key.id,
    });
    // The audit API shows it the same way.
    const listed = await w.admin.api.get('/audit-logs', { query: { actorUserId: sa.account.id } });
    expect(listed.body.data.map((r: { action: string }) => r.action)).toContain('site.create');
  });

  it('issuing and revoking a key are audited (by the person), without the key', async () => {
    const account = await createServiceAccount(w.admin.api, { roleId: PARTNER_VIEWER });
    const key = await issueKey(w.admin.api, account.id, { allowedCidrs: ['203.0.113.0/24'] });
    expect((await w.admin.api.delete(`/service-accounts/${account.id}/keys/${key.id}`)).status).toBe(200);
    const [created] = await auditRecords(t, 'service_account.key.create', key.id);
    const [revoked] = await auditRecords(t, 'service_account.key.revoke', key.id);
    expect(created).toMatchObject({ actorUserId: w.admin.user.id, partnerId: w.partner.id });
    expect(created!.details).toMatchObject({
      serviceAccountId: account.id,
      keyPrefix: key.prefix,
      allowedCidrs: ['203.0.113.0/24'],
    });
    expect(revoked).toMatchObject({ actorUserId: w.admin.user.id });
    expect(JSON.stringify([created, revoked])).not.toContain(key.key.split('_').pop()!);
  });
});

describe('a revoked key is refused on the next request, on every instance', () => {
  it('revoked on one instance, refused by another that just accepted it (no cache outlives a revoke)', async () => {
    const peer = await startPeer(t);
    try {
      const sa = await serviceAccountWithKey(w.admin.api, { roleId: PARTNER_VIEWER });
      const onPeer = peer.client().withToken(sa.key.key);
      expect((await onPeer.get('/orgs/organizations')).status).toBe(200);
      const revoked = await w.admin.api.delete(`/service-accounts/${sa.account.id}/keys/${sa.key.id}`);
      expect(revoked.status, revoked.text).toBe(200);
      expect(revoked.body).toMatchObject({ id: sa.key.id, active: false, revokedAt: expect.any(String) });
      expectError(await onPeer.get('/orgs/organizations'), 401, 'unauthenticated');
      expectError(await sa.api.get('/orgs/organizations'), 401, 'unauthenticated');
    } finally {
      await peer.close();
    }
  });
});

describe('two keys may be active at once (rotation overlap), not three', () => {
  it('both keys work; a third is 409 key_limit_reached until one is revoked', async () => {
    const account = await createServiceAccount(w.admin.api, { roleId: PARTNER_VIEWER });
    const [a, b] = [await issueKey(w.admin.api, account.id), await issueKey(w.admin.api, account.id)];
    for (const k of [a, b]) expect((await t.client().withToken(k.key).get('/orgs/organizations')).status).toBe(200);
    expectError(
      await w.admin.api.post(`/service-accounts/${account.id}/keys`, { name: 'third' }),
      409,
      'key_limit_reached',
    );
    expect((await w.admin.api.get(`/service-accounts/${account.id}`)).body.activeKeyCount).toBe(2);
    await w.admin.api.delete(`/service-accounts/${account.id}/keys/${a.id}`);
    const c = await issueKey(w.admin.api, account.id);
    expect((await t.client().withToken(c.key).get('/orgs/organizations')).status).toBe(200);
    expect((await t.client().withToken(b.key).get('/orgs/organizations')).status).toBe(200);
  });

  it('concurrent issues cannot pass the limit together', async () => {
    const account = await createServiceAccount(w.admin.api, { roleId: PARTNER_VIEWER });
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        w.admin.api.post(`/service-accounts/${account.id}/keys`, { name: `race ${i}` }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(2);
    for (const r of results.filter((x) => x.status !== 201)) expectError(r, 409, 'key_limit_reached');
  });
});

describe('CIDR allow-list (IPv4 and IPv6)', () => {
  it('a key limited to 10.0.0.0/8 and 2001:db8::/32 works from inside either block and is refused from anywhere else', async () => {
    const sa = await serviceAccountWithKey(w.admin.api, {
      roleId: PARTNER_VIEWER,
      keyOptions: { allowedCidrs: ['10.1.2.3/8', '2001:DB8::/32'] },
    });
    expect((sa.key as unknown as { allowedCidrs: string[] }).allowedCidrs).toEqual(['10.0.0.0/8', '2001:db8::/32']);
    for (const ip of ['10.9.8.7', '2001:db8::5', '2001:db8:ffff::1', '::ffff:10.0.0.1'])
      expect((await sa.api.get('/orgs/organizations', from(ip))).status, ip).toBe(200);
    for (const ip of ['192.0.2.1', '11.0.0.1', '2001:db9::1', '::1'])
      expectError(await sa.api.get('/orgs/organizations', from(ip)), 403, 'ip_not_allowed');
    // No X-Forwarded-For: the connection's own address (127.0.0.1) is outside both blocks.
    expectError(await sa.api.get('/orgs/organizations'), 403, 'ip_not_allowed');
  });

  it('a loopback block admits the test client itself (127.0.0.1, no proxy header); an empty list admits every address', async () => {
    const loop = await serviceAccountWithKey(w.admin.api, {
      roleId: PARTNER_VIEWER,
      keyOptions: { allowedCidrs: ['127.0.0.0/8', '::1/128'] },
    });
    expect((await loop.api.get('/orgs/organizations')).status).toBe(200);
    const open = await serviceAccountWithKey(w.admin.api, { roleId: PARTNER_VIEWER });
    for (const ip of ['198.51.100.7', '2001:db8::1'])
      expect((await open.api.get('/orgs/organizations', from(ip))).status).toBe(200);
  });

  it('blocks that are not CIDR are refused at issue, naming the entry', async () => {
    const account = await createServiceAccount(w.admin.api, { roleId: PARTNER_VIEWER });
    for (const bad of ['10.0.0.0', '10.0.0.0/33', '10.1/8', 'example.com/24', '2001:db8::/129']) {
      const res = await w.admin.api.post(`/service-accounts/${account.id}/keys`, {
        name: 'bad',
        allowedCidrs: ['192.0.2.0/24', bad],
      });
      expectError(res, 400, 'validation_failed');
      expect(Object.keys(res.body.details.fieldErrors), bad).toEqual(['allowedCidrs.1']);
    }
  });
});

describe('last use: when and from where, written at most once a minute; a new address is audited once', () => {
  it('lastUsedAt and lastUsedIp are set by the first use and not rewritten within the minute', async () => {
    const sa = await serviceAccountWithKey(w.admin.api, { roleId: PARTNER_VIEWER });
    const keyRow = async () =>
      (await t.deps.db.select().from(serviceAccountKeys).where(eq(serviceAccountKeys.id, sa.key.id)))[0]!;
    expect((await keyRow()).lastUsedAt).toBeNull();
    await sa.api.get('/orgs/organizations', from('198.51.100.1'));
    const first = await keyRow();
    expect(first.lastUsedIp).toBe('198.51.100.1');
    t.clock.advance(20_000);
    await sa.api.get('/orgs/organizations', from('198.51.100.1'));
    expect((await keyRow()).lastUsedAt!.getTime()).toBe(first.lastUsedAt!.getTime());
    t.clock.advance(41_000);
    await sa.api.get('/orgs/organizations', from('198.51.100.2'));
    const later = await keyRow();
    expect(later.lastUsedAt!.getTime()).toBeGreaterThan(first.lastUsedAt!.getTime());
    expect(later.lastUsedIp).toBe('198.51.100.2');
    const listed = await w.admin.api.get(`/service-accounts/${sa.account.id}/keys`);
    expect(listed.body.data[0]).toMatchObject({
      lastUsedAt: later.lastUsedAt!.toISOString(),
      lastUsedIp: '198.51.100.2',
    });
  });

  it('each new address is audited exactly once, even under concurrent first uses', async () => {
    const sa = await serviceAccountWithKey(w.admin.api, { roleId: PARTNER_VIEWER });
    await Promise.all(Array.from({ length: 6 }, () => sa.api.get('/orgs/organizations', from('203.0.113.9'))));
    await sa.api.get('/orgs/organizations', from('203.0.113.10'));
    await sa.api.get('/orgs/organizations', from('203.0.113.9'));
    const records = await auditRecords(t, 'service_account.key.new_ip', sa.key.id);
    expect(records.map((r) => r.ip).sort()).toEqual(['203.0.113.10', '203.0.113.9']);
    expect(records[0]).toMatchObject({ actorUserId: sa.account.id, partnerId: w.partner.id });
    expect(records[0]!.details).toMatchObject({
      actorType: 'service_account',
      keyPrefix: sa.key.prefix.split('_').pop(),
    });
  });
});

describe('routes for people only refuse a service account (403 service_account_not_allowed)', () => {
  it('every authenticated route under /auth and /users/me, from the document', async () => {
    const sa = await serviceAccountWithKey(w.admin.api, { roleId: PARTNER_VIEWER });
    const doc = (await (await fetch(`${t.baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { security?: unknown[] }>>;
    };
    const checked: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      if (!/^\/api\/v1\/(auth\/|users\/me$)/.test(path)) continue;
      for (const [method, op] of Object.entries(item)) {
        if (!['get', 'post', 'patch', 'put', 'delete'].includes(method) || op.security?.length === 0) continue;
        const res = await sa.api.raw.request(method.toUpperCase(), path.replace(/\{[^}]+\}/g, randomUUID()), {
          body: method === 'get' || method === 'delete' ? undefined : {},
        });
        expectError(res, 403, 'service_account_not_allowed');
        checked.push(`${method} ${path}`);
      }
    }
    expect(checked).toEqual(
      expect.arrayContaining([
        'get /api/v1/auth/me',
        'get /api/v1/users/me',
        'post /api/v1/auth/mfa/setup',
        'post /api/v1/auth/change-password',
        'get /api/v1/auth/sessions',
        'post /api/v1/auth/logout',
      ]),
    );
    // Each refusal is an access.denied record naming the account (a leaked key probing shows in the trail).
    const denied = await waitForRecord(w.admin.api, { action: 'access.denied', actorUserId: sa.account.id });
    expect(denied.details).toMatchObject({
      errorCode: 'service_account_not_allowed',
      actorType: 'service_account',
      keyId: sa.key.id,
    });
  });

  it('risky (step-up) routes refuse it too: a key cannot issue keys, even with api_keys:write', async () => {
    const role = await w.admin.api.post('/roles', {
      name: `Key manager ${randomUUID().slice(0, 6)}`,
      permissions: [
        { resource: 'api_keys', action: 'read' },
        { resource: 'api_keys', action: 'write' },
        { resource: 'organizations', action: 'read' },
      ],
    });
    expect(role.status, role.text).toBe(201);
    const sa = await serviceAccountWithKey(w.admin.api, { roleId: role.body.id });
    const small = await w.admin.api.post('/roles', {
      name: `Org reader ${randomUUID().slice(0, 6)}`,
      permissions: [{ resource: 'organizations', action: 'read' }],
    });
    const target = await createServiceAccount(w.admin.api, { roleId: small.body.id });
    const seen = await sa.api.get(`/service-accounts/${target.id}/keys`);
    expect(seen.status, seen.text).toBe(200);
    expectError(
      await sa.api.post(`/service-accounts/${target.id}/keys`, { name: 'self-made' }),
      403,
      'service_account_not_allowed',
    );
    expectError(
      await sa.api.patch(`/service-accounts/${target.id}`, { roleId: PARTNER_TECH }),
      403,
      'service_account_not_allowed',
    );
    // A change that is not risky is allowed, and audited with the account as actor.
    expect((await sa.api.patch(`/service-accounts/${target.id}`, { description: 'touched by a key' })).status).toBe(
      200,
    );
    const [record] = await auditRecords(t, 'service_account.update', target.id);
    expect(record!.details).toMatchObject({ actorType: 'service_account', keyId: sa.key.id });
  });
});

describe('per-key rate limit (RATE_LIMIT_API_KEY)', () => {
  it('a key is held at 429 with Retry-After once its window is full; another key of the same account is not', async () => {
    const limited = await startApp({ RATE_LIMIT_API_KEY: '3/60' });
    try {
      const tenant = await onboardingTenant(limited);
      const account = await createServiceAccount(tenant.admin.api, { roleId: PARTNER_VIEWER });
      const [a, b] = [await issueKey(tenant.admin.api, account.id), await issueKey(tenant.admin.api, account.id)];
      const first = limited.client().withToken(a.key);
      for (let i = 0; i < 3; i++) expect((await first.get('/orgs/organizations')).status).toBe(200);
      const refused = await first.get('/orgs/organizations');
      expectError(refused, 429, 'rate_limited');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await limited.client().withToken(b.key).get('/orgs/organizations')).status).toBe(200);
      // The people of the tenant are not counted against it.
      expect((await tenant.admin.api.get('/orgs/organizations')).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

// Last in the file: it moves the shared clock (less than the admin's step-up age and token lifetime).
describe('expiry', () => {
  it('a key works until expiresAt and is refused after; an expiry in the past is refused at issue', async () => {
    const account = await createServiceAccount(w.admin.api, { roleId: PARTNER_VIEWER });
    const expiresAt = new Date(t.clock.now().getTime() + 5 * 60_000).toISOString();
    const key = await issueKey(w.admin.api, account.id, { expiresAt });
    expect(key.expiresAt).toBe(expiresAt);
    const api = t.client().withToken(key.key);
    expect((await api.get('/orgs/organizations')).status).toBe(200);
    t.clock.advance(5 * 60_000 + 1000);
    expectError(await api.get('/orgs/organizations'), 401, 'unauthenticated');
    const listed = await w.admin.api.get(`/service-accounts/${account.id}/keys`);
    expect(listed.body.data[0]).toMatchObject({ id: key.id, active: false });
    const past = await w.admin.api.post(`/service-accounts/${account.id}/keys`, {
      name: 'late',
      expiresAt: new Date(t.clock.now().getTime() - 1000).toISOString(),
    });
    expectError(past, 400, 'validation_failed');
    expect(past.body.details.fieldErrors.expiresAt).toBeDefined();
  });
});

// The customer's controls cover every credential that speaks for the partner in the organisation. Played as the
// partner would: its Partner Admin makes a service account, a key, an OAuth token, a SCIM token for the organisation and
// a partner-wide webhook while it may; then the customer suspends partner access (mspAccess) or sets an IP allow-list,
// and each of those credentials is tried. A second partner's staff are there to show nothing leaks sideways.
import { and, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogs, webhookDeliveries } from '../../src/db/schema/index.js';
import { startApp, type TestApp } from '../support/app.js';
import {
  createDevice,
  createOrg,
  createPartner,
  createSite,
  signedInOrgMember,
  signedInPartnerMember,
  type SignedInMember,
} from '../support/fixtures.js';
import { issueScimToken, ScimClient } from '../support/scim.js';
import { serviceAccountWithKey, type ServiceAccountWithKey } from '../support/service-accounts.js';
import {
  expectError,
  expectStatus,
  ORG_ADMIN,
  PARTNER_ADMIN,
  PARTNER_TECH,
  PARTNER_VIEWER,
} from '../onboarding/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp({ TRUST_PROXY: 'true', WEBHOOKS_ALLOW_INSECURE: 'true' });
}, 120_000);
afterAll(async () => t?.close());

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const OFFICE_IP = '198.51.100.20';
const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });

async function world() {
  const partner = await createPartner(t);
  const org = await createOrg(t, partner.id);
  const site = await createSite(t, org.id);
  const device = await createDevice(t, org, site.id);
  const partnerAdmin = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN });
  const orgAdmin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN });
  // A second partner with an organisation of its own: its staff see nothing of the first either way.
  const rival = await createPartner(t);
  const rivalAdmin = await signedInPartnerMember(t, rival.id, { roleId: PARTNER_ADMIN });
  return { partner, org, site, device, partnerAdmin, orgAdmin, rivalAdmin };
}
type World = Awaited<ReturnType<typeof world>>;

const setMsp = (who: SignedInMember, orgId: string, mspAccess: 'allowed' | 'suspended') =>
  who.api.patch(`/orgs/organizations/${orgId}`, { settings: { mspAccess } });

async function oauthToken(sa: ServiceAccountWithKey): Promise<string> {
  const res = await t
    .client()
    .fresh()
    .raw.request('POST', new URL('/api/v1/oauth/token', t.baseUrl).toString(), {
      rawBody: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: sa.account.clientId,
        client_secret: sa.key.key,
      }).toString(),
      contentType: 'application/x-www-form-urlencoded',
      token: null,
    });
  expect(res.status, res.text).toBe(200);
  return res.body.access_token as string;
}

describe("mspAccess suspended holds the partner's service accounts, their keys and their OAuth tokens", () => {
  let w: World;
  let partnerSa: ServiceAccountWithKey;
  let madeForOrg: ServiceAccountWithKey;
  let customersOwn: ServiceAccountWithKey;
  let token: string;
  beforeAll(async () => {
    w = await world();
    partnerSa = await serviceAccountWithKey(w.partnerAdmin.api, { roleId: PARTNER_TECH });
    madeForOrg = await serviceAccountWithKey(w.partnerAdmin.api, { roleId: ORG_ADMIN, orgId: w.org.id });
    // The customer's own integration, made by its admin (a custom role within Organization Admin's reach).
    const role = expectStatus(
      await w.orgAdmin.api.post('/roles', {
        name: 'Inventory reader',
        permissions: [{ resource: 'devices', action: 'read' }],
      }),
      201,
    ).body;
    const made = await w.orgAdmin.api.post('/service-accounts', { name: 'Customer CMDB', roleId: role.id });
    customersOwn = made.status === 201 ? await keyFor(w.orgAdmin, made.body.id) : (null as never);
    token = await oauthToken(partnerSa);
    for (const api of [partnerSa.api, madeForOrg.api, w.partnerAdmin.api.withToken(token)])
      expectStatus(await api.get(`/devices/${w.device.id}`), 200);
  });

  async function keyFor(admin: SignedInMember, accountId: string): Promise<ServiceAccountWithKey> {
    const key = await admin.api.post(`/service-accounts/${accountId}/keys`, { name: 'k' });
    expect(key.status, key.text).toBe(201);
    return { account: { id: accountId } as never, key: key.body, api: admin.api.withToken(key.body.key) };
  }

  it('the partner service account key is refused on the organisation and leaves it out of lists', async () => {
    expectStatus(await setMsp(w.orgAdmin, w.org.id, 'suspended'), 200);
    expectError(await partnerSa.api.get(`/devices/${w.device.id}`), 403, 'msp_access_denied');
    expectError(await partnerSa.api.get(`/orgs/organizations/${w.org.id}`), 403, 'msp_access_denied');
    const listed = expectStatus(await partnerSa.api.get('/orgs/organizations', { query: { limit: 200 } }), 200);
    expect(listed.body.data.map((o: { id: string }) => o.id)).not.toContain(w.org.id);
  });

  it('the OAuth token obtained earlier with that key is refused the same way', async () => {
    expectError(await w.partnerAdmin.api.withToken(token).get(`/devices/${w.device.id}`), 403, 'msp_access_denied');
    // A token minted now is no way round it either.
    expectError(
      await w.partnerAdmin.api.withToken(await oauthToken(partnerSa)).get(`/devices/${w.device.id}`),
      403,
      'msp_access_denied',
    );
  });

  it("an organisation service account the partner made is refused on every request; the customer's own still works", async () => {
    expectError(await madeForOrg.api.get(`/devices/${w.device.id}`), 403, 'msp_access_denied');
    expectError(await madeForOrg.api.get('/users'), 403, 'msp_access_denied');
    if (customersOwn) expectStatus(await customersOwn.api.get(`/devices/${w.device.id}`), 200);
  });

  it('lifting the suspension (the customer admin) lets them back', async () => {
    expectStatus(await setMsp(w.orgAdmin, w.org.id, 'allowed'), 200);
    for (const api of [partnerSa.api, madeForOrg.api, w.partnerAdmin.api.withToken(token)])
      expectStatus(await api.get(`/devices/${w.device.id}`), 200);
  });
});

describe("the organisation's IP allow-list holds the partner's service accounts too", () => {
  it('outside the list: 403 ip_not_allowed for a partner key and a partner-made organisation key; inside: 200', async () => {
    const w = await world();
    const partnerSa = await serviceAccountWithKey(w.partnerAdmin.api, { roleId: PARTNER_VIEWER });
    const madeForOrg = await serviceAccountWithKey(w.partnerAdmin.api, { roleId: ORG_ADMIN, orgId: w.org.id });
    expectStatus(
      await w.orgAdmin.api.patch(
        `/orgs/organizations/${w.org.id}`,
        { settings: { security: { ipAllowlist: [`${OFFICE_IP}/32`] } } },
        from(OFFICE_IP),
      ),
      200,
    );
    for (const sa of [partnerSa, madeForOrg]) {
      expectError(await sa.api.get(`/devices/${w.device.id}`, from('203.0.113.99')), 403, 'ip_not_allowed');
      expectStatus(await sa.api.get(`/devices/${w.device.id}`, from(OFFICE_IP)), 200);
    }
  });
});

describe('a SCIM token the partner made for the organisation cannot provision an admin who lifts the veto', () => {
  it('suspended: the token is refused and no account is made; the customer admin alone lifts it', async () => {
    const w = await world();
    const partnersToken = await issueScimToken(w.partnerAdmin.api, { orgId: w.org.id, defaultRoleId: ORG_ADMIN });
    const customersToken = await issueScimToken(w.orgAdmin.api, { defaultRoleId: ORG_ADMIN });
    const scim = new ScimClient(t.baseUrl, partnersToken.token);
    expectStatus(await setMsp(w.orgAdmin, w.org.id, 'suspended'), 200);
    const email = `lifter-${Date.now().toString(36)}@attacker.test`;
    const res = await scim.post('/Users', {
      schemas: [USER],
      userName: email,
      emails: [{ value: email, primary: true }],
    });
    expect(res.status, res.text).toBe(403);
    expect(res.body.code).toBe('msp_access_denied');
    expect((await scim.get('/Users')).status).toBe(403);
    const members = expectStatus(await w.orgAdmin.api.get('/users', { query: { search: 'lifter-' } }), 200);
    expect(members.body.data).toEqual([]);
    // The partner cannot lift it itself; the organisation's own token still provisions.
    expect((await setMsp(w.partnerAdmin, w.org.id, 'allowed')).status).toBe(403);
    const own = new ScimClient(t.baseUrl, customersToken.token);
    const ok = await own.post('/Users', {
      schemas: [USER],
      userName: `own-${email}`,
      emails: [{ value: `own-${email}`, primary: true }],
    });
    expect(ok.status, ok.text).toBe(201);
  });
});

describe('records written while suspended are not visible to the partner', () => {
  it('lists, exports and partner-wide webhooks leave them out, even after the suspension is lifted', async () => {
    const w = await world();
    const partnerWide = expectStatus(
      await w.partnerAdmin.api.post('/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['*'] }),
      201,
    ).body;
    expectStatus(await setMsp(w.orgAdmin, w.org.id, 'suspended'), 200);
    const during = expectStatus(await w.orgAdmin.api.post('/orgs/sites', { orgId: w.org.id, name: 'Vault room' }), 201);
    expectStatus(await setMsp(w.orgAdmin, w.org.id, 'allowed'), 200);
    const after = expectStatus(await w.orgAdmin.api.post('/orgs/sites', { orgId: w.org.id, name: 'After' }), 201);
    const written = await t.deps.db
      .select({ id: auditLogs.id })
      .from(auditLogs)
      .where(and(eq(auditLogs.action, 'site.create'), eq(auditLogs.resourceId, during.body.id)));
    expect(written).toHaveLength(1);
    const recordId = written[0]!.id;

    // The customer sees its record; the partner does not, neither in the list nor in the export.
    const own = expectStatus(await w.orgAdmin.api.get('/audit-logs', { query: { action: 'site.create' } }), 200);
    expect(own.body.data.map((r: { id: string }) => r.id)).toContain(recordId);
    const theirs = expectStatus(
      await w.partnerAdmin.api.get('/audit-logs', { query: { orgId: w.org.id, limit: 200 } }),
      200,
    );
    const seen = theirs.body.data.map((r: { id: string }) => r.id);
    expect(seen).not.toContain(recordId);
    expect(theirs.body.data.length).toBeGreaterThan(0); // records from before the suspension still are
    const exported = await w.partnerAdmin.api.get('/audit-logs/export', { query: { format: 'jsonl' } });
    expect(exported.status).toBe(200);
    expect(exported.text).not.toContain(recordId);
    // The rival partner sees nothing of the organisation at all.
    const rival = expectStatus(await w.rivalAdmin.api.get('/audit-logs', { query: { limit: 200 } }), 200);
    expect(rival.body.data.some((r: { orgId: string | null }) => r.orgId === w.org.id)).toBe(false);

    // Webhooks: the partner-wide subscription got no delivery of it, and one of the record written after the lift.
    const [afterRecord] = await t.deps.db
      .select({ id: auditLogs.id })
      .from(auditLogs)
      .where(and(eq(auditLogs.action, 'site.create'), eq(auditLogs.resourceId, after.body.id)));
    const deliveries = await t.deps.db
      .select({ auditId: webhookDeliveries.auditId })
      .from(webhookDeliveries)
      .where(
        and(
          eq(webhookDeliveries.webhookId, partnerWide.id),
          inArray(webhookDeliveries.auditId, [recordId, afterRecord!.id]),
        ),
      );
    expect(deliveries.map((d) => d.auditId)).toEqual([afterRecord!.id]);
  });

  it('while suspended the partner does not list the organisation’s older records either', async () => {
    const w = await world();
    expectStatus(await w.orgAdmin.api.post('/orgs/sites', { orgId: w.org.id, name: 'Before' }), 201);
    expectStatus(await setMsp(w.orgAdmin, w.org.id, 'suspended'), 200);
    const theirs = expectStatus(await w.partnerAdmin.api.get('/audit-logs', { query: { limit: 200 } }), 200);
    expect(theirs.body.data.some((r: { orgId: string | null }) => r.orgId === w.org.id)).toBe(false);
  });
});

describe("partner-activity shows the partner's service accounts and staff who have since left", () => {
  it('a partner service account and a removed technician both appear in the customer’s view', async () => {
    const w = await world();
    const tech = await signedInPartnerMember(t, w.partner.id, { roleId: PARTNER_ADMIN });
    const partnerSa = await serviceAccountWithKey(w.partnerAdmin.api, { roleId: PARTNER_TECH });
    expectStatus(await partnerSa.api.patch(`/devices/${w.device.id}`, { name: 'renamed-by-robot' }), 200);
    const bySite = expectStatus(await tech.api.post('/orgs/sites', { orgId: w.org.id, name: 'Left behind' }), 201);
    expectStatus(await w.partnerAdmin.api.delete(`/users/${tech.user.id}`), 200);
    const view = expectStatus(
      await w.orgAdmin.api.get(`/orgs/organizations/${w.org.id}/partner-activity`, { query: { limit: 200 } }),
      200,
    );
    const actors = view.body.data.map((r) => r.actorUserId);
    expect(actors).toContain(partnerSa.account.id);
    expect(actors).toContain(tech.user.id);
    expect(view.body.data.map((r) => r.resourceId)).toContain(bySite.body.id);
    // Each is marked for what it is: the technician as former staff, the service account by name and still current.
    const techRow = view.body.data.find((r) => r.resourceId === bySite.body.id)!;
    expect(techRow).toMatchObject({ actorUserId: tech.user.id, actorType: 'user', formerStaff: true });
    const robotRow = view.body.data.find((r) => r.actorUserId === partnerSa.account.id)!;
    expect(robotRow).toMatchObject({
      actorType: 'service_account',
      actorName: partnerSa.account.name,
      formerStaff: false,
    });
    expect(view.body.data.filter((r) => r.actorUserId === w.partnerAdmin.user.id).every((r) => !r.formerStaff)).toBe(
      true,
    );
    // The customer's own admin's actions are not the partner's.
    expect(actors).not.toContain(w.orgAdmin.user.id);
  });
});

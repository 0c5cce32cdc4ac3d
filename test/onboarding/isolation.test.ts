// Tenant isolation of every route of the onboarding area: two partners, each with two organisations,
// sites, device groups, devices, enrollment keys and contacts. Another tenant's ids answer 404 (exactly as an unknown
// id does) and change nothing; lists never contain another tenant's rows; a partner user with orgAccess selected sees
// only its orgIds, with orgAccess none nothing; an organisation user nothing of a sibling organisation.
// "Changes nothing" is proved by a snapshot of the victim's rows before and after the attacks.
import { inArray, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  contacts,
  deviceGroupMembers,
  deviceGroups,
  deviceInventory,
  devices,
  enrollmentKeys,
  organizations,
  partners,
  sites,
} from '../../src/db/schema/index.js';
import { startApp, type TestApp } from '../support/app.js';
import type { ApiClient, ApiResponse } from '../support/client.js';
import {
  createContact,
  createDevice,
  createDeviceGroup,
  createOrg,
  createPartner,
  createSite,
  signedInOrgMember,
  signedInPartnerMember,
  type SignedInMember,
} from '../support/fixtures.js';
import { createKey, enroll, expectError, expectStatus, ORG_ADMIN, PARTNER_ADMIN } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => t?.close());

/** The ids a route can be pointed at: one of each resource of one organisation. */
interface Ids {
  orgId: string;
  siteId: string;
  groupId: string;
  deviceId: string;
  keyId: string;
  contactId: string;
}
interface OrgWorld extends Ids {
  agentToken: string;
  admin: SignedInMember;
}
interface Tenant {
  partnerId: string;
  admin: SignedInMember;
  selected: SignedInMember;
  none: SignedInMember;
  orgs: [OrgWorld, OrgWorld];
}

async function buildOrg(admin: ApiClient, partnerId: string): Promise<OrgWorld> {
  const org = await createOrg(t, partnerId);
  const site = await createSite(t, org.id, 'HQ');
  const group = await createDeviceGroup(t, org.id, { siteId: site.id, name: 'Workstations' });
  const key = await createKey(admin, { orgId: org.id, siteId: site.id, maxUsage: 5 });
  const enrolled = expectStatus(await enroll(t, { enrollmentKey: key.key, hostname: 'pc-1' }), 201).body;
  expectStatus(await admin.post(`/device-groups/${group.id}/devices`, { deviceIds: [enrolled.deviceId] }), 200);
  expectStatus(
    await t
      .client()
      .post(
        '/agents/inventory',
        { hardware: { cpu: 'x' }, software: [{ name: 'App' }], patches: [{ id: 'KB1', status: 'missing' }] },
        { token: enrolled.agentToken },
      ),
    200,
  );
  await createDevice(t, org, site.id, { hostname: 'pc-2' });
  const contact = await createContact(t, org.id, {
    externalId: 'shared-ext-id',
    email: 'same@corp.example',
    firstName: 'Same',
    siteId: site.id,
  });
  return {
    orgId: org.id,
    siteId: site.id,
    groupId: group.id,
    deviceId: enrolled.deviceId,
    keyId: key.id,
    contactId: contact.id,
    agentToken: enrolled.agentToken,
    admin: await signedInOrgMember(t, org, { roleId: ORG_ADMIN }),
  };
}

async function buildTenant(): Promise<Tenant> {
  const partner = await createPartner(t);
  const admin = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN });
  const orgs: [OrgWorld, OrgWorld] = [await buildOrg(admin.api, partner.id), await buildOrg(admin.api, partner.id)];
  return {
    partnerId: partner.id,
    admin,
    orgs,
    selected: await signedInPartnerMember(t, partner.id, {
      roleId: PARTNER_ADMIN,
      orgAccess: 'selected',
      orgIds: [orgs[0].orgId],
    }),
    none: await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN, orgAccess: 'none' }),
  };
}

/** Every row a route of this area could read or change, for a partner or some of its organisations. */
async function snapshot(partnerId: string, orgIds: string[]) {
  const db = t.deps.db;
  const deviceRows = await db.select().from(devices).where(inArray(devices.orgId, orgIds));
  const deviceIds = deviceRows.map((d) => d.id);
  const sorted = <T>(rows: T[]) =>
    JSON.stringify(rows.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))));
  return {
    partner: sorted(await db.select().from(partners).where(eq(partners.id, partnerId))),
    orgs: sorted(await db.select().from(organizations).where(inArray(organizations.id, orgIds))),
    sites: sorted(await db.select().from(sites).where(inArray(sites.orgId, orgIds))),
    groups: sorted(await db.select().from(deviceGroups).where(inArray(deviceGroups.orgId, orgIds))),
    devices: sorted(deviceRows),
    members: sorted(
      deviceIds.length
        ? await db.select().from(deviceGroupMembers).where(inArray(deviceGroupMembers.deviceId, deviceIds))
        : [],
    ),
    inventory: sorted(
      deviceIds.length
        ? await db.select().from(deviceInventory).where(inArray(deviceInventory.deviceId, deviceIds))
        : [],
    ),
    keys: sorted(await db.select().from(enrollmentKeys).where(inArray(enrollmentKeys.orgId, orgIds))),
    contacts: sorted(await db.select().from(contacts).where(inArray(contacts.orgId, orgIds))),
  };
}

const unknownIds = (): Ids => ({
  orgId: crypto.randomUUID(),
  siteId: crypto.randomUUID(),
  groupId: crypto.randomUUID(),
  deviceId: crypto.randomUUID(),
  keyId: crypto.randomUUID(),
  contactId: crypto.randomUUID(),
});
const CSV = 'externalId,firstName,email\nintruder-1,Eve,eve@attacker.example';

/** Every route of the area that names a resource of an organisation, in the path or as the orgId selector. */
const ROUTES: { name: string; call: (api: ApiClient, ids: Ids) => Promise<ApiResponse> }[] = [
  { name: 'GET /orgs/organizations/:id', call: (api, i) => api.get(`/orgs/organizations/${i.orgId}`) },
  {
    name: 'PATCH /orgs/organizations/:id',
    call: (api, i) => api.patch(`/orgs/organizations/${i.orgId}`, { name: 'Hijacked' }),
  },
  {
    name: 'PATCH /orgs/organizations/:id settings',
    call: (api, i) => api.patch(`/orgs/organizations/${i.orgId}`, { settings: { security: { requireMfa: false } } }),
  },
  { name: 'DELETE /orgs/organizations/:id', call: (api, i) => api.delete(`/orgs/organizations/${i.orgId}`) },
  {
    name: 'GET /orgs/organizations/:id/effective-settings',
    call: (api, i) => api.get(`/orgs/organizations/${i.orgId}/effective-settings`),
  },
  { name: 'POST /orgs/sites', call: (api, i) => api.post('/orgs/sites', { orgId: i.orgId, name: 'Intruder site' }) },
  { name: 'GET /orgs/sites?orgId=', call: (api, i) => api.get('/orgs/sites', { query: { orgId: i.orgId } }) },
  { name: 'GET /orgs/sites/:id', call: (api, i) => api.get(`/orgs/sites/${i.siteId}`) },
  { name: 'PATCH /orgs/sites/:id', call: (api, i) => api.patch(`/orgs/sites/${i.siteId}`, { name: 'Hijacked' }) },
  { name: 'DELETE /orgs/sites/:id', call: (api, i) => api.delete(`/orgs/sites/${i.siteId}`) },
  {
    name: 'POST /device-groups',
    call: (api, i) => api.post('/device-groups', { orgId: i.orgId, name: 'Intruder group' }),
  },
  { name: 'GET /device-groups?orgId=', call: (api, i) => api.get('/device-groups', { query: { orgId: i.orgId } }) },
  { name: 'GET /device-groups/:id', call: (api, i) => api.get(`/device-groups/${i.groupId}`) },
  {
    name: 'PATCH /device-groups/:id',
    call: (api, i) => api.patch(`/device-groups/${i.groupId}`, { name: 'Hijacked' }),
  },
  { name: 'DELETE /device-groups/:id', call: (api, i) => api.delete(`/device-groups/${i.groupId}`) },
  {
    name: 'POST /device-groups/:id/devices',
    call: (api, i) => api.post(`/device-groups/${i.groupId}/devices`, { deviceIds: [i.deviceId] }),
  },
  { name: 'GET /devices?orgId=', call: (api, i) => api.get('/devices', { query: { orgId: i.orgId } }) },
  { name: 'GET /devices/:id', call: (api, i) => api.get(`/devices/${i.deviceId}`) },
  { name: 'PATCH /devices/:id', call: (api, i) => api.patch(`/devices/${i.deviceId}`, { name: 'Hijacked' }) },
  { name: 'DELETE /devices/:id', call: (api, i) => api.delete(`/devices/${i.deviceId}`) },
  {
    name: 'POST /enrollment-keys',
    call: (api, i) => api.post('/enrollment-keys', { orgId: i.orgId, name: 'Intruder key', maxUsage: 100 }),
  },
  { name: 'GET /enrollment-keys?orgId=', call: (api, i) => api.get('/enrollment-keys', { query: { orgId: i.orgId } }) },
  { name: 'GET /enrollment-keys/:id', call: (api, i) => api.get(`/enrollment-keys/${i.keyId}`) },
  { name: 'DELETE /enrollment-keys/:id', call: (api, i) => api.delete(`/enrollment-keys/${i.keyId}`) },
  {
    name: 'POST /contacts/import (JSON)',
    call: (api, i) => api.post('/contacts/import', { orgId: i.orgId, csv: CSV }),
  },
  {
    name: 'POST /contacts/import (JSON, dry run)',
    call: (api, i) => api.post('/contacts/import', { orgId: i.orgId, csv: CSV, dryRun: true }),
  },
  {
    name: 'POST /contacts/import (text/csv)',
    call: (api, i) =>
      api.request('POST', '/contacts/import', { rawBody: CSV, contentType: 'text/csv', query: { orgId: i.orgId } }),
  },
  { name: 'GET /contacts?orgId=', call: (api, i) => api.get('/contacts', { query: { orgId: i.orgId } }) },
  {
    name: 'GET /contacts?orgId=&siteId=',
    call: (api, i) => api.get('/contacts', { query: { orgId: i.orgId, siteId: i.siteId } }),
  },
  { name: 'GET /contacts/:id', call: (api, i) => api.get(`/contacts/${i.contactId}`) },
  { name: 'PATCH /contacts/:id', call: (api, i) => api.patch(`/contacts/${i.contactId}`, { title: 'Hijacked' }) },
  { name: 'DELETE /contacts/:id', call: (api, i) => api.delete(`/contacts/${i.contactId}`) },
];

/**
 * Points every route at the victim's ids and at unknown ids: the answers must be the same, and 404 unless a refusal
 * that does not depend on the id comes first (creating or deleting organisations needs orgAccess all).
 */
async function expectInvisible(attacker: ApiClient, victim: Ids) {
  for (const route of ROUTES) {
    const foreign = await route.call(attacker, victim);
    const unknown = await route.call(attacker, unknownIds());
    expect({ status: foreign.status, code: foreign.body?.code }, `${route.name}: ${foreign.text}`).toEqual({
      status: unknown.status,
      code: unknown.body?.code,
    });
    if (foreign.status === 403) expect(route.name, foreign.text).toBe('DELETE /orgs/organizations/:id');
    else expectError(foreign, 404, 'not_found');
  }
}

/** Rows of the unfiltered lists; each must belong to one of the allowed organisations. */
async function expectListsWithin(api: ApiClient, allowedOrgIds: string[], victimIds: Ids[]) {
  const lists = {
    organizations: (await api.get('/orgs/organizations', { query: { limit: 200 } })).body.data as { id: string }[],
    sites: (await api.get('/orgs/sites', { query: { limit: 200 } })).body.data as { id: string; orgId: string }[],
    devices: (await api.get('/devices', { query: { limit: 200 } })).body.data as { id: string; orgId: string }[],
    keys: (await api.get('/enrollment-keys', { query: { limit: 200 } })).body.data as { id: string; orgId: string }[],
  };
  expect(lists.organizations.map((o) => o.id).sort()).toEqual([...allowedOrgIds].sort());
  for (const [name, rows] of Object.entries(lists)) {
    for (const r of rows)
      expect(allowedOrgIds, `${name} row ${JSON.stringify(r)}`).toContain('orgId' in r ? r.orgId : r.id);
  }
  const seen = JSON.stringify(lists);
  for (const v of victimIds) for (const id of Object.values(v)) expect(seen).not.toContain(id);
  // Filters naming another tenant's site or group find nothing; they never widen the scope.
  for (const v of victimIds) {
    expect((await api.get('/devices', { query: { siteId: v.siteId } })).body.data).toEqual([]);
    expect((await api.get('/devices', { query: { deviceGroupId: v.groupId } })).body.data).toEqual([]);
  }
  return lists;
}

let p1: Tenant;
let p2: Tenant;
beforeAll(async () => {
  p1 = await buildTenant();
  p2 = await buildTenant();
});

describe('across two partners', () => {
  it("every route answers 404 for the other partner's organisation, site, group, device, key and contact, and changes nothing", async () => {
    const before = await snapshot(
      p1.partnerId,
      p1.orgs.map((o) => o.orgId),
    );
    for (const victim of p1.orgs) {
      await expectInvisible(p2.admin.api, victim);
      await expectInvisible(p2.orgs[0].admin.api, victim);
    }
    expect(
      await snapshot(
        p1.partnerId,
        p1.orgs.map((o) => o.orgId),
      ),
    ).toEqual(before);
  });

  it("lists never contain the other partner's rows", async () => {
    const lists = await expectListsWithin(
      p2.admin.api,
      p2.orgs.map((o) => o.orgId),
      p1.orgs,
    );
    expect(lists.devices).toHaveLength(4);
    expect(lists.keys).toHaveLength(2);
    await expectListsWithin(p2.orgs[0].admin.api, [p2.orgs[0].orgId], [...p1.orgs, p2.orgs[1]]);
    // Contacts carrying the same externalId and email in every organisation stay apart.
    const own = expectStatus(await p2.admin.api.get('/contacts', { query: { orgId: p2.orgs[0].orgId } }), 200);
    expect(own.body.data.map((c: { id: string }) => c.id)).toEqual([p2.orgs[0].contactId]);
  });

  it("another partner's ids named inside a request body are answered as unknown ids", async () => {
    const me = p2.orgs[0];
    const victim = p1.orgs[0];
    const api = p2.admin.api;
    const before = await snapshot(
      p1.partnerId,
      p1.orgs.map((o) => o.orgId),
    );
    const keyNoSite = await createKey(api, { orgId: me.orgId, maxUsage: 10 });
    const cases: [string, (id: Ids) => Promise<ApiResponse>][] = [
      [
        'add a foreign device to my group',
        (i) => api.post(`/device-groups/${me.groupId}/devices`, { deviceIds: [i.deviceId] }),
      ],
      ['move my device to a foreign site', (i) => api.patch(`/devices/${me.deviceId}`, { siteId: i.siteId })],
      [
        'put my device in a foreign group',
        (i) => api.patch(`/devices/${me.deviceId}`, { deviceGroupIds: [i.groupId] }),
      ],
      [
        'pin my group to a foreign site',
        (i) => api.post('/device-groups', { orgId: me.orgId, siteId: i.siteId, name: `g-${i.siteId.slice(0, 8)}` }),
      ],
      ['move my group to a foreign site', (i) => api.patch(`/device-groups/${me.groupId}`, { siteId: i.siteId })],
      [
        'pin my key to a foreign site',
        (i) => api.post('/enrollment-keys', { orgId: me.orgId, siteId: i.siteId, name: 'k' }),
      ],
      ['pin my contact to a foreign site', (i) => api.patch(`/contacts/${me.contactId}`, { siteId: i.siteId })],
      ['enrol with my key into a foreign site', (i) => enroll(t, { enrollmentKey: keyNoSite.key, siteId: i.siteId })],
    ];
    for (const [name, call] of cases) {
      const foreign = await call(victim);
      const unknown = await call(unknownIds());
      expect(foreign.status, `${name}: ${foreign.text}`).toBeGreaterThanOrEqual(400);
      expect({ status: foreign.status, code: foreign.body.code }, name).toEqual({
        status: unknown.status,
        code: unknown.body.code,
      });
    }
    expect(
      await snapshot(
        p1.partnerId,
        p1.orgs.map((o) => o.orgId),
      ),
    ).toEqual(before);
    // A key is bound to its organisation: another partner's agent token reports only its own device.
    expectStatus(
      await t.client().post('/agents/inventory', { hardware: {}, software: [], patches: [] }, { token: me.agentToken }),
      200,
    );
    expect(
      await snapshot(
        p1.partnerId,
        p1.orgs.map((o) => o.orgId),
      ),
    ).toEqual(before);
  });

  it("PATCH /orgs/partners/me changes only the caller's partner", async () => {
    const before = await snapshot(
      p1.partnerId,
      p1.orgs.map((o) => o.orgId),
    );
    expectStatus(
      await p2.admin.api.patch('/orgs/partners/me', { settings: { security: { allowedMfaMethods: { sms: false } } } }),
      200,
    );
    expect(
      await snapshot(
        p1.partnerId,
        p1.orgs.map((o) => o.orgId),
      ),
    ).toEqual(before);
    const eff = expectStatus(await p1.admin.api.get(`/orgs/organizations/${p1.orgs[0].orgId}/effective-settings`), 200);
    expect(eff.body.security.allowedMfaMethods.sms).toBe(true);
    expect((await p1.admin.api.get('/orgs/partners/me')).body.id).toBe(p1.partnerId);
  });
});

describe("across a partner user's selected organisations", () => {
  it('orgAccess selected: the selected organisation is fully usable, the other answers 404 on every route', async () => {
    const [mine, other] = p1.orgs;
    const before = await snapshot(p1.partnerId, [other.orgId]);
    await expectInvisible(p1.selected.api, other);
    expect(await snapshot(p1.partnerId, [other.orgId])).toEqual(before);
    const api = p1.selected.api;
    expectStatus(await api.get(`/orgs/organizations/${mine.orgId}`), 200);
    expectStatus(await api.get(`/orgs/sites/${mine.siteId}`), 200);
    expectStatus(await api.get(`/device-groups/${mine.groupId}`), 200);
    expectStatus(await api.get(`/devices/${mine.deviceId}`), 200);
    expectStatus(await api.get(`/enrollment-keys/${mine.keyId}`), 200);
    expectStatus(await api.get(`/contacts/${mine.contactId}`), 200);
    expectStatus(await api.get('/contacts', { query: { orgId: mine.orgId } }), 200);
    expectStatus(await api.get('/device-groups', { query: { orgId: mine.orgId } }), 200);
  });

  it('orgAccess selected: lists hold only the selected organisations', async () => {
    await expectListsWithin(p1.selected.api, [p1.orgs[0].orgId], [p1.orgs[1], ...p2.orgs]);
  });

  it('orgAccess none: every list is empty and every organisation answers 404', async () => {
    const lists = await expectListsWithin(p1.none.api, [], [...p1.orgs, ...p2.orgs]);
    for (const rows of Object.values(lists)) expect(rows).toEqual([]);
    const before = await snapshot(
      p1.partnerId,
      p1.orgs.map((o) => o.orgId),
    );
    for (const victim of p1.orgs) await expectInvisible(p1.none.api, victim);
    expect(
      await snapshot(
        p1.partnerId,
        p1.orgs.map((o) => o.orgId),
      ),
    ).toEqual(before);
  });

  it('an organisation user sees nothing of a sibling organisation of the same partner', async () => {
    const before = await snapshot(p1.partnerId, [p1.orgs[1].orgId]);
    await expectInvisible(p1.orgs[0].admin.api, p1.orgs[1]);
    expect(await snapshot(p1.partnerId, [p1.orgs[1].orgId])).toEqual(before);
    await expectListsWithin(p1.orgs[0].admin.api, [p1.orgs[0].orgId], [p1.orgs[1], ...p2.orgs]);
  });
});

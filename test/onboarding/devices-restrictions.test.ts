// Devices: created only by agent enrolment; an organisation user restricted to sites or device groups never
// sees, counts or changes a device outside the restriction (a device is visible when its site is allowed and, if device
// groups are restricted, it belongs to one of them): GET /devices, GET|PATCH|DELETE /devices/:id,
// POST /device-groups/:id/devices, and the device counts of device groups.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import type { ApiClient } from '../support/client.js';
import {
  createDevice,
  createDeviceGroup,
  createOrg,
  createSite,
  partnerAdmin,
  signedInOrgMember,
} from '../support/fixtures.js';
import { enrolledDevice, expectError, expectStatus, idsOf, ORG_ADMIN } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => t?.close());

/**
 * Sites A and B; groups GA (site A), GB (site B), GO (organisation-wide). Devices:
 * a1 (A, GA), a2 (A, none), a3 (A, GO + GB), b1 (B, GB), b2 (B, GO).
 */
async function world() {
  const { api: admin, partner } = await partnerAdmin(t);
  const org = await createOrg(t, partner.id);
  const [A, B] = [await createSite(t, org.id, 'Site A'), await createSite(t, org.id, 'Site B')];
  const GA = await createDeviceGroup(t, org.id, { siteId: A.id, name: 'GA' });
  const GB = await createDeviceGroup(t, org.id, { siteId: B.id, name: 'GB' });
  const GO = await createDeviceGroup(t, org.id, { name: 'GO' });
  const d = {
    a1: await createDevice(t, org, A.id, { hostname: 'a1', groupIds: [GA.id] }),
    a2: await createDevice(t, org, A.id, { hostname: 'a2' }),
    a3: await createDevice(t, org, A.id, { hostname: 'a3', groupIds: [GO.id, GB.id] }),
    b1: await createDevice(t, org, B.id, { hostname: 'b1', groupIds: [GB.id] }),
    b2: await createDevice(t, org, B.id, { hostname: 'b2', groupIds: [GO.id] }),
  };
  const member = (siteIds: string[] | null, deviceGroupIds: string[] | null) =>
    signedInOrgMember(t, org, { roleId: ORG_ADMIN, siteIds, deviceGroupIds });
  return {
    admin,
    org,
    sites: { A, B },
    groups: { GA, GB, GO },
    d,
    users: {
      all: await member(null, null),
      siteA: await member([A.id], null),
      groupsGaGo: await member(null, [GA.id, GO.id]),
      siteAGroupGo: await member([A.id], [GO.id]),
      noSites: await member([], null),
    },
  };
}
type World = Awaited<ReturnType<typeof world>>;

const hostnames = async (api: ApiClient, query: Record<string, string> = {}) =>
  (expectStatus(await api.get('/devices', { query }), 200).body.data as { hostname: string }[]).map((x) => x.hostname);

/** Who sees which device, by hostname. */
const VISIBLE: Record<keyof World['users'], string[]> = {
  all: ['a1', 'a2', 'a3', 'b1', 'b2'],
  siteA: ['a1', 'a2', 'a3'],
  groupsGaGo: ['a1', 'a3', 'b2'],
  siteAGroupGo: ['a3'],
  noSites: [],
};

describe('devices are created only by agent enrolment', () => {
  it('there is no POST /devices; an enrolled device appears in the list with its site', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const site = await createSite(t, org.id);
    const created = await api.raw.post('/devices', {
      orgId: org.id,
      siteId: site.id,
      hostname: 'manual',
      osType: 'windows',
    });
    expect(created.status).toBe(405);
    expect(created.headers.get?.('allow') ?? '').not.toContain('POST');
    expect(idsOf(await api.get('/devices', { query: { orgId: org.id } }))).toEqual([]);
    const enrolled = await enrolledDevice(t, api, org.id, site.id, 'agent-made');
    const list = expectStatus(await api.get('/devices', { query: { orgId: org.id } }), 200);
    expect(list.body.data).toEqual([
      expect.objectContaining({
        id: enrolled.deviceId,
        orgId: org.id,
        siteId: site.id,
        hostname: 'agent-made',
        osType: 'windows',
        deviceGroupIds: [],
      }),
    ]);
    expect(list.body.data[0]).not.toHaveProperty('agentTokenHash');
    expect(JSON.stringify(list.body)).not.toContain(enrolled.agentToken);
  });
});

describe('a site- or group-restricted organisation user sees only the devices inside the restriction', () => {
  it('GET /devices lists exactly the visible devices, with every filter', async () => {
    const w = await world();
    for (const [name, m] of Object.entries(w.users) as [keyof World['users'], World['users'][keyof World['users']]][]) {
      expect(await hostnames(m.api), name).toEqual(VISIBLE[name]);
      expect(await hostnames(m.api, { orgId: w.org.id }), name).toEqual(VISIBLE[name]);
      // Filters narrow inside the restriction, never widen it.
      expect(await hostnames(m.api, { siteId: w.sites.B.id }), name).toEqual(
        VISIBLE[name].filter((h) => h.startsWith('b')),
      );
      expect(await hostnames(m.api, { deviceGroupId: w.groups.GB.id }), name).toEqual(
        VISIBLE[name].filter((h) => ['a3', 'b1'].includes(h)),
      );
      expect(await hostnames(m.api, { search: 'b' }), name).toEqual(VISIBLE[name].filter((h) => h.startsWith('b')));
      // Paging walks the same set.
      const paged: string[] = [];
      let cursor: string | undefined;
      do {
        const page = expectStatus(await m.api.get('/devices', { query: { limit: 1, cursor } }), 200);
        paged.push(...page.body.data.map((x: { hostname: string }) => x.hostname));
        cursor = page.body.nextCursor ?? undefined;
      } while (cursor);
      expect(paged, name).toEqual(VISIBLE[name]);
    }
    expect(await hostnames(w.admin, { orgId: w.org.id })).toEqual(VISIBLE.all);
  });

  it('GET, PATCH and DELETE /devices/:id answer 404 for a device outside the restriction and change nothing', async () => {
    const w = await world();
    for (const [name, m] of Object.entries(w.users) as [keyof World['users'], World['users'][keyof World['users']]][]) {
      for (const [host, device] of Object.entries(w.d)) {
        if (VISIBLE[name].includes(host)) {
          expect(expectStatus(await m.api.get(`/devices/${device.id}`), 200).body.hostname).toBe(host);
          continue;
        }
        expectError(await m.api.get(`/devices/${device.id}`), 404, 'not_found');
        expectError(await m.api.patch(`/devices/${device.id}`, { name: `renamed by ${name}` }), 404, 'not_found');
        expectError(await m.api.delete(`/devices/${device.id}`), 404, 'not_found');
      }
    }
    for (const [host, device] of Object.entries(w.d)) {
      const row = expectStatus(await w.admin.get(`/devices/${device.id}`), 200);
      expect(row.body).toMatchObject({ hostname: host, displayName: null });
    }
  });

  it('a restricted user changes and deletes only visible devices, and cannot move one outside its sites or into a hidden group', async () => {
    const w = await world();
    const { siteA, groupsGaGo } = w.users;
    const renamed = expectStatus(await siteA.api.patch(`/devices/${w.d.a2.id}`, { name: 'Reception PC' }), 200);
    expect(renamed.body).toMatchObject({ id: w.d.a2.id, displayName: 'Reception PC', siteId: w.sites.A.id });
    expectError(await siteA.api.patch(`/devices/${w.d.a2.id}`, { siteId: w.sites.B.id }), 400, 'validation_failed');
    expectError(
      await siteA.api.patch(`/devices/${w.d.a2.id}`, { deviceGroupIds: [w.groups.GB.id] }),
      400,
      'validation_failed',
    );
    expectError(
      await groupsGaGo.api.patch(`/devices/${w.d.a1.id}`, { deviceGroupIds: [w.groups.GB.id] }),
      400,
      'validation_failed',
    );
    expect(expectStatus(await w.admin.get(`/devices/${w.d.a2.id}`), 200).body).toMatchObject({
      siteId: w.sites.A.id,
      deviceGroupIds: [],
    });
    expectStatus(await siteA.api.patch(`/devices/${w.d.a2.id}`, { deviceGroupIds: [w.groups.GA.id] }), 200);
    expect(expectStatus(await w.admin.get(`/devices/${w.d.a2.id}`), 200).body.deviceGroupIds).toEqual([w.groups.GA.id]);
    expect(expectStatus(await siteA.api.delete(`/devices/${w.d.a1.id}`), 200).body).toEqual({ success: true });
    expectError(await w.admin.get(`/devices/${w.d.a1.id}`), 404, 'not_found');
  });

  it("setting a device's groups leaves its memberships in groups the user cannot see", async () => {
    const w = await world();
    // a3 is in GO (visible to groupsGaGo) and GB (hidden from it).
    const res = expectStatus(
      await w.users.groupsGaGo.api.patch(`/devices/${w.d.a3.id}`, { deviceGroupIds: [w.groups.GA.id] }),
      200,
    );
    expect(res.body.deviceGroupIds).toContain(w.groups.GA.id);
    const after = expectStatus(await w.admin.get(`/devices/${w.d.a3.id}`), 200);
    expect(after.body.deviceGroupIds).toEqual([w.groups.GA.id, w.groups.GB.id].sort());
    expect(expectStatus(await w.admin.get(`/device-groups/${w.groups.GB.id}`), 200).body.deviceCount).toBe(2);
    // The same for a site-restricted user: GB is pinned to site B, which siteA cannot see.
    expectStatus(await w.users.siteA.api.patch(`/devices/${w.d.a3.id}`, { deviceGroupIds: [] }), 200);
    expect(expectStatus(await w.admin.get(`/devices/${w.d.a3.id}`), 200).body.deviceGroupIds).toEqual([w.groups.GB.id]);
  });

  it('POST /device-groups/:id/devices refuses a device outside the restriction and adds nothing', async () => {
    const w = await world();
    const { siteA, groupsGaGo } = w.users;
    const refused = await siteA.api.post(`/device-groups/${w.groups.GA.id}/devices`, {
      deviceIds: [w.d.a2.id, w.d.b1.id],
    });
    expectError(refused, 400, 'validation_failed');
    expectError(
      await groupsGaGo.api.post(`/device-groups/${w.groups.GA.id}/devices`, { deviceIds: [w.d.a2.id] }),
      400,
      'validation_failed',
    );
    // A hidden group is not found at all.
    expectError(
      await siteA.api.post(`/device-groups/${w.groups.GB.id}/devices`, { deviceIds: [w.d.a2.id] }),
      404,
      'not_found',
    );
    expectError(
      await groupsGaGo.api.post(`/device-groups/${w.groups.GB.id}/devices`, { deviceIds: [w.d.a1.id] }),
      404,
      'not_found',
    );
    expect(expectStatus(await w.admin.get(`/devices/${w.d.a2.id}`), 200).body.deviceGroupIds).toEqual([]);
    expect(expectStatus(await w.admin.get(`/device-groups/${w.groups.GA.id}`), 200).body.deviceCount).toBe(1);
    expectStatus(await siteA.api.post(`/device-groups/${w.groups.GA.id}/devices`, { deviceIds: [w.d.a2.id] }), 200);
    expect(expectStatus(await w.admin.get(`/device-groups/${w.groups.GA.id}`), 200).body.deviceCount).toBe(2);
  });

  it('device groups and their device counts include only what the user may see', async () => {
    const w = await world();
    const counts = async (api: ApiClient) =>
      Object.fromEntries(
        (
          expectStatus(await api.get('/device-groups', { query: { orgId: w.org.id } }), 200).body.data as {
            name: string;
            deviceCount: number;
          }[]
        ).map((g) => [g.name, g.deviceCount]),
      );
    expect(await counts(w.users.all.api)).toEqual({ GA: 1, GB: 2, GO: 2 });
    // Site A: GO holds a3 (site A) and b2 (site B); only a3 counts. GB is pinned to site B: not listed.
    expect(await counts(w.users.siteA.api)).toEqual({ GA: 1, GO: 1 });
    expect(await counts(w.users.groupsGaGo.api)).toEqual({ GA: 1, GO: 2 });
    expect(await counts(w.users.siteAGroupGo.api)).toEqual({ GO: 1 });
    expect(await counts(w.users.noSites.api)).toEqual({ GO: 0 });
    expect(expectStatus(await w.users.siteA.api.get(`/device-groups/${w.groups.GO.id}`), 200).body.deviceCount).toBe(1);
    expectError(await w.users.siteA.api.get(`/device-groups/${w.groups.GB.id}`), 404, 'not_found');
    expectError(await w.users.groupsGaGo.api.get(`/device-groups/${w.groups.GB.id}`), 404, 'not_found');
  });

  it("a site-restricted user's enrollment keys must be pinned to its sites, and it lists only those", async () => {
    const w = await world();
    const { siteA } = w.users;
    const adminKey = expectStatus(
      await w.admin.post('/enrollment-keys', { orgId: w.org.id, siteId: w.sites.B.id, name: 'B wave' }),
      201,
    ).body;
    const unpinned = expectStatus(
      await w.admin.post('/enrollment-keys', { orgId: w.org.id, name: 'unpinned' }),
      201,
    ).body;
    expectError(
      await siteA.api.post('/enrollment-keys', { orgId: w.org.id, name: 'no site' }),
      400,
      'validation_failed',
    );
    expectError(
      await siteA.api.post('/enrollment-keys', { orgId: w.org.id, siteId: w.sites.B.id, name: 'site B' }),
      400,
      'validation_failed',
    );
    const own = expectStatus(
      await siteA.api.post('/enrollment-keys', { orgId: w.org.id, siteId: w.sites.A.id, name: 'site A' }),
      201,
    ).body;
    expect(idsOf(await siteA.api.get('/enrollment-keys'))).toEqual([own.id]);
    expectError(await siteA.api.get(`/enrollment-keys/${adminKey.id}`), 404, 'not_found');
    expectError(await siteA.api.get(`/enrollment-keys/${unpinned.id}`), 404, 'not_found');
    expectError(await siteA.api.delete(`/enrollment-keys/${adminKey.id}`), 404, 'not_found');
    expectStatus(await w.admin.get(`/enrollment-keys/${adminKey.id}`), 200);
  });
});

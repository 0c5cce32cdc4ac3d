// Where a device lands and where it can be moved: a key can target a site and a device group, and enrolment puts the
// device in both; devices move to a site or a group in bulk, refused whole when any id is outside the caller's reach.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import {
  auditRecords,
  createDevice,
  createDeviceGroup,
  createOrg,
  createSite,
  partnerAdmin,
  signedInOrgMember,
} from '../support/fixtures.js';
import { createKey, enroll, expectError, expectStatus } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp({ RATE_LIMIT_ENROLL: '10000/60' });
});
afterAll(async () => t?.close());

async function tenant() {
  const { api, partner } = await partnerAdmin(t);
  const org = await createOrg(t, partner.id);
  const hq = await createSite(t, org.id, 'HQ');
  const branch = await createSite(t, org.id, 'Branch');
  const laptops = await createDeviceGroup(t, org.id, { name: 'Laptops' });
  const branchServers = await createDeviceGroup(t, org.id, { name: 'Branch servers', siteId: branch.id });
  return { api, partner, org, hq, branch, laptops, branchServers };
}

describe('a key targets a site and a device group', () => {
  it('the enrolled device lands in the key’s site and group', async () => {
    const { api, org, hq, laptops } = await tenant();
    const key = await createKey(api, { orgId: org.id, siteId: hq.id, deviceGroupId: laptops.id, maxUsage: 2 });
    expect(key).toMatchObject({ siteId: hq.id, deviceGroupId: laptops.id });
    const read = expectStatus(await api.get(`/enrollment-keys/${key.id}`), 200);
    expect(read.body.deviceGroupId).toBe(laptops.id);
    const res = expectStatus(await enroll(t, { enrollmentKey: key.key, hostname: 'ws-01' }), 201);
    expect(res.body).toMatchObject({ orgId: org.id, siteId: hq.id });
    const device = expectStatus(await api.get(`/devices/${res.body.deviceId}`), 200).body;
    expect(device).toMatchObject({ siteId: hq.id, deviceGroupIds: [laptops.id] });
    const inGroup = expectStatus(
      await api.get('/devices', { query: { orgId: org.id, deviceGroupId: laptops.id } }),
      200,
    );
    expect(inGroup.body.data.map((d: { hostname: string }) => d.hostname)).toEqual(['ws-01']);
  });

  it('a key without a group enrols into no group', async () => {
    const { api, org, hq } = await tenant();
    const key = await createKey(api, { orgId: org.id, siteId: hq.id });
    expect(key.deviceGroupId).toBeNull();
    const res = expectStatus(await enroll(t, { enrollmentKey: key.key }), 201);
    expect(expectStatus(await api.get(`/devices/${res.body.deviceId}`), 200).body.deviceGroupIds).toEqual([]);
  });

  it('a group of a site needs a key of that site; a group of another organisation is refused', async () => {
    const { api, partner, org, hq, branch, branchServers } = await tenant();
    const other = await createOrg(t, partner.id);
    const foreign = await createDeviceGroup(t, other.id);
    for (const body of [
      { orgId: org.id, siteId: hq.id, deviceGroupId: branchServers.id },
      { orgId: org.id, deviceGroupId: branchServers.id },
      { orgId: org.id, siteId: hq.id, deviceGroupId: foreign.id },
    ]) {
      const res = await api.post('/enrollment-keys', { name: 'wave', ...body });
      expectError(res, 400, 'validation_failed');
      expect(Object.keys(res.body.details.fieldErrors)).toEqual(['deviceGroupId']);
    }
    const ok = await createKey(api, { orgId: org.id, siteId: branch.id, deviceGroupId: branchServers.id });
    expect(ok.deviceGroupId).toBe(branchServers.id);
  });

  it('a key outlives its group: once the group is deleted, devices enrol into no group', async () => {
    const { api, org, hq, laptops } = await tenant();
    const key = await createKey(api, { orgId: org.id, siteId: hq.id, deviceGroupId: laptops.id });
    expectStatus(await api.delete(`/device-groups/${laptops.id}`), 200);
    expect(expectStatus(await api.get(`/enrollment-keys/${key.id}`), 200).body.deviceGroupId).toBeNull();
    const res = expectStatus(await enroll(t, { enrollmentKey: key.key }), 201);
    expect(expectStatus(await api.get(`/devices/${res.body.deviceId}`), 200).body.deviceGroupIds).toEqual([]);
  });
});

describe('devices move to a site or a group, in bulk', () => {
  it('moves every device named to the site and into the group, replacing its groups, with one audit record', async () => {
    const { api, org, hq, branch, laptops, branchServers } = await tenant();
    const a = await createDevice(t, org, hq.id, { hostname: 'a', groupIds: [laptops.id] });
    const b = await createDevice(t, org, hq.id, { hostname: 'b' });
    const res = await api.post('/devices/move', {
      deviceIds: [a.id, b.id],
      siteId: branch.id,
      deviceGroupId: branchServers.id,
    });
    expect(expectStatus(res, 200).body).toEqual({ moved: 2 });
    for (const d of [a, b])
      expect(expectStatus(await api.get(`/devices/${d.id}`), 200).body).toMatchObject({
        siteId: branch.id,
        deviceGroupIds: [branchServers.id],
      });
    const records = (await auditRecords(t, 'device.move')).filter((r) =>
      (r.details as { deviceIds: string[] }).deviceIds.includes(a.id),
    );
    expect(records.map((r) => r.details)).toEqual([
      { deviceIds: [a.id, b.id], siteId: branch.id, deviceGroupId: branchServers.id },
    ]);
    // Out of every group, staying on their site.
    expectStatus(await api.post('/devices/move', { deviceIds: [a.id], deviceGroupId: null }), 200);
    expect(expectStatus(await api.get(`/devices/${a.id}`), 200).body).toMatchObject({
      siteId: branch.id,
      deviceGroupIds: [],
    });
  });

  it('refuses an empty move, a group of another site, and devices of two organisations; nothing moves', async () => {
    const { api, partner, org, hq, branch, branchServers } = await tenant();
    const other = await createOrg(t, partner.id);
    const otherSite = await createSite(t, other.id);
    const a = await createDevice(t, org, hq.id);
    const elsewhere = await createDevice(t, other, otherSite.id);
    expectError(await api.post('/devices/move', { deviceIds: [a.id] }), 400, 'validation_failed');
    expectError(await api.post('/devices/move', { deviceIds: [], siteId: hq.id }), 400, 'validation_failed');
    expectError(
      await api.post('/devices/move', { deviceIds: [a.id], deviceGroupId: branchServers.id }),
      400,
      'validation_failed',
    );
    expectError(
      await api.post('/devices/move', { deviceIds: [a.id, elsewhere.id], siteId: branch.id }),
      400,
      'validation_failed',
    );
    expect(expectStatus(await api.get(`/devices/${a.id}`), 200).body).toMatchObject({
      siteId: hq.id,
      deviceGroupIds: [],
    });
  });
});

describe('a partner cannot move another partner’s devices, nor move its own into another partner’s site', () => {
  it('both directions are refused and change nothing', async () => {
    const mine = await tenant();
    const theirs = await tenant();
    const victim = await createDevice(t, theirs.org, theirs.hq.id, { groupIds: [theirs.laptops.id] });
    const own = await createDevice(t, mine.org, mine.hq.id);
    // Their device into my site: the device is not mine to name.
    const steal = await mine.api.post('/devices/move', { deviceIds: [victim.id], siteId: mine.branch.id });
    expectError(steal, 400, 'validation_failed');
    expect(steal.body.details.fieldErrors).toHaveProperty('deviceIds');
    // Their device out of its group, named with my group.
    expectError(
      await mine.api.post('/devices/move', { deviceIds: [victim.id], deviceGroupId: mine.laptops.id }),
      400,
      'validation_failed',
    );
    // My device into their site and their group.
    const plant = await mine.api.post('/devices/move', {
      deviceIds: [own.id],
      siteId: theirs.hq.id,
      deviceGroupId: theirs.laptops.id,
    });
    expectError(plant, 400, 'validation_failed');
    expect(plant.body.details.fieldErrors).toHaveProperty('siteId');
    // My device mixed in with theirs.
    expectError(
      await mine.api.post('/devices/move', { deviceIds: [own.id, victim.id], siteId: mine.branch.id }),
      400,
      'validation_failed',
    );
    expect(expectStatus(await theirs.api.get(`/devices/${victim.id}`), 200).body).toMatchObject({
      siteId: theirs.hq.id,
      deviceGroupIds: [theirs.laptops.id],
    });
    expect(expectStatus(await mine.api.get(`/devices/${own.id}`), 200).body).toMatchObject({
      siteId: mine.hq.id,
      deviceGroupIds: [],
    });
  });

  it('an organisation admin cannot reach a sibling organisation of the same partner', async () => {
    const { partner, org, hq, laptops } = await tenant();
    const sibling = await createOrg(t, partner.id);
    const siblingSite = await createSite(t, sibling.id);
    const siblingDevice = await createDevice(t, sibling, siblingSite.id);
    const own = await createDevice(t, org, hq.id);
    const admin = await signedInOrgMember(t, org);
    expectError(
      await admin.api.post('/devices/move', { deviceIds: [siblingDevice.id], siteId: hq.id }),
      400,
      'validation_failed',
    );
    expectError(
      await admin.api.post('/devices/move', { deviceIds: [own.id], siteId: siblingSite.id }),
      400,
      'validation_failed',
    );
    expectStatus(await admin.api.post('/devices/move', { deviceIds: [own.id], deviceGroupId: laptops.id }), 200);
  });

  it('a site-restricted member moves devices only between its own sites', async () => {
    const { org, hq, branch } = await tenant();
    const own = await createDevice(t, org, hq.id);
    const member = await signedInOrgMember(t, org, { siteIds: [hq.id] });
    const res = await member.api.post('/devices/move', { deviceIds: [own.id], siteId: branch.id });
    expectError(res, 400, 'validation_failed');
    expect(res.body.details.fieldErrors).toHaveProperty('siteId');
  });
});

// The customer tree through the API: organisations and sites are created one call at a
// time, listed, read, updated and deleted; device groups likewise. Who may change the tree follows the role and the
// partner membership's orgAccess.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { errorBody } from '../support/client.js';
import {
  createDevice,
  createOrg,
  createSite,
  partnerAdmin,
  signedInOrgMember,
  signedInPartnerMember,
} from '../support/fixtures.js';
import { expectError, expectStatus, idsOf, ORG_ADMIN, PARTNER_ADMIN, PARTNER_VIEWER } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => t?.close());

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

describe('organisations: one call per organisation, list, read, update, delete', () => {
  it('POST /orgs/organizations answers 201 with the documented shape; the slug comes from the name unless given', async () => {
    const { api, partner } = await partnerAdmin(t);
    const res = expectStatus(await api.post('/orgs/organizations', { name: 'Contoso Pharma Ltd' }), 201);
    expect(res.body).toEqual({
      id: expect.any(String),
      partnerId: partner.id,
      name: 'Contoso Pharma Ltd',
      slug: 'contoso-pharma-ltd',
      status: 'active',
      settings: {},
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    const own = expectStatus(
      await api.post('/orgs/organizations', {
        name: 'Other',
        slug: 'other-co',
        settings: { security: { requireMfa: true } },
      }),
      201,
    );
    expect(own.body).toMatchObject({ slug: 'other-co', settings: { security: { requireMfa: true } } });
  });

  it('there is no bulk creation: an array body, unknown fields and a taken slug are refused', async () => {
    const { api } = await partnerAdmin(t);
    expectError(await api.raw.post('/orgs/organizations', [{ name: 'A' }, { name: 'B' }]), 400, 'validation_failed');
    expectError(
      await api.raw.post('/orgs/organizations', { organizations: [{ name: 'A' }] }),
      400,
      'validation_failed',
    );
    expectError(
      await api.raw.post('/orgs/organizations', { name: 'A', parentId: crypto.randomUUID() }),
      400,
      'validation_failed',
    );
    expectError(
      await api.raw.post('/orgs/organizations', { name: 'A', settings: { security: { requireMfa: 'yes' } } }),
      400,
      'validation_failed',
    );
    expectStatus(await api.post('/orgs/organizations', { name: 'Same Name' }), 201);
    expectError(await api.post('/orgs/organizations', { name: 'Same name' }), 409, 'slug_taken');
    // Slugs are unique per partner, not globally.
    const other = await partnerAdmin(t);
    expectStatus(await other.api.post('/orgs/organizations', { name: 'Same Name' }), 201);
  });

  it("GET /orgs/organizations lists the partner's organisations by name, with search and a keyset cursor", async () => {
    const { api } = await partnerAdmin(t);
    const names = ['Delta', 'alpha', 'Charlie', 'Bravo', 'Alphabet'];
    const created: Record<string, string> = {};
    for (const name of names)
      created[name] = expectStatus(await api.post('/orgs/organizations', { name }), 201).body.id;
    const all = expectStatus(await api.get('/orgs/organizations'), 200);
    expect(all.body.data.map((o: { name: string }) => o.name)).toEqual([
      'alpha',
      'Alphabet',
      'Bravo',
      'Charlie',
      'Delta',
    ]);
    expect(all.body.nextCursor).toBeNull();
    const search = await api.get('/orgs/organizations', { query: { search: 'alph' } });
    expect(search.body.data.map((o: { name: string }) => o.name)).toEqual(['alpha', 'Alphabet']);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 10; i++) {
      const page = expectStatus(await api.get('/orgs/organizations', { query: { limit: 2, cursor } }), 200);
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.data.map((o: { name: string }) => o.name));
      cursor = page.body.nextCursor ?? undefined;
      if (!cursor) break;
    }
    expect(seen).toEqual(['alpha', 'Alphabet', 'Bravo', 'Charlie', 'Delta']);
    expectError(await api.get('/orgs/organizations', { query: { limit: 0 } }), 400, 'validation_failed');
    expectError(await api.get('/orgs/organizations', { query: { limit: 201 } }), 400, 'validation_failed');
  });

  it('GET and PATCH /orgs/organizations/:id read and change name, slug and status', async () => {
    const { api } = await partnerAdmin(t);
    const org = expectStatus(await api.post('/orgs/organizations', { name: 'Fabrikam' }), 201).body;
    expect(expectStatus(await api.get(`/orgs/organizations/${org.id}`), 200).body).toEqual(org);
    t.clock.advance(1000);
    const patched = expectStatus(
      await api.patch(`/orgs/organizations/${org.id}`, {
        name: 'Fabrikam Inc',
        slug: 'fabrikam-inc',
        status: 'suspended',
      }),
      200,
    );
    expect(patched.body).toMatchObject({
      id: org.id,
      name: 'Fabrikam Inc',
      slug: 'fabrikam-inc',
      status: 'suspended',
      createdAt: org.createdAt,
    });
    expect(Date.parse(patched.body.updatedAt)).toBeGreaterThan(Date.parse(org.updatedAt));
    expect(expectStatus(await api.get(`/orgs/organizations/${org.id}`), 200).body.name).toBe('Fabrikam Inc');
    expectError(await api.patch(`/orgs/organizations/${org.id}`, {}), 400, 'validation_failed');
    expectError(
      await api.raw.patch(`/orgs/organizations/${org.id}`, { partnerId: crypto.randomUUID() }),
      400,
      'validation_failed',
    );
    expectError(await api.raw.patch(`/orgs/organizations/${org.id}`, { status: 'deleted' }), 400, 'validation_failed');
    const second = expectStatus(await api.post('/orgs/organizations', { name: 'Second' }), 201).body;
    expectError(await api.patch(`/orgs/organizations/${second.id}`, { slug: 'fabrikam-inc' }), 409, 'slug_taken');
    expectError(await api.get(`/orgs/organizations/${crypto.randomUUID()}`), 404, 'not_found');
    expectError(await api.get('/orgs/organizations/not-a-uuid'), 400, 'validation_failed');
  });

  it('DELETE /orgs/organizations/:id removes the organisation with its sites, groups, devices, keys and contacts', async () => {
    const { api } = await partnerAdmin(t);
    const org = expectStatus(await api.post('/orgs/organizations', { name: 'Doomed' }), 201).body;
    const site = expectStatus(await api.post('/orgs/sites', { orgId: org.id, name: 'Only site' }), 201).body;
    const group = expectStatus(
      await api.post('/device-groups', { orgId: org.id, siteId: site.id, name: 'G' }),
      201,
    ).body;
    const key = expectStatus(
      await api.post('/enrollment-keys', { orgId: org.id, siteId: site.id, name: 'k', maxUsage: 2 }),
      201,
    ).body;
    const device = expectStatus(
      await t.client().post('/agents/enroll', { enrollmentKey: key.key, hostname: 'doomed-1', osType: 'linux' }),
      201,
    ).body;
    expectStatus(await api.post('/contacts/import', { orgId: org.id, csv: 'externalId,firstName\nc1,Ann' }), 200);
    const member = await signedInOrgMember(t, org, { roleId: ORG_ADMIN });
    expectStatus(await member.api.get(`/orgs/organizations/${org.id}`), 200);

    expect(expectStatus(await api.delete(`/orgs/organizations/${org.id}`), 200).body).toEqual({ success: true });
    expectError(await api.get(`/orgs/organizations/${org.id}`), 404, 'not_found');
    expectError(await api.get(`/orgs/sites/${site.id}`), 404, 'not_found');
    expectError(await api.get(`/device-groups/${group.id}`), 404, 'not_found');
    expectError(await api.get(`/enrollment-keys/${key.id}`), 404, 'not_found');
    expectError(await api.get(`/devices/${device.deviceId}`), 404, 'not_found');
    expect(idsOf(await api.get('/orgs/organizations'))).not.toContain(org.id);
    // The organisation's members lose their membership (their next request is refused) and its keys stop working.
    expectError(await member.api.get(`/orgs/organizations/${org.id}`), 401, 'unauthenticated');
    expectError(
      await t.client().post('/agents/enroll', { enrollmentKey: key.key, hostname: 'doomed-2', osType: 'linux' }),
      401,
      'enrollment_key_invalid',
    );
    expectError(await api.delete(`/orgs/organizations/${org.id}`), 404, 'not_found');
  });

  it('only partner users with orgAccess all create or delete organisations; viewers and organisation users change nothing', async () => {
    const { partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const selected = await signedInPartnerMember(t, partner.id, {
      roleId: PARTNER_ADMIN,
      orgAccess: 'selected',
      orgIds: [org.id],
    });
    const viewer = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_VIEWER });
    const orgAdmin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN });
    expectError(await selected.api.post('/orgs/organizations', { name: 'Nope' }), 403, 'full_org_access_required');
    expectError(await selected.api.delete(`/orgs/organizations/${org.id}`), 403, 'full_org_access_required');
    expectError(await viewer.api.post('/orgs/organizations', { name: 'Nope' }), 403, 'forbidden');
    expectError(await viewer.api.patch(`/orgs/organizations/${org.id}`, { name: 'Nope' }), 403, 'forbidden');
    expectError(await viewer.api.delete(`/orgs/organizations/${org.id}`), 403, 'forbidden');
    expectError(await orgAdmin.api.post('/orgs/organizations', { name: 'Nope' }), 403, 'forbidden');
    expectError(await orgAdmin.api.delete(`/orgs/organizations/${org.id}`), 403, 'forbidden');
    // A selected-access admin and the organisation's own admin may rename it.
    expectStatus(await selected.api.patch(`/orgs/organizations/${org.id}`, { name: 'Renamed by selected' }), 200);
    expectStatus(await orgAdmin.api.patch(`/orgs/organizations/${org.id}`, { name: 'Renamed by org admin' }), 200);
    expect(expectStatus(await viewer.api.get(`/orgs/organizations/${org.id}`), 200).body.name).toBe(
      'Renamed by org admin',
    );
  });
});

describe('sites: one call per site, list, read, update, delete', () => {
  it('POST /orgs/sites answers 201 with the documented shape; the time zone defaults to UTC and must be an IANA zone', async () => {
    const { api } = await partnerAdmin(t);
    const org = expectStatus(await api.post('/orgs/organizations', { name: 'Sites Co' }), 201).body;
    const hq = expectStatus(
      await api.post('/orgs/sites', {
        orgId: org.id,
        name: 'London HQ',
        timezone: 'Europe/London',
        address: '1 Harbour Way',
      }),
      201,
    );
    expect(hq.body).toEqual({
      id: expect.any(String),
      orgId: org.id,
      name: 'London HQ',
      timezone: 'Europe/London',
      address: '1 Harbour Way',
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    const plain = expectStatus(await api.post('/orgs/sites', { orgId: org.id, name: 'Branch' }), 201);
    expect(plain.body).toMatchObject({ timezone: 'UTC', address: null });
    expectError(
      await api.raw.post('/orgs/sites', { orgId: org.id, name: 'Mars', timezone: 'Mars/Olympus' }),
      400,
      'validation_failed',
    );
    expectError(await api.raw.post('/orgs/sites', { name: 'No org' }), 400, 'validation_failed');
    expectError(await api.raw.post('/orgs/sites', [{ orgId: org.id, name: 'A' }]), 400, 'validation_failed');
    expectError(await api.post('/orgs/sites', { orgId: org.id, name: 'london hq' }), 409, 'name_taken');
    expectError(await api.post('/orgs/sites', { orgId: crypto.randomUUID(), name: 'Ghost' }), 404, 'not_found');
    // Site names are unique per organisation only.
    const other = expectStatus(await api.post('/orgs/organizations', { name: 'Sites Co 2' }), 201).body;
    expectStatus(await api.post('/orgs/sites', { orgId: other.id, name: 'London HQ' }), 201);
  });

  it("GET /orgs/sites lists one organisation's sites with ?orgId=, or every accessible site without it", async () => {
    const { api } = await partnerAdmin(t);
    const a = expectStatus(await api.post('/orgs/organizations', { name: 'List A' }), 201).body;
    const b = expectStatus(await api.post('/orgs/organizations', { name: 'List B' }), 201).body;
    const a1 = expectStatus(await api.post('/orgs/sites', { orgId: a.id, name: 'A1' }), 201).body;
    const a2 = expectStatus(await api.post('/orgs/sites', { orgId: a.id, name: 'A2' }), 201).body;
    const b1 = expectStatus(await api.post('/orgs/sites', { orgId: b.id, name: 'B1' }), 201).body;
    expect(idsOf(await api.get('/orgs/sites', { query: { orgId: a.id } }))).toEqual([a1.id, a2.id].sort());
    expect(idsOf(await api.get('/orgs/sites', { query: { orgId: b.id } }))).toEqual([b1.id]);
    expect(idsOf(await api.get('/orgs/sites'))).toEqual([a1.id, a2.id, b1.id].sort());
    const page = expectStatus(await api.get('/orgs/sites', { query: { orgId: a.id, limit: 1 } }), 200);
    expect(page.body.data).toHaveLength(1);
    const next = expectStatus(
      await api.get('/orgs/sites', { query: { orgId: a.id, limit: 1, cursor: page.body.nextCursor ?? undefined } }),
      200,
    );
    expect([page.body.data[0]!.id, next.body.data[0]!.id].sort()).toEqual([a1.id, a2.id].sort());
  });

  it('GET, PATCH and DELETE /orgs/sites/:id; a site with devices is not deleted', async () => {
    const { api } = await partnerAdmin(t);
    const org = expectStatus(await api.post('/orgs/organizations', { name: 'Site CRUD' }), 201).body;
    const site = expectStatus(await api.post('/orgs/sites', { orgId: org.id, name: 'Leeds' }), 201).body;
    expect(expectStatus(await api.get(`/orgs/sites/${site.id}`), 200).body).toEqual(site);
    const patched = expectStatus(
      await api.patch(`/orgs/sites/${site.id}`, {
        name: 'Leeds Canal St',
        timezone: 'Europe/London',
        address: '22 Canal Street',
      }),
      200,
    );
    expect(patched.body).toMatchObject({
      id: site.id,
      orgId: org.id,
      name: 'Leeds Canal St',
      timezone: 'Europe/London',
      address: '22 Canal Street',
    });
    expectError(
      await api.raw.patch(`/orgs/sites/${site.id}`, { orgId: crypto.randomUUID() }),
      400,
      'validation_failed',
    );
    expectError(await api.patch(`/orgs/sites/${site.id}`, {}), 400, 'validation_failed');
    const other = expectStatus(await api.post('/orgs/sites', { orgId: org.id, name: 'York' }), 201).body;
    expectError(await api.patch(`/orgs/sites/${other.id}`, { name: 'LEEDS CANAL ST' }), 409, 'name_taken');

    const device = await createDevice(t, org, site.id);
    const refused = await api.delete(`/orgs/sites/${site.id}`);
    expectError(refused, 409, 'resource_in_use');
    expect(errorBody(refused).deviceCount).toBe(1);
    expectStatus(await api.delete(`/devices/${device.id}`), 200);
    expect(expectStatus(await api.delete(`/orgs/sites/${site.id}`), 200).body).toEqual({ success: true });
    expectError(await api.get(`/orgs/sites/${site.id}`), 404, 'not_found');
    expectError(await api.delete(`/orgs/sites/${site.id}`), 404, 'not_found');
    expectError(await api.patch(`/orgs/sites/${site.id}`, { name: 'x' }), 404, 'not_found');
  });

  it("an organisation admin manages its own organisation's sites; a site-restricted member cannot create sites", async () => {
    const { partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const site = await createSite(t, org.id);
    const admin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN });
    const restricted = await signedInOrgMember(t, org, { roleId: ORG_ADMIN, siteIds: [site.id] });
    const made = expectStatus(
      await admin.api.post('/orgs/sites', { orgId: org.id, name: 'Made by org admin' }),
      201,
    ).body;
    expectError(await restricted.api.post('/orgs/sites', { orgId: org.id, name: 'Nope' }), 403, 'forbidden');
    expect(idsOf(await restricted.api.get('/orgs/sites', { query: { orgId: org.id } }))).toEqual([site.id]);
    expectError(await restricted.api.get(`/orgs/sites/${made.id}`), 404, 'not_found');
    expectError(await restricted.api.patch(`/orgs/sites/${made.id}`, { name: 'x' }), 404, 'not_found');
    expectError(await restricted.api.delete(`/orgs/sites/${made.id}`), 404, 'not_found');
    expectStatus(await admin.api.delete(`/orgs/sites/${made.id}`), 200);
  });
});

describe('device groups: create, list, read, update, delete, add devices', () => {
  it('POST /device-groups with or without a site; GET lists them per organisation with their device count', async () => {
    const { api } = await partnerAdmin(t);
    const org = expectStatus(await api.post('/orgs/organizations', { name: 'Groups Co' }), 201).body;
    const other = expectStatus(await api.post('/orgs/organizations', { name: 'Groups Co 2' }), 201).body;
    const site = expectStatus(await api.post('/orgs/sites', { orgId: org.id, name: 'HQ' }), 201).body;
    const otherSite = expectStatus(await api.post('/orgs/sites', { orgId: other.id, name: 'Elsewhere' }), 201).body;
    const pinned = expectStatus(
      await api.post('/device-groups', { orgId: org.id, siteId: site.id, name: 'HQ workstations' }),
      201,
    );
    expect(pinned.body).toEqual({
      id: expect.any(String),
      orgId: org.id,
      siteId: site.id,
      name: 'HQ workstations',
      deviceCount: 0,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    const orgWide = expectStatus(await api.post('/device-groups', { orgId: org.id, name: 'Servers' }), 201);
    expect(orgWide.body.siteId).toBeNull();
    expectError(await api.post('/device-groups', { orgId: org.id, name: 'hq WORKSTATIONS' }), 409, 'name_taken');
    expectError(
      await api.post('/device-groups', { orgId: org.id, siteId: otherSite.id, name: 'Cross' }),
      400,
      'validation_failed',
    );
    expectError(await api.get('/device-groups'), 400, 'validation_failed');
    const list = expectStatus(await api.get('/device-groups', { query: { orgId: org.id } }), 200);
    expect(list.body.data.map((g: { name: string }) => g.name)).toEqual(['HQ workstations', 'Servers']);
    expect(expectStatus(await api.get('/device-groups', { query: { orgId: other.id } }), 200).body.data).toEqual([]);
  });

  it('GET, PATCH, DELETE /device-groups/:id and POST /device-groups/:id/devices', async () => {
    const { api } = await partnerAdmin(t);
    const org = expectStatus(await api.post('/orgs/organizations', { name: 'Group CRUD' }), 201).body;
    const site = expectStatus(await api.post('/orgs/sites', { orgId: org.id, name: 'HQ' }), 201).body;
    const site2 = expectStatus(await api.post('/orgs/sites', { orgId: org.id, name: 'Branch' }), 201).body;
    const group = expectStatus(await api.post('/device-groups', { orgId: org.id, name: 'Laptops' }), 201).body;
    const [d1, d2] = [await createDevice(t, org, site.id), await createDevice(t, org, site.id)];
    expect(
      expectStatus(await api.post(`/device-groups/${group.id}/devices`, { deviceIds: [d1.id, d2.id] }), 200).body,
    ).toEqual({ success: true });
    expectStatus(await api.post(`/device-groups/${group.id}/devices`, { deviceIds: [d1.id] }), 200); // adding again changes nothing
    expect(expectStatus(await api.get(`/device-groups/${group.id}`), 200).body.deviceCount).toBe(2);
    expect(idsOf(await api.get('/devices', { query: { deviceGroupId: group.id } }))).toEqual([d1.id, d2.id].sort());
    expectError(await api.post(`/device-groups/${group.id}/devices`, { deviceIds: [] }), 400, 'validation_failed');
    expectError(
      await api.post(`/device-groups/${group.id}/devices`, { deviceIds: [crypto.randomUUID()] }),
      400,
      'validation_failed',
    );

    const patched = expectStatus(
      await api.patch(`/device-groups/${group.id}`, { name: 'Branch laptops', siteId: site2.id }),
      200,
    );
    expect(patched.body).toMatchObject({ id: group.id, name: 'Branch laptops', siteId: site2.id, deviceCount: 2 });
    expectError(await api.patch(`/device-groups/${group.id}`, {}), 400, 'validation_failed');
    expect(expectStatus(await api.delete(`/device-groups/${group.id}`), 200).body).toEqual({ success: true });
    expectError(await api.get(`/device-groups/${group.id}`), 404, 'not_found');
    // The devices stay; they just leave the group.
    const after = expectStatus(await api.get(`/devices/${d1.id}`), 200);
    expect(after.body.deviceGroupIds).toEqual([]);
  });
});

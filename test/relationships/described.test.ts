// A relationship as people read it, through HTTP with two partners: names instead of ids (organisation, partner, each
// role with its effective permissions, sites, device groups), its history from the audit trail on both sides (who
// acted, by name; what a narrowing removed, by name), and the sites and device groups a draft may name, offered only
// for the partner's own organisations, even once its admins reach no organisation without a relationship.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import {
  createDeviceGroup,
  createOrg,
  createPartner,
  createSite,
  signedInOrgMember,
  signedInPartnerMember,
} from '../support/fixtures.js';
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
  t = await startApp();
});
afterAll(async () => {
  await t?.close();
});

let worlds = 0;
async function world() {
  const n = ++worlds;
  const partner = await createPartner(t, `Northwind MSP ${n}`);
  const org = await createOrg(t, partner.id, 'Contoso Dental');
  const harbour = await createSite(t, org.id, 'Harbour Street');
  const annex = await createSite(t, org.id, 'Annex');
  const servers = await createDeviceGroup(t, org.id, { name: 'Servers' });
  const admin = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN, name: 'Olivia Ops' });
  const orgAdmin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN, name: 'Cora Contoso' });
  const partnerB = await createPartner(t, `Tailspin MSP ${n}`);
  const orgB = await createOrg(t, partnerB.id, 'Wingtip Clinic');
  const adminB = await signedInPartnerMember(t, partnerB.id, { roleId: PARTNER_ADMIN });
  const orgBAdmin = await signedInOrgMember(t, orgB, { roleId: ORG_ADMIN });
  return { partner, org, harbour, annex, servers, admin, orgAdmin, orgB, adminB, orgBAdmin };
}

describe('a relationship names what it holds', () => {
  it('answers with the organisation, partner, roles (with their effective permissions), sites and device groups by name', async () => {
    const w = await world();
    const d = expectStatus(
      await w.admin.api.post('/relationships', {
        orgId: w.org.id,
        name: 'Tier 1',
        roleIds: [PARTNER_TECH, PARTNER_VIEWER],
        siteIds: [w.harbour.id, w.annex.id],
        deviceGroupIds: [w.servers.id],
        duration: 'P90D',
      }),
      201,
    );
    expect(d.body).toMatchObject({
      orgName: 'Contoso Dental',
      partnerName: w.partner.name,
      sites: [
        { id: w.harbour.id, name: 'Harbour Street' },
        { id: w.annex.id, name: 'Annex' },
      ],
      deviceGroups: [{ id: w.servers.id, name: 'Servers' }],
    });
    expect(d.body.roles.map((r: { name: string }) => r.name)).toEqual(['Partner Technician', 'Partner Viewer']);
    expect(d.body.roles[0]!.permissions).toContain('devices:read');
    expect(d.body.roles[0]!.permissions).not.toContain('*:*');

    // The same names wherever the relationship is read: the organisation's admin, the partner's list.
    expectStatus(await w.admin.api.post(`/relationships/${d.body.id}/request`), 200);
    const seen = expectStatus(await w.orgAdmin.api.get(`/relationships/${d.body.id}`), 200);
    expect(seen.body).toMatchObject({ orgName: 'Contoso Dental', partnerName: w.partner.name });
    const list = expectStatus(await w.admin.api.get('/relationships', { query: { orgId: w.org.id } }), 200);
    expect(list.body.data[0]).toMatchObject({ id: d.body.id, sites: d.body.sites, roles: d.body.roles });
  });
});

describe('the history, on both sides', () => {
  it('lists each event oldest first with the actor by name, and what a narrowing removed by name', async () => {
    const w = await world();
    const d = expectStatus(
      await w.admin.api.post('/relationships', {
        orgId: w.org.id,
        name: 'Tier 2',
        roleIds: [PARTNER_TECH, PARTNER_VIEWER],
        siteIds: [w.harbour.id, w.annex.id],
        duration: 'P1Y',
      }),
      201,
    );
    const id = d.body.id;
    expectStatus(await w.admin.api.post(`/relationships/${id}/request`), 200);
    expectStatus(await w.orgAdmin.api.post(`/relationships/${id}/approve`), 200);
    expectStatus(
      await w.admin.api.patch(`/relationships/${id}`, { roleIds: [PARTNER_TECH], siteIds: [w.harbour.id] }),
      200,
    );
    expectStatus(await w.orgAdmin.api.post(`/relationships/${id}/terminate`), 200);

    for (const side of [w.admin, w.orgAdmin]) {
      const h = expectStatus(await side.api.get(`/relationships/${id}/history`), 200);
      expect(h.body.data.map((e: { action: string; actorName: string | null }) => [e.action, e.actorName])).toEqual([
        ['relationship.create', 'Olivia Ops'],
        ['relationship.request', 'Olivia Ops'],
        ['relationship.approve', 'Cora Contoso'],
        ['relationship.update', 'Olivia Ops'],
        ['relationship.terminate', 'Cora Contoso'],
      ]);
      const [, , approve, update, terminate] = h.body.data;
      expect(approve!.endsAt).not.toBeNull();
      expect(update!.removed).toEqual({ roles: ['Partner Viewer'], sites: ['Annex'], deviceGroups: [] });
      expect(terminate!.side).toBe('organization');
      // Nothing of the audit record beyond what the history declares (no address, no user agent, no ids of people).
      expect(Object.keys(update!).sort()).toEqual(
        ['action', 'actorEmail', 'actorName', 'at', 'endsAt', 'id', 'removed', 'side'].sort(),
      );
    }

    // Another partner, and another partner's customer, learn nothing: the same 404 as for an unknown id.
    expectError(await w.adminB.api.get(`/relationships/${id}/history`), 404, 'not_found');
    expectError(await w.orgBAdmin.api.get(`/relationships/${id}/history`), 404, 'not_found');
    expectError(await w.admin.api.get(`/relationships/${crypto.randomUUID()}/history`), 404, 'not_found');
  });
});

describe('the reach a draft may name', () => {
  it('offers the sites and device groups of the partner’s own organisation, even once relationships are required', async () => {
    const w = await world();
    expectStatus(await w.admin.api.patch('/orgs/partners/me', { settings: { requireRelationships: true } }), 200);
    // The admin's own access no longer reaches the organisation's sites...
    const sites = await w.admin.api.get('/orgs/sites', { query: { orgId: w.org.id } });
    expect(sites.status === 404 || (sites.status === 200 && sites.body.data.length === 0)).toBe(true);
    // ...yet the draft's pickers still offer them, by name.
    const o = expectStatus(await w.admin.api.get('/relationships/reach-options', { query: { orgId: w.org.id } }), 200);
    expect(o.body).toEqual({
      sites: [
        { id: w.annex.id, name: 'Annex' },
        { id: w.harbour.id, name: 'Harbour Street' },
      ],
      deviceGroups: [{ id: w.servers.id, name: 'Servers' }],
    });
  });

  it('refuses another partner’s organisation (404), organisation members (403) and bad input (400)', async () => {
    const w = await world();
    expectError(
      await w.adminB.api.get('/relationships/reach-options', { query: { orgId: w.org.id } }),
      404,
      'not_found',
    );
    expectStatus(await w.orgAdmin.api.get('/relationships/reach-options', { query: { orgId: w.org.id } }), 403);
    expectError(
      await w.admin.api.get('/relationships/reach-options', { query: { orgId: 'not-a-uuid' } }),
      400,
      'validation_failed',
    );
    const tech = await signedInPartnerMember(t, w.partner.id, { roleId: PARTNER_TECH });
    expectStatus(await tech.api.get('/relationships/reach-options', { query: { orgId: w.org.id } }), 403);
  });
});

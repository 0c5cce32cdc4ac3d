// orgAccess "all_except": a partner member reaches every organisation of its partner, those created after the
// invitation included, except the excluded ones, through every route (reads by id, lists, sites, devices), explain,
// who-can and capabilities; the exclusion names only the partner's own organisations and every change is audited.
// Through HTTP with two partners: a real invitation accepted from the mailed link, real tokens.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, startPeer, type PeerApp, type TestApp } from '../support/app.js';
import {
  auditRecords,
  createDevice,
  createOrg,
  createPartner,
  createSite,
  signedInOrgMember,
  signedInPartnerMember,
  type SignedInMember,
} from '../support/fixtures.js';
import { linkToken, startMailCatcher, type MailCatcher } from '../support/smtp.js';
import { expectError, expectStatus, ORG_ADMIN, PARTNER_ADMIN, PARTNER_TECH } from '../onboarding/helpers.js';
import type { ApiClient } from '../support/client.js';

const PASSWORD = 'Glacier-7f3a9c-Saffron!';
const email = (tag: string) => `${tag}-${randomBytes(4).toString('hex')}@example.test`;

let t: TestApp;
let peer: PeerApp;
let mail: MailCatcher;
beforeAll(async () => {
  mail = await startMailCatcher();
  t = await startApp({ SMTP_URL: mail.url });
  peer = await startPeer(t);
});
afterAll(async () => {
  await peer?.close();
  await t?.close();
  await mail?.close();
});

/** Two partners; the first with organisations A and B (a site and a device each) and its admin. */
async function world() {
  const partner = await createPartner(t);
  const orgA = await createOrg(t, partner.id);
  const orgB = await createOrg(t, partner.id);
  const siteA = await createSite(t, orgA.id);
  const siteB = await createSite(t, orgB.id);
  const deviceA = await createDevice(t, orgA, siteA.id);
  const deviceB = await createDevice(t, orgB, siteB.id);
  const admin = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN });
  const partnerB = await createPartner(t);
  const foreignOrg = await createOrg(t, partnerB.id);
  const adminB = await signedInPartnerMember(t, partnerB.id, { roleId: PARTNER_ADMIN });
  return { partner, orgA, orgB, siteA, siteB, deviceA, deviceB, admin, partnerB, foreignOrg, adminB };
}

/** Invites a technician with this access and accepts from the mailed link: the technician's own client and id. */
async function invitedTech(admin: SignedInMember, access: Record<string, unknown>) {
  const to = email('tech');
  const inv = expectStatus(
    await admin.api.raw.post('/users/invite', { email: to, name: 'Tess Tech', roleId: PARTNER_TECH, ...access }),
    201,
  );
  const accepted = expectStatus(
    await t.client().post('/auth/accept-invite', { token: linkToken(await mail.waitFor(to)), password: PASSWORD }),
    200,
  );
  const token = accepted.body.accessToken as string;
  return { id: inv.body.id as string, api: t.client().withToken(token), peer: peer.client().withToken(token) };
}

const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((r) => r.id);

async function reaches(api: ApiClient, org: { id: string }, device: { id: string }, site: { id: string }) {
  return {
    org: (await api.get(`/orgs/organizations/${org.id}`)).status,
    sites: (await api.get('/orgs/sites', { query: { orgId: org.id } })).status,
    site: (await api.get(`/orgs/sites/${site.id}`)).status,
    devices: (await api.get('/devices', { query: { orgId: org.id } })).status,
    device: (await api.get(`/devices/${device.id}`)).status,
  };
}
const REACHED = { org: 200, sites: 200, site: 200, devices: 200, device: 200 };
const REFUSED = { org: 404, sites: 404, site: 404, devices: 404, device: 404 };

describe('all_except covers organisations created later, and refuses the excluded ones on every route', () => {
  it('a technician invited with all_except [A] reaches B and a new organisation C, never A; explain says why', async () => {
    const w = await world();
    const tech = await invitedTech(w.admin, { orgAccess: 'all_except', excludedOrgIds: [w.orgA.id] });
    expect(expectStatus(await w.admin.api.raw.get(`/users/${tech.id}`), 200).body).toMatchObject({
      orgAccess: 'all_except',
      orgIds: [],
      excludedOrgIds: [w.orgA.id],
    });
    const invited = await auditRecords(t, 'user.invite', tech.id);
    expect(invited[0]?.details).toMatchObject({ orgAccess: 'all_except', orgIds: [w.orgA.id] });

    // An organisation created after the invitation, through the API.
    const orgC = expectStatus(await w.admin.api.post('/orgs/organizations', { name: `Org C ${Date.now()}` }), 201).body;
    const siteC = await createSite(t, orgC.id);
    const deviceC = await createDevice(t, { id: orgC.id }, siteC.id);

    expect(await reaches(tech.api, orgC, deviceC, siteC)).toEqual(REACHED);
    expect(await reaches(tech.api, w.orgB, w.deviceB, w.siteB)).toEqual(REACHED);
    expect(await reaches(tech.api, w.orgA, w.deviceA, w.siteA)).toEqual(REFUSED);
    // Lists leave A out (the query's condition and row security alike).
    const orgs = ids(expectStatus(await tech.api.get('/orgs/organizations', { query: { limit: 200 } }), 200));
    expect(orgs).toEqual(expect.arrayContaining([w.orgB.id, orgC.id]));
    expect(orgs).not.toContain(w.orgA.id);
    expect(orgs).not.toContain(w.foreignOrg.id);
    const devices = ids(expectStatus(await tech.api.get('/devices', { query: { limit: 200 } }), 200));
    expect(devices).toEqual(expect.arrayContaining([w.deviceB.id, deviceC.id]));
    expect(devices).not.toContain(w.deviceA.id);
    const sites = ids(expectStatus(await tech.api.get('/orgs/sites', { query: { limit: 200 } }), 200));
    expect(sites).toEqual(expect.arrayContaining([w.siteB.id, siteC.id]));
    expect(sites).not.toContain(w.siteA.id);
    // Capabilities on A: the same 404 as the organisation's own routes.
    expectError(await tech.api.get('/access/capabilities', { query: { orgId: w.orgA.id } }), 404, 'not_found');

    // The admin asks why.
    const why = (orgId: string) =>
      w.admin.api.get('/access/explain', {
        query: { userId: tech.id, permission: 'organizations:read', resourceType: 'organization', resourceId: orgId },
      });
    const onA = expectStatus(await why(w.orgA.id), 200).body;
    expect(onA).toMatchObject({ allowed: false, deniedBy: 'organization_access' });
    expect(onA.reasons.find((r: { step: string }) => r.step === 'organization_access')?.detail).toMatch(
      /all_except.*this one is excluded/,
    );
    const onC = expectStatus(await why(orgC.id), 200).body;
    expect(onC.allowed).toBe(true);
    expect(onC.reasons.find((r: { step: string }) => r.step === 'organization_access')).toMatchObject({
      allowed: true,
      via: 'standing_all_except',
    });
    // who-can lists the technician on C, not on A.
    const whoCan = async (orgId: string) =>
      ids(
        expectStatus(
          await w.admin.api.get('/access/who-can', {
            query: { permission: 'organizations:read', resourceType: 'organization', resourceId: orgId, limit: 200 },
          }),
          200,
        ),
      );
    expect(await whoCan(orgC.id)).toContain(tech.id);
    expect(await whoCan(w.orgA.id)).not.toContain(tech.id);
  });

  it('PATCH moves a member to all_except and back: the next request follows, and each change is audited', async () => {
    const w = await world();
    const tech = await invitedTech(w.admin, { orgAccess: 'selected', orgIds: [w.orgA.id] });
    expect((await tech.api.get(`/orgs/organizations/${w.orgB.id}`)).status).toBe(404);
    const patched = expectStatus(
      await w.admin.api.raw.patch(`/users/${tech.id}`, { orgAccess: 'all_except', excludedOrgIds: [w.orgA.id] }),
      200,
    );
    expect(patched.body).toMatchObject({ orgAccess: 'all_except', excludedOrgIds: [w.orgA.id], orgIds: [] });
    expect((await tech.api.get(`/orgs/organizations/${w.orgB.id}`)).status).toBe(200);
    expect((await tech.api.get(`/orgs/organizations/${w.orgA.id}`)).status).toBe(404);
    const [rec] = await auditRecords(t, 'user.org_access', tech.id);
    expect(rec?.details).toMatchObject({
      from: { orgAccess: 'selected', orgIds: [w.orgA.id] },
      to: { orgAccess: 'all_except', orgIds: [w.orgA.id] },
    });
    // Excluding nothing is all of them.
    expectStatus(
      await w.admin.api.raw.patch(`/users/${tech.id}`, { orgAccess: 'all_except', excludedOrgIds: [] }),
      200,
    );
    expect((await tech.api.get(`/orgs/organizations/${w.orgA.id}`)).status).toBe(200);
    // Back to none.
    expectStatus(await w.admin.api.raw.patch(`/users/${tech.id}`, { orgAccess: 'none' }), 200);
    expect((await tech.api.get(`/orgs/organizations/${w.orgB.id}`)).status).toBe(404);
  });
});

describe('the exclusion names only the partner own organisations', () => {
  it("another partner's organisation (or an unknown id) is 400 with excludedOrgIds named, on invite and PATCH", async () => {
    const w = await world();
    for (const bad of [[w.foreignOrg.id], [w.orgA.id, w.foreignOrg.id], ['7c1e2d3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f']]) {
      const inv = await w.admin.api.raw.post('/users/invite', {
        email: email('x'),
        name: 'X',
        roleId: PARTNER_TECH,
        orgAccess: 'all_except',
        excludedOrgIds: bad,
      });
      expectError(inv, 400, 'validation_failed');
      expect(Object.keys(inv.body.details.fieldErrors)).toEqual(['excludedOrgIds']);
    }
    const tech = await invitedTech(w.admin, { orgAccess: 'all_except', excludedOrgIds: [w.orgA.id] });
    const res = await w.admin.api.raw.patch(`/users/${tech.id}`, {
      orgAccess: 'all_except',
      excludedOrgIds: [w.foreignOrg.id],
    });
    expectError(res, 400, 'validation_failed');
    expect(Object.keys(res.body.details.fieldErrors)).toEqual(['excludedOrgIds']);
    // Nothing was written: A is still the one excluded.
    expect((await w.admin.api.raw.get(`/users/${tech.id}`)).body.excludedOrgIds).toEqual([w.orgA.id]);
    // The other partner's admin cannot touch the member at all.
    expectError(
      await w.adminB.api.raw.patch(`/users/${tech.id}`, { orgAccess: 'all_except', excludedOrgIds: [w.foreignOrg.id] }),
      404,
      'not_found',
    );
  });

  it('excludedOrgIds without all_except, and orgIds with it, are 400 with the field named', async () => {
    const w = await world();
    const a = await w.admin.api.raw.post('/users/invite', {
      email: email('y'),
      name: 'Y',
      roleId: PARTNER_TECH,
      orgAccess: 'all',
      excludedOrgIds: [w.orgA.id],
    });
    expectError(a, 400, 'validation_failed');
    expect(Object.keys(a.body.details.fieldErrors)).toEqual(['excludedOrgIds']);
    const b = await w.admin.api.raw.post('/users/invite', {
      email: email('z'),
      name: 'Z',
      roleId: PARTNER_TECH,
      orgAccess: 'all_except',
      orgIds: [w.orgA.id],
    });
    expectError(b, 400, 'validation_failed');
    expect(Object.keys(b.body.details.fieldErrors)).toEqual(['orgIds']);
    const tech = await invitedTech(w.admin, { orgAccess: 'none' });
    expectError(
      await w.admin.api.raw.patch(`/users/${tech.id}`, { excludedOrgIds: [w.orgA.id] }),
      400,
      'validation_failed',
    );
    // Nobody changes their own organisation access.
    expectError(
      await w.admin.api.raw.patch(`/users/${w.admin.user.id}`, {
        orgAccess: 'all_except',
        excludedOrgIds: [w.orgA.id],
      }),
      403,
      'forbidden_self_action',
    );
  });
});

describe('all_except through the relationship lifecycle: a new organisation, once its relationship is approved', () => {
  it('requireRelationships on: a new organisation is reached only once approved, never an excluded one, until terminated', async () => {
    const w = await world();
    const tech = await invitedTech(w.admin, { orgAccess: 'all_except', excludedOrgIds: [w.orgA.id] });
    expectStatus(await w.admin.api.patch('/orgs/partners/me', { settings: { requireRelationships: true } }), 200);
    const orgC = expectStatus(await w.admin.api.post('/orgs/organizations', { name: `Org C ${Date.now()}` }), 201).body;
    const adminC = await signedInOrgMember(t, { id: orgC.id, partnerId: w.partner.id }, { roleId: ORG_ADMIN });
    const adminA = await signedInOrgMember(t, w.orgA, { roleId: ORG_ADMIN });
    // A new organisation needs an approved relationship before any partner staff reach it.
    expect((await tech.api.get(`/orgs/organizations/${orgC.id}`)).status).toBe(404);
    const relate = async (orgAdmin: SignedInMember, orgId: string) => {
      const d = expectStatus(
        await w.admin.api.raw.post('/relationships', {
          orgId,
          name: 'Tier 1',
          roleIds: [PARTNER_TECH],
          duration: 'P90D',
        }),
        201,
      );
      expectStatus(await w.admin.api.post(`/relationships/${d.body.id}/request`), 200);
      return expectStatus(await orgAdmin.api.post(`/relationships/${d.body.id}/approve`), 200).body.id as string;
    };
    const relC = await relate(adminC, orgC.id);
    await relate(adminA, w.orgA.id);
    expect((await tech.api.get(`/orgs/organizations/${orgC.id}`)).status).toBe(200);
    expect((await tech.peer.get(`/orgs/organizations/${orgC.id}`)).status).toBe(200);
    // A relationship with an excluded organisation does not undo the exclusion.
    expect((await tech.api.get(`/orgs/organizations/${w.orgA.id}`)).status).toBe(404);
    const orgs = ids(expectStatus(await tech.api.get('/orgs/organizations', { query: { limit: 200 } }), 200));
    expect(orgs).toEqual([orgC.id]);
    // The customer terminates: the next request, on the other instance too, is refused.
    expectStatus(await adminC.api.post(`/relationships/${relC}/terminate`), 200);
    expect((await tech.peer.get(`/orgs/organizations/${orgC.id}`)).status).toBe(404);
    expect((await tech.api.get(`/orgs/organizations/${orgC.id}`)).status).toBe(404);
  });
});

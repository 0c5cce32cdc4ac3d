// Delegated-access relationships through HTTP with two partners and their customers, on two instances over one
// database, with the mail caught by a real SMTP server: the lifecycle, what freezes after approval, auto-extension,
// the 90-day request lapse, and what partner staff reach once their partner requires relationships.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateRelationship } from '../../src/modules/relationships/repo.js';
import { startApp, startPeer, type PeerApp, type TestApp } from '../support/app.js';
import type { ApiClient } from '../support/client.js';
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
import { serviceAccountWithKey } from '../support/service-accounts.js';
import { startMailCatcher, type MailCatcher } from '../support/smtp.js';
import {
  expectError,
  expectStatus,
  ORG_ADMIN,
  ORG_VIEWER,
  PARTNER_ADMIN,
  PARTNER_TECH,
  PARTNER_VIEWER,
} from '../onboarding/helpers.js';

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

const DAY = 86_400_000;

/** Two partners, each with customers, devices, admins on both sides and a technician who holds *:*. */
async function world() {
  const partner = await createPartner(t);
  const org = await createOrg(t, partner.id);
  const other = await createOrg(t, partner.id);
  const siteA = await createSite(t, org.id);
  const siteB = await createSite(t, org.id);
  const deviceA = await createDevice(t, org, siteA.id);
  const deviceB = await createDevice(t, org, siteB.id);
  const otherDevice = await createDevice(t, other, (await createSite(t, other.id)).id);
  const partnerAdmin = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN });
  // A technician holding *:* (the Partner Admin role) with standing access to every organisation.
  const tech = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN });
  const orgAdmin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN });
  const orgViewer = await signedInOrgMember(t, org, { roleId: ORG_VIEWER });
  const otherAdmin = await signedInOrgMember(t, other, { roleId: ORG_ADMIN });
  const partnerB = await createPartner(t);
  const orgB = await createOrg(t, partnerB.id);
  const partnerBAdmin = await signedInPartnerMember(t, partnerB.id, { roleId: PARTNER_ADMIN });
  const orgBAdmin = await signedInOrgMember(t, orgB, { roleId: ORG_ADMIN });
  return {
    partner,
    org,
    other,
    siteA,
    siteB,
    deviceA,
    deviceB,
    otherDevice,
    partnerAdmin,
    tech,
    orgAdmin,
    orgViewer,
    otherAdmin,
    partnerB,
    orgB,
    partnerBAdmin,
    orgBAdmin,
  };
}
type World = Awaited<ReturnType<typeof world>>;

const draft = (api: ApiClient, body: Record<string, unknown>) =>
  api.raw.request('POST', '/relationships', { body: { name: 'Tier 1', duration: 'P1Y', ...body } });

async function approved(w: World, body: Record<string, unknown>) {
  const d = expectStatus(await draft(w.partnerAdmin.api, { orgId: w.org.id, ...body }), 201);
  expectStatus(await w.partnerAdmin.api.post(`/relationships/${d.body.id}/request`), 200);
  return expectStatus(await w.orgAdmin.api.post(`/relationships/${d.body.id}/approve`), 200).body;
}

const requireRelationships = async (w: World, on = true) =>
  expectStatus(await w.partnerAdmin.api.patch('/orgs/partners/me', { settings: { requireRelationships: on } }), 200);

const onPeer = (who: SignedInMember) => peer.client().withToken(who.session.accessToken);

describe('the lifecycle: draft → approval pending → active → terminated', () => {
  it('the partner drafts and asks, the organisation is mailed the link and approves, either side terminates', async () => {
    const w = await world();
    const d = expectStatus(
      await draft(w.partnerAdmin.api, {
        orgId: w.org.id,
        roleIds: [PARTNER_VIEWER],
        siteIds: [w.siteA.id],
        duration: 'P90D',
      }),
      201,
    );
    expect(d.body).toMatchObject({
      partnerId: w.partner.id,
      orgId: w.org.id,
      name: 'Tier 1',
      roleIds: [PARTNER_VIEWER],
      siteIds: [w.siteA.id],
      deviceGroupIds: [],
      duration: 'P90D',
      autoExtend: false,
      status: 'draft',
      requestExpiresAt: null,
      startsAt: null,
      endsAt: null,
    });
    const before = Date.now();
    const asked = expectStatus(await w.partnerAdmin.api.post(`/relationships/${d.body.id}/request`), 200);
    expect(asked.body.status).toBe('approval_pending');
    expect(asked.body.approvalUrl).toBe(`${t.baseUrl}/relationships/${d.body.id}/approval`);
    const lapse = new Date(asked.body.requestExpiresAt!).getTime() - before;
    expect(Math.abs(lapse - 90 * DAY)).toBeLessThan(60_000);
    const asking = (x: { text: string }) => x.text.includes('relationship "Tier 1"');
    const m = await mail.waitFor(w.orgAdmin.user.email, asking);
    expect(m.text).toContain(asked.body.approvalUrl);
    await mail.waitFor(w.partnerAdmin.user.email, asking);
    // Locked: a second request is refused.
    expectError(
      await w.partnerAdmin.api.post(`/relationships/${d.body.id}/request`),
      409,
      'relationship_state_invalid',
    );

    // The organisation sees exactly what is asked; only its admin decides.
    const seen = expectStatus(await w.orgAdmin.api.get(`/relationships/${d.body.id}`), 200);
    expect(seen.body).toMatchObject({ status: 'approval_pending', roleIds: [PARTNER_VIEWER] });
    // Organization Viewer holds neither users:read nor users:write.
    expectError(await w.orgViewer.api.get(`/relationships/${d.body.id}`), 403, 'forbidden');
    expectError(await w.orgViewer.api.post(`/relationships/${d.body.id}/approve`), 403, 'forbidden');
    expectError(
      await w.partnerAdmin.api.post(`/relationships/${d.body.id}/approve`),
      403,
      'relationship_approver_required',
    );
    const on = expectStatus(await w.orgAdmin.api.post(`/relationships/${d.body.id}/approve`), 200);
    expect(on.body.status).toBe('active');
    const span = new Date(on.body.endsAt!).getTime() - new Date(on.body.startsAt!).getTime();
    expect(span).toBe(90 * DAY);
    expectError(await w.orgAdmin.api.post(`/relationships/${d.body.id}/decline`), 409, 'relationship_state_invalid');

    const list = expectStatus(await w.orgAdmin.api.get('/relationships'), 200);
    expect(list.body.data.map((r) => r.id)).toEqual([d.body.id]);
    const mine = expectStatus(await w.partnerAdmin.api.get('/relationships', { query: { orgId: w.org.id } }), 200);
    expect(mine.body.data.map((r) => r.id)).toEqual([d.body.id]);

    const ended = expectStatus(await w.orgAdmin.api.post(`/relationships/${d.body.id}/terminate`), 200);
    expect(ended.body.status).toBe('terminated');
    expectError(
      await w.partnerAdmin.api.post(`/relationships/${d.body.id}/terminate`),
      409,
      'relationship_state_invalid',
    );
    for (const action of ['create', 'request', 'approve', 'terminate'])
      expect(await auditRecords(t, `relationship.${action}`, d.body.id), action).toHaveLength(1);
  });

  it('the organisation declines; the partner terminates its own', async () => {
    const w = await world();
    const a = expectStatus(await draft(w.partnerAdmin.api, { orgId: w.org.id, roleIds: [PARTNER_TECH] }), 201);
    expectStatus(await w.partnerAdmin.api.post(`/relationships/${a.body.id}/request`), 200);
    const no = expectStatus(await w.orgAdmin.api.post(`/relationships/${a.body.id}/decline`), 200);
    expect(no.body).toMatchObject({ status: 'declined', startsAt: null });
    const b = await approved(w, { roleIds: [PARTNER_TECH] });
    expect(expectStatus(await w.partnerAdmin.api.post(`/relationships/${b.id}/terminate`), 200).body.status).toBe(
      'terminated',
    );
  });

  it('bad input is refused with its code, and nothing is written', async () => {
    const w = await world();
    for (const duration of ['P0D', 'PT12H', 'P2Y1D', 'P3Y', '1 year', 'P'])
      expectError(
        await draft(w.partnerAdmin.api, { orgId: w.org.id, roleIds: [PARTNER_VIEWER], duration }),
        400,
        'validation_failed',
      );
    for (const duration of ['P1D', 'P2Y', 'P24M', 'P6M', 'P52W'])
      expectStatus(await draft(w.partnerAdmin.api, { orgId: w.org.id, roleIds: [PARTNER_VIEWER], duration }), 201);
    expectError(await draft(w.partnerAdmin.api, { orgId: w.org.id, roleIds: [] }), 400, 'validation_failed');
    // An organisation role, a site of another organisation, an organisation of another partner.
    expectError(await draft(w.partnerAdmin.api, { orgId: w.org.id, roleIds: [ORG_ADMIN] }), 400, 'validation_failed');
    const foreignSite = await createSite(t, w.other.id);
    expectError(
      await draft(w.partnerAdmin.api, { orgId: w.org.id, roleIds: [PARTNER_VIEWER], siteIds: [foreignSite.id] }),
      400,
      'validation_failed',
    );
    expectError(await draft(w.partnerAdmin.api, { orgId: w.orgB.id, roleIds: [PARTNER_VIEWER] }), 404, 'not_found');
    expectError(
      await draft(w.partnerAdmin.api, { orgId: w.org.id, roleIds: [PARTNER_VIEWER], extra: 1 }),
      400,
      'validation_failed',
    );
    const all = expectStatus(await w.partnerAdmin.api.get('/relationships'), 200);
    expect(all.body.data).toHaveLength(5);
  });
});

describe('an approved relationship is frozen: narrowing applies at once, widening is refused', () => {
  it('adding a role, a site or time is 409 relationship_frozen; removing applies', async () => {
    const w = await world();
    const rel = await approved(w, { roleIds: [PARTNER_TECH, PARTNER_VIEWER], siteIds: [w.siteA.id], duration: 'P6M' });
    const patch = (body: Record<string, unknown>) =>
      w.partnerAdmin.api.raw.request('PATCH', `/relationships/${rel.id}`, { body });
    expectError(await patch({ roleIds: [PARTNER_TECH, PARTNER_VIEWER, PARTNER_ADMIN] }), 409, 'relationship_frozen');
    expectError(await patch({ siteIds: [w.siteA.id, w.siteB.id] }), 409, 'relationship_frozen');
    expectError(await patch({ siteIds: [] }), 409, 'relationship_frozen'); // [] = every site: wider
    expectError(await patch({ duration: 'P1Y' }), 409, 'relationship_frozen');
    expectError(await patch({ autoExtend: true }), 409, 'relationship_frozen');
    const narrowed = expectStatus(await patch({ roleIds: [PARTNER_VIEWER], duration: 'P3M' }), 200);
    expect(narrowed.body).toMatchObject({ status: 'active', roleIds: [PARTNER_VIEWER], siteIds: [w.siteA.id] });
    const span = new Date(narrowed.body.endsAt).getTime() - new Date(narrowed.body.startsAt).getTime();
    expect(span).toBeLessThan(93 * DAY);
    expect(await auditRecords(t, 'relationship.update', rel.id)).toHaveLength(1);
  });

  it('a draft changes freely', async () => {
    const w = await world();
    const d = expectStatus(await draft(w.partnerAdmin.api, { orgId: w.org.id, roleIds: [PARTNER_VIEWER] }), 201);
    const wider = await w.partnerAdmin.api.raw.request('PATCH', `/relationships/${d.body.id}`, {
      body: { roleIds: [PARTNER_VIEWER, PARTNER_TECH], duration: 'P2Y' },
    });
    expect(expectStatus(wider, 200).body).toMatchObject({ roleIds: [PARTNER_VIEWER, PARTNER_TECH], duration: 'P2Y' });
  });
});

describe('auto-extension is refused for roles that govern access', () => {
  it('*:* or users:write in the set → 400 auto_extend_not_allowed; a technician role may extend', async () => {
    const w = await world();
    expectError(
      await draft(w.partnerAdmin.api, { orgId: w.org.id, roleIds: [PARTNER_VIEWER, PARTNER_ADMIN], autoExtend: true }),
      400,
      'auto_extend_not_allowed',
    );
    const role = expectStatus(
      await w.partnerAdmin.api.post('/roles', {
        name: `Helpdesk ${Date.now()}`,
        permissions: [
          { resource: 'users', action: 'read' },
          { resource: 'users', action: 'write' },
        ],
      }),
      201,
    );
    expectError(
      await draft(w.partnerAdmin.api, { orgId: w.org.id, roleIds: [role.body.id], autoExtend: true }),
      400,
      'auto_extend_not_allowed',
    );
    const ok = expectStatus(
      await draft(w.partnerAdmin.api, { orgId: w.org.id, roleIds: [PARTNER_TECH], autoExtend: true }),
      201,
    );
    expect(ok.body.autoExtend).toBe(true);
    // Nor can a draft that extends itself take an admin role afterwards.
    expectError(
      await w.partnerAdmin.api.raw.request('PATCH', `/relationships/${ok.body.id}`, {
        body: { roleIds: [PARTNER_ADMIN] },
      }),
      400,
      'auto_extend_not_allowed',
    );
  });
});

describe('a request for approval lapses after 90 days', () => {
  it('past requestExpiresAt it lists as expired and can no longer be approved', async () => {
    const w = await world();
    const d = expectStatus(await draft(w.partnerAdmin.api, { orgId: w.org.id, roleIds: [PARTNER_VIEWER] }), 201);
    const asked = expectStatus(await w.partnerAdmin.api.post(`/relationships/${d.body.id}/request`), 200);
    // The request was made 90 days ago: its expiry moves back to a second ago.
    await updateRelationship(t.deps.db, d.body.id, { requestExpiresAt: new Date(t.clock.now().getTime() - 1000) });
    expect(new Date(asked.body.requestExpiresAt!).getTime()).toBeGreaterThan(t.clock.now().getTime());
    expect(expectStatus(await w.orgAdmin.api.get(`/relationships/${d.body.id}`), 200).body.status).toBe('expired');
    expectError(await w.orgAdmin.api.post(`/relationships/${d.body.id}/approve`), 409, 'relationship_state_invalid');
    const expired = expectStatus(await w.orgAdmin.api.get('/relationships', { query: { status: 'expired' } }), 200);
    expect(expired.body.data.map((r) => r.id)).toEqual([d.body.id]);
    const pending = expectStatus(
      await w.orgAdmin.api.get('/relationships', { query: { status: 'approval_pending' } }),
      200,
    );
    expect(pending.body.data).toEqual([]);
  });
});

describe('the other partner and the other organisation cannot touch a relationship', () => {
  it("partner B cannot see, change, approve or terminate partner A's; another organisation's admin cannot approve", async () => {
    const w = await world();
    const d = expectStatus(await draft(w.partnerAdmin.api, { orgId: w.org.id, roleIds: [PARTNER_VIEWER] }), 201);
    expectStatus(await w.partnerAdmin.api.post(`/relationships/${d.body.id}/request`), 200);
    const id = d.body.id;
    for (const who of [w.partnerBAdmin, w.orgBAdmin, w.otherAdmin]) {
      expectError(await who.api.get(`/relationships/${id}`), 404, 'not_found');
      expectError(await who.api.post(`/relationships/${id}/approve`), 404, 'not_found');
      expectError(await who.api.post(`/relationships/${id}/decline`), 404, 'not_found');
      expectError(await who.api.post(`/relationships/${id}/terminate`), 404, 'not_found');
      expect(expectStatus(await who.api.get('/relationships'), 200).body.data).toEqual([]);
    }
    expectError(
      await w.partnerBAdmin.api.raw.request('PATCH', `/relationships/${id}`, { body: { name: 'Mine' } }),
      404,
      'not_found',
    );
    expectError(await w.partnerBAdmin.api.post(`/relationships/${id}/request`), 404, 'not_found');
    // Partner B cannot draft one with partner A's organisation, nor with partner A's roles.
    expectError(await draft(w.partnerBAdmin.api, { orgId: w.org.id, roleIds: [PARTNER_VIEWER] }), 404, 'not_found');
    expect(expectStatus(await w.orgAdmin.api.get(`/relationships/${id}`), 200).body.status).toBe('approval_pending');
  });
});

describe('a partner that requires relationships: staff reach an organisation only through an active one', () => {
  it('the intersection: a technician holding *:* in a relationship of two read roles can only read', async () => {
    const w = await world();
    const reader = expectStatus(
      await w.partnerAdmin.api.post('/roles', {
        name: `Device reader ${Date.now()}`,
        permissions: [{ resource: 'devices', action: 'read' }],
      }),
      201,
    ).body.id;
    // Off (the default): standing access as today.
    expectStatus(await w.tech.api.get(`/devices/${w.otherDevice.id}`), 200);
    await requireRelationships(w);
    expectError(await w.tech.api.get(`/devices/${w.deviceA.id}`), 404, 'not_found');
    const rel = await approved(w, { roleIds: [PARTNER_VIEWER, reader] });

    expectStatus(await w.tech.api.get(`/devices/${w.deviceA.id}`), 200);
    expectStatus(await w.tech.api.get(`/orgs/organizations/${w.org.id}`), 200);
    expectError(
      await w.tech.api.raw.request('PATCH', `/devices/${w.deviceA.id}`, { body: { name: 'renamed' } }),
      403,
      'forbidden',
    );
    expectError(
      await w.tech.api.raw.request('PATCH', `/orgs/organizations/${w.org.id}`, { body: { name: 'renamed' } }),
      403,
      'forbidden',
    );
    expectError(await w.tech.api.raw.request('DELETE', `/devices/${w.deviceA.id}`), 403, 'forbidden');
    // No relationship with the other organisation: it is out of reach, by id and in lists.
    expectError(await w.tech.api.get(`/devices/${w.otherDevice.id}`), 404, 'not_found');
    const orgs = expectStatus(await w.tech.api.get('/orgs/organizations'), 200);
    expect(orgs.body.data.map((o) => o.id)).toEqual([w.org.id]);
    const devices = expectStatus(await w.tech.api.get('/devices'), 200);
    expect(devices.body.data.map((d) => d.id).sort()).toEqual([w.deviceA.id, w.deviceB.id].sort());

    // explain (asked by the organisation: the partner's own admin now reaches it only through relationships too)
    // names the relationship, and the step that refuses the write.
    const write = expectStatus(
      await w.orgAdmin.api.get('/access/explain', {
        query: {
          userId: w.tech.user.id,
          permission: 'devices:write',
          resourceType: 'device',
          resourceId: w.deviceA.id,
        },
      }),
      200,
    );
    expect(write.body.allowed).toBe(false);
    const read = expectStatus(
      await w.orgAdmin.api.get('/access/explain', {
        query: { userId: w.tech.user.id, permission: 'devices:read', resourceType: 'device', resourceId: w.deviceA.id },
      }),
      200,
    );
    expect(read.body.allowed).toBe(true);
    const steps = JSON.stringify(read.body);
    expect(steps).toContain(rel.id);
    expect(JSON.stringify(write.body)).toContain('"deniedBy":"relationship"');

    // Narrowing bites at once: without the read roles, nothing is left.
    expectStatus(
      await w.partnerAdmin.api.raw.request('PATCH', `/relationships/${rel.id}`, { body: { roleIds: [reader] } }),
      200,
    );
    expectError(await w.tech.api.get(`/orgs/organizations/${w.org.id}`), 403, 'forbidden');
    expectStatus(await w.tech.api.get(`/devices/${w.deviceA.id}`), 200);
    // Switched off again: today's behaviour.
    await requireRelationships(w, false);
    expectStatus(await w.tech.api.get(`/devices/${w.otherDevice.id}`), 200);
  });

  it("the partner's own service accounts are held to relationships as its staff are (a key is no way around them)", async () => {
    const w = await world();
    const reader = expectStatus(
      await w.partnerAdmin.api.post('/roles', {
        name: `SA device reader ${Date.now()}`,
        permissions: [{ resource: 'devices', action: 'read' }],
      }),
      201,
    ).body.id;
    // A partner-wide automation account whose role may read and write devices everywhere.
    const sa = await serviceAccountWithKey(w.partnerAdmin.api, { roleId: PARTNER_TECH });
    expectStatus(await sa.api.get(`/devices/${w.deviceA.id}`), 200);
    await requireRelationships(w);
    // No relationship: the organisation is out of reach for the key, by id and in lists, as for people.
    expectError(await sa.api.get(`/devices/${w.deviceA.id}`), 404, 'not_found');
    expect(expectStatus(await sa.api.get('/devices'), 200).body.data).toEqual([]);
    const rel = await approved(w, { roleIds: [reader] });
    // A relationship of a read role: the key reads, and its role's write is cut to the relationship's roles.
    expectStatus(await sa.api.get(`/devices/${w.deviceA.id}`), 200);
    expectError(
      await sa.api.raw.request('PATCH', `/devices/${w.deviceA.id}`, { body: { name: 'renamed by a key' } }),
      403,
      'forbidden',
    );
    expectError(await sa.api.get(`/devices/${w.otherDevice.id}`), 404, 'not_found');
    // explain, asked by the organisation, says the same about the key.
    const write = expectStatus(
      await w.orgAdmin.api.get('/access/explain', {
        query: {
          serviceAccountId: sa.account.id,
          permission: 'devices:write',
          resourceType: 'device',
          resourceId: w.deviceA.id,
        },
      }),
      200,
    );
    expect(write.body.allowed).toBe(false);
    expect(JSON.stringify(write.body)).toContain('"deniedBy":"relationship"');
    // The customer terminates: the key's next request is refused, on another instance too.
    expectStatus(await w.orgAdmin.api.post(`/relationships/${rel.id}/terminate`), 200);
    expectError(await peer.client().withToken(sa.key.key).get(`/devices/${w.deviceA.id}`), 404, 'not_found');
  });

  it('a relationship listing sites reaches only their records; mspAccess suspended suspends it', async () => {
    const w = await world();
    await requireRelationships(w);
    await approved(w, { roleIds: [PARTNER_TECH], siteIds: [w.siteA.id] });
    expectStatus(await w.tech.api.get(`/devices/${w.deviceA.id}`), 200);
    expectError(await w.tech.api.get(`/devices/${w.deviceB.id}`), 404, 'not_found');
    expectStatus(
      await w.orgAdmin.api.patch(`/orgs/organizations/${w.org.id}`, { settings: { mspAccess: 'suspended' } }),
      200,
    );
    expectError(await w.tech.api.get(`/devices/${w.deviceA.id}`), 403, 'msp_access_denied');
  });

  it('termination and the end bite on the next request, on another instance', async () => {
    const w = await world();
    await requireRelationships(w);
    const a = await approved(w, { roleIds: [PARTNER_TECH] });
    expectStatus(await onPeer(w.tech).get(`/devices/${w.deviceA.id}`), 200);
    expectStatus(await w.orgAdmin.api.post(`/relationships/${a.id}/terminate`), 200);
    expectError(await onPeer(w.tech).get(`/devices/${w.deviceA.id}`), 404, 'not_found');

    const b = await approved(w, { roleIds: [PARTNER_TECH], duration: 'P1D' });
    // Ten minutes left: the access token (15 minutes) outlives the relationship, so its end is what refuses.
    await updateRelationship(t.deps.db, b.id, { endsAt: new Date(t.clock.now().getTime() + 10 * 60_000) });
    expectStatus(await onPeer(w.tech).get(`/devices/${w.deviceA.id}`), 200);
    const expiring = expectStatus(await w.orgAdmin.api.get('/relationships', { query: { status: 'expiring' } }), 200);
    expect(expiring.body.data.map((r) => r.id)).toEqual([b.id]);
    const csv = expectStatus(
      await w.partnerAdmin.api.raw.request('GET', '/relationships/export', { query: { status: 'expiring' } }),
      200,
    );
    const lines = csv.text.trim().split('\r\n');
    expect(lines[0]).toBe(
      'id,orgId,name,status,roleIds,siteIds,deviceGroupIds,duration,autoExtend,requestExpiresAt,startsAt,endsAt,createdAt',
    );
    expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual([b.id]);
    expect(lines[1]).toContain(',expiring,');
    expectError(
      await w.partnerBAdmin.api.raw.request('GET', '/relationships/export', { query: { status: 'nope' } }),
      400,
      'validation_failed',
    );
    const theirs = expectStatus(await w.partnerBAdmin.api.raw.request('GET', '/relationships/export'), 200);
    expect(theirs.text.trim().split('\r\n')).toHaveLength(1);
    t.clock.advance(9 * 60_000);
    expectStatus(await onPeer(w.tech).get(`/devices/${w.deviceA.id}`), 200);
    t.clock.advance(60_000 + 1000);
    expectError(await onPeer(w.tech).get(`/devices/${w.deviceA.id}`), 404, 'not_found');
    expectError(await w.tech.api.get(`/devices/${w.deviceA.id}`), 404, 'not_found');
    expect(expectStatus(await w.orgAdmin.api.get(`/relationships/${b.id}`), 200).body.status).toBe('expired');
  });
});

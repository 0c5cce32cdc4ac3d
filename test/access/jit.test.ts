// Just-in-time access to an organisation, through HTTP on two instances over one database: requests,
// the three approval policies, the partner's duration cap, expiry and revocation biting on the next request on
// another instance, explain naming the grant, and the audit trail.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, startPeer, type PeerApp, type TestApp } from '../support/app.js';
import type { RequestBody } from '../support/api-types.js';
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
import { expectError, expectStatus, ORG_ADMIN, PARTNER_ADMIN, PARTNER_TECH } from '../onboarding/helpers.js';

let t: TestApp;
let peer: PeerApp;
beforeAll(async () => {
  t = await startApp();
  peer = await startPeer(t);
});
afterAll(async () => {
  await peer?.close();
  await t?.close();
});

/** A partner with two organisations, a device in each of two sites of the first, and the people around them. */
async function world(orgSettings: object = {}) {
  const partner = await createPartner(t);
  const org = await createOrg(t, partner.id, undefined, orgSettings);
  const other = await createOrg(t, partner.id);
  const siteA = await createSite(t, org.id);
  const siteB = await createSite(t, org.id);
  const deviceA = await createDevice(t, org, siteA.id);
  const deviceB = await createDevice(t, org, siteB.id);
  const partnerAdmin = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN });
  const tech = await signedInPartnerMember(t, partner.id, {
    roleId: PARTNER_TECH,
    orgAccess: 'eligible',
    orgIds: [org.id],
  });
  const tech2 = await signedInPartnerMember(t, partner.id, {
    roleId: PARTNER_TECH,
    orgAccess: 'eligible',
    orgIds: [org.id],
  });
  const orgAdmin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN });
  return { partner, org, other, siteA, siteB, deviceA, deviceB, partnerAdmin, tech, tech2, orgAdmin };
}
type World = Awaited<ReturnType<typeof world>>;

const ask = (who: SignedInMember, body: RequestBody<'post', '/access/requests'>) =>
  who.api.post('/access/requests', body);
const onPeer = (who: SignedInMember) => peer.client().withToken(who.session.accessToken);
const setOrg = (who: SignedInMember, orgId: string, settings: object) =>
  who.api.patch(`/orgs/organizations/${orgId}`, { settings });

async function autoGrant(w: World, minutes = 30) {
  const res = expectStatus(
    await ask(w.tech, {
      orgId: w.org.id,
      durationMinutes: minutes,
      reason: 'Patch the file server',
      ticketRef: 'INC-1',
    }),
    201,
  );
  expect(res.body).toMatchObject({
    status: 'approved',
    approval: 'auto',
    grant: { state: 'active', orgId: w.org.id, userId: w.tech.user.id },
  });
  return res.body.grant as { id: string; expiresAt: string };
}

describe('auto grant', () => {
  it('an eligible member is granted at once and reaches the organisation, in lists too; nothing before, nothing elsewhere', async () => {
    const w = await world();
    expectError(await w.tech.api.get(`/devices/${w.deviceA.id}`), 404, 'not_found');
    expectError(await ask(w.tech, { orgId: w.other.id, durationMinutes: 30, reason: 'x' }), 403, 'jit_not_eligible');
    const grant = await autoGrant(w);
    expectStatus(await w.tech.api.get(`/devices/${w.deviceA.id}`), 200);
    expectStatus(await onPeer(w.tech).get(`/devices/${w.deviceB.id}`), 200);
    const listed = expectStatus(await w.tech.api.get('/orgs/organizations', { query: { limit: 200 } }), 200);
    expect(listed.body.data.map((o: { id: string }) => o.id)).toEqual([w.org.id]);
    const grants = expectStatus(await w.tech.api.get('/access/grants'), 200);
    expect(grants.body.data.map((g: { id: string }) => g.id)).toEqual([grant.id]);
    // The other eligible member gained nothing.
    expectError(await w.tech2.api.get(`/devices/${w.deviceA.id}`), 404, 'not_found');
  });

  it('a one-site grant reaches that site only', async () => {
    const w = await world();
    expectStatus(
      await ask(w.tech, { orgId: w.org.id, siteId: w.siteA.id, durationMinutes: 30, reason: 'One site' }),
      201,
    );
    expectStatus(await w.tech.api.get(`/devices/${w.deviceA.id}`), 200);
    expectError(await w.tech.api.get(`/devices/${w.deviceB.id}`), 404, 'not_found');
  });
});

describe('partner-admin approval', () => {
  it('the request waits; neither the requester nor a technician nor the customer approves it; a Partner Admin does', async () => {
    const w = await world({ jitApproval: 'partner_admin' });
    const req = expectStatus(
      await ask(w.tech, { orgId: w.org.id, durationMinutes: 60, reason: 'Backup restore', ticketRef: 'INC-2' }),
      201,
    );
    expect(req.body).toMatchObject({ status: 'pending', approval: 'partner_admin', grant: null });
    expectError(await w.tech.api.get(`/devices/${w.deviceA.id}`), 404, 'not_found');
    expectError(await w.tech.api.post(`/access/requests/${req.body.id}/approve`, {}), 403, 'forbidden_self_action');
    expectError(await w.tech2.api.post(`/access/requests/${req.body.id}/approve`, {}), 403, 'jit_approver_required');
    expectError(await w.orgAdmin.api.post(`/access/requests/${req.body.id}/approve`, {}), 403, 'jit_approver_required');
    const pending = expectStatus(
      await w.partnerAdmin.api.get('/access/requests', { query: { view: 'approvable' } }),
      200,
    );
    expect(pending.body.data.map((r: { id: string }) => r.id)).toEqual([req.body.id]);
    const ok = expectStatus(
      await w.partnerAdmin.api.post(`/access/requests/${req.body.id}/approve`, { note: 'ok' }),
      200,
    );
    expect(ok.body).toMatchObject({
      status: 'approved',
      decidedBy: w.partnerAdmin.user.id,
      grant: { state: 'active', approval: 'partner_admin', approvedBy: w.partnerAdmin.user.id },
    });
    expectStatus(await onPeer(w.tech).get(`/devices/${w.deviceA.id}`), 200);
    expectError(
      await w.partnerAdmin.api.post(`/access/requests/${req.body.id}/deny`, {}),
      409,
      'access_request_not_pending',
    );
    const own = expectStatus(await w.tech.api.get('/access/requests', { query: { view: 'own' } }), 200);
    expect(own.body.data[0]).toMatchObject({ id: req.body.id, status: 'approved' });
  });
});

describe('customer approval', () => {
  it("customer_admin: only the organisation's admin approves or denies; the partner may not loosen the policy", async () => {
    const w = await world();
    expectStatus(await setOrg(w.orgAdmin, w.org.id, { jitApproval: 'customer_admin' }), 200);
    expectError(await setOrg(w.partnerAdmin, w.org.id, { jitApproval: 'auto' }), 403, 'jit_approval_customer_only');
    const req = expectStatus(
      await ask(w.tech, { orgId: w.org.id, durationMinutes: 45, reason: 'Printer', ticketRef: 'INC-3' }),
      201,
    );
    expect(req.body).toMatchObject({ status: 'pending', approval: 'customer_admin' });
    expectError(
      await w.partnerAdmin.api.post(`/access/requests/${req.body.id}/approve`, {}),
      403,
      'jit_approver_required',
    );
    const pending = expectStatus(await w.orgAdmin.api.get('/access/requests'), 200);
    expect(pending.body.data.map((r: { id: string }) => r.id)).toEqual([req.body.id]);
    // The organisation's admin reads who asks and for what by name, not by id.
    expect(pending.body.data[0]).toMatchObject({
      userName: w.tech.user.name,
      userEmail: w.tech.user.email,
      orgName: w.org.name,
    });
    expectStatus(await w.orgAdmin.api.post(`/access/requests/${req.body.id}/approve`, {}), 200);
    expectStatus(await w.tech.api.get(`/devices/${w.deviceA.id}`), 200);
    // A second request, denied: nothing opens.
    const req2 = expectStatus(await ask(w.tech2, { orgId: w.org.id, durationMinutes: 45, reason: 'Curious' }), 201);
    const denied = expectStatus(
      await w.orgAdmin.api.post(`/access/requests/${req2.body.id}/deny`, { note: 'no' }),
      200,
    );
    expect(denied.body).toMatchObject({ status: 'denied', grant: null });
    expectError(await w.tech2.api.get(`/devices/${w.deviceA.id}`), 404, 'not_found');
  });

  it('mspAccess approval_required: a standing member is held out until the customer approves its grant', async () => {
    const w = await world();
    const standing = await signedInPartnerMember(t, w.partner.id, { roleId: PARTNER_TECH, orgAccess: 'all' });
    expectStatus(await setOrg(w.orgAdmin, w.org.id, { mspAccess: 'approval_required' }), 200);
    expectError(await standing.api.get(`/devices/${w.deviceA.id}`), 403, 'msp_access_denied');
    const req = expectStatus(await ask(standing, { orgId: w.org.id, durationMinutes: 30, reason: 'Urgent fix' }), 201);
    expect(req.body).toMatchObject({ status: 'pending', approval: 'customer_admin' });
    expectStatus(await w.orgAdmin.api.post(`/access/requests/${req.body.id}/approve`, {}), 200);
    expectStatus(await onPeer(standing).get(`/devices/${w.deviceA.id}`), 200);
    // Its other organisation is untouched by the policy.
    expectStatus(await standing.api.get(`/orgs/organizations/${w.other.id}`), 200);
  });
});

describe('other tenants', () => {
  it("another partner's admin and another organisation's admin find neither the request nor the grant (404)", async () => {
    const w = await world({ jitApproval: 'customer_admin' });
    const elsewhere = await world();
    const req = expectStatus(await ask(w.tech, { orgId: w.org.id, durationMinutes: 30, reason: 'Mine' }), 201);
    expectError(await elsewhere.partnerAdmin.api.post(`/access/requests/${req.body.id}/deny`, {}), 404, 'not_found');
    expectError(await elsewhere.orgAdmin.api.post(`/access/requests/${req.body.id}/approve`, {}), 404, 'not_found');
    expect((await elsewhere.orgAdmin.api.get('/access/requests')).body.data).toEqual([]);
    const ok = expectStatus(await w.orgAdmin.api.post(`/access/requests/${req.body.id}/approve`, {}), 200);
    expectError(await elsewhere.partnerAdmin.api.delete(`/access/grants/${ok.body.grant!.id}`), 404, 'not_found');
    expectError(await elsewhere.orgAdmin.api.delete(`/access/grants/${ok.body.grant!.id}`), 404, 'not_found');
    expect((await elsewhere.partnerAdmin.api.get('/access/grants')).body.data).toEqual([]);
    // A member of the same partner asking for an organisation of another partner: it does not exist here.
    expectError(await ask(w.tech, { orgId: elsewhere.org.id, durationMinutes: 30, reason: 'x' }), 404, 'not_found');
    expectError(
      await ask(w.tech, { orgId: w.org.id, siteId: elsewhere.siteA.id, durationMinutes: 30, reason: 'x' }),
      404,
      'not_found',
    );
  });
});

describe('duration cap', () => {
  it("at most 480 minutes by default, at most the partner's jitMaxMinutes once set (a partner setting only)", async () => {
    const w = await world();
    const over = await ask(w.tech, { orgId: w.org.id, durationMinutes: 481, reason: 'Long' });
    expectError(over, 400, 'validation_failed');
    expect(JSON.stringify(over.body.details)).toContain('durationMinutes');
    expectStatus(
      await w.partnerAdmin.api.patch('/orgs/partners/me', { settings: { security: { jitMaxMinutes: 60 } } }),
      200,
    );
    expectError(await ask(w.tech, { orgId: w.org.id, durationMinutes: 61, reason: 'Long' }), 400, 'validation_failed');
    const ok = expectStatus(await ask(w.tech, { orgId: w.org.id, durationMinutes: 60, reason: 'Short' }), 201);
    expect(new Date(ok.body.grant!.expiresAt).getTime() - new Date(ok.body.grant!.startsAt).getTime()).toBe(
      60 * 60_000,
    );
    expectError(await setOrg(w.orgAdmin, w.org.id, { security: { jitMaxMinutes: 600 } }), 400, 'validation_failed');
  });
});

describe('a grant expires mid-session', () => {
  it('the next request after the end is refused on another instance, and the expiry is audited once', async () => {
    const w = await world();
    // Ten minutes: the access token (15 minutes) outlives the grant, so the grant's end is what refuses.
    const grant = await autoGrant(w, 10);
    expectStatus(await w.tech.api.get(`/devices/${w.deviceA.id}`), 200);
    t.clock.advance(9 * 60_000);
    expectStatus(await onPeer(w.tech).get(`/devices/${w.deviceA.id}`), 200);
    t.clock.advance(60_000 + 1000);
    expectError(await onPeer(w.tech).get(`/devices/${w.deviceA.id}`), 404, 'not_found');
    expectError(await w.tech.api.get(`/devices/${w.deviceA.id}`), 404, 'not_found');
    const expired = await auditRecords(t, 'access.expire', grant.id);
    expect(expired).toHaveLength(1);
    expect(expired[0]!.details).toMatchObject({
      reason: 'Patch the file server',
      ticketRef: 'INC-1',
      observed: 'request',
    });
    const all = expectStatus(await w.tech.api.get('/access/grants', { query: { state: 'all' } }), 200);
    expect(all.body.data[0]).toMatchObject({ id: grant.id, state: 'expired' });
    expect((await w.tech.api.get('/access/grants')).body.data).toEqual([]);
  });
});

describe('revocation bites', () => {
  it("the organisation's admin revokes; the member's next request on another instance is refused", async () => {
    const w = await world();
    const grant = await autoGrant(w, 120);
    expectStatus(await onPeer(w.tech).get(`/devices/${w.deviceA.id}`), 200);
    expectError(await w.tech2.api.delete(`/access/grants/${grant.id}`), 404, 'not_found');
    const revoked = expectStatus(await w.orgAdmin.api.delete(`/access/grants/${grant.id}`), 200);
    expect(revoked.body).toMatchObject({ state: 'revoked', revokedBy: w.orgAdmin.user.id });
    expectError(await onPeer(w.tech).get(`/devices/${w.deviceA.id}`), 404, 'not_found');
    expectError(await w.tech.api.get(`/devices/${w.deviceA.id}`), 404, 'not_found');
    expectError(await w.orgAdmin.api.delete(`/access/grants/${grant.id}`), 409, 'conflict');
    const rec = await auditRecords(t, 'access.revoke', grant.id);
    expect(rec).toHaveLength(1);
    expect(rec[0]).toMatchObject({
      actorUserId: w.orgAdmin.user.id,
      details: expect.objectContaining({ reason: 'Patch the file server', ticketRef: 'INC-1' }),
    });
  });
});

describe('explain names the grant', () => {
  it('organization_access via the grant, until its end; denied at that step once revoked', async () => {
    const w = await world();
    const q = { userId: w.tech.user.id, permission: 'devices:read', resourceType: 'device', resourceId: w.deviceA.id };
    const before = expectStatus(await w.orgAdmin.api.get('/access/explain', { query: q }), 200);
    expect(before.body).toMatchObject({ allowed: false, deniedBy: 'organization_access' });
    const grant = await autoGrant(w, 30);
    const during = expectStatus(await w.orgAdmin.api.get('/access/explain', { query: q }), 200);
    expect(during.body.allowed).toBe(true);
    expect(during.body.reasons).toContainEqual(
      expect.objectContaining({
        step: 'organization_access',
        allowed: true,
        via: 'grant',
        grantId: grant.id,
        until: grant.expiresAt,
      }),
    );
    expectStatus(await w.partnerAdmin.api.delete(`/access/grants/${grant.id}`), 200);
    const after = expectStatus(await w.orgAdmin.api.get('/access/explain', { query: q }), 200);
    expect(after.body).toMatchObject({ allowed: false, deniedBy: 'organization_access' });
  });
});

describe('audit records', () => {
  it('request, approve, grant and deny, each with the reason and the ticket', async () => {
    const w = await world({ jitApproval: 'partner_admin' });
    const a = expectStatus(
      await ask(w.tech, { orgId: w.org.id, durationMinutes: 20, reason: 'Reboot the DC', ticketRef: 'INC-9' }),
      201,
    );
    const b = expectStatus(
      await ask(w.tech2, { orgId: w.org.id, durationMinutes: 20, reason: 'Look around', ticketRef: 'INC-10' }),
      201,
    );
    const approved = expectStatus(await w.partnerAdmin.api.post(`/access/requests/${a.body.id}/approve`, {}), 200);
    expectStatus(await w.partnerAdmin.api.post(`/access/requests/${b.body.id}/deny`, { note: 'not needed' }), 200);
    const one = async (action: string, id: string) => {
      const rows = await auditRecords(t, action, id);
      expect(rows).toHaveLength(1);
      return rows[0]!;
    };
    expect(await one('access.request', a.body.id)).toMatchObject({
      actorUserId: w.tech.user.id,
      orgId: w.org.id,
      details: expect.objectContaining({ reason: 'Reboot the DC', ticketRef: 'INC-9', durationMinutes: 20 }),
    });
    expect(await one('access.approve', a.body.id)).toMatchObject({
      actorUserId: w.partnerAdmin.user.id,
      details: expect.objectContaining({ reason: 'Reboot the DC', ticketRef: 'INC-9' }),
    });
    expect(await one('access.grant', approved.body.grant!.id)).toMatchObject({
      details: expect.objectContaining({
        requestId: a.body.id,
        reason: 'Reboot the DC',
        ticketRef: 'INC-9',
        expiresAt: approved.body.grant!.expiresAt,
      }),
    });
    expect(await one('access.deny', b.body.id)).toMatchObject({
      actorUserId: w.partnerAdmin.user.id,
      details: expect.objectContaining({ reason: 'Look around', ticketRef: 'INC-10', note: 'not needed' }),
    });
    expect(await auditRecords(t, 'access.request', b.body.id)).toHaveLength(1);
  });
});

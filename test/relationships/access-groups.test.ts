// Partner-side access groups through HTTP, with two partners and their customers, on two instances over one
// database: joining a group attached to a relationship is the grant, leaving it the revocation (on the next request,
// on every instance); a relationship once given a group serves only its groups' members; explain and who-can name the
// relationship and the group; a SCIM group of the partner's IdP mapped to an access group carries its membership.
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
import { issueScimToken, PATCH_OP, ScimClient } from '../support/scim.js';
import { linkToken, startMailCatcher, type MailCatcher } from '../support/smtp.js';
import { expectError, expectStatus, ORG_ADMIN, PARTNER_ADMIN, PARTNER_TECH } from '../onboarding/helpers.js';
import type { ApiClient } from '../support/client.js';

const PASSWORD = 'Glacier-7f3a9c-Saffron!';
const tag = () => randomBytes(4).toString('hex');

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

/** Invites a member of the partner's staff and accepts from the mailed link: its id and its own client. */
async function invited(admin: SignedInMember, access: Record<string, unknown>) {
  const to = `tech-${tag()}@example.test`;
  const inv = expectStatus(
    await admin.api.raw.post('/users/invite', { email: to, name: `Tech ${tag()}`, roleId: PARTNER_TECH, ...access }),
    201,
  );
  const accepted = expectStatus(
    await t.client().post('/auth/accept-invite', { token: linkToken(await mail.waitFor(to)), password: PASSWORD }),
    200,
  );
  const token = accepted.body.accessToken as string;
  return { id: inv.body.id as string, api: t.client().withToken(token), peer: peer.client().withToken(token) };
}

/** A partner that requires relationships, its customer with an approved relationship, a second customer, partner B. */
async function world() {
  const partner = await createPartner(t);
  const org = await createOrg(t, partner.id);
  const other = await createOrg(t, partner.id);
  const site = await createSite(t, org.id);
  const device = await createDevice(t, org, site.id);
  const admin = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN });
  const orgAdmin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN });
  const otherAdmin = await signedInOrgMember(t, other, { roleId: ORG_ADMIN });
  const partnerB = await createPartner(t);
  const orgB = await createOrg(t, partnerB.id);
  const adminB = await signedInPartnerMember(t, partnerB.id, { roleId: PARTNER_ADMIN });
  const orgBAdmin = await signedInOrgMember(t, orgB, { roleId: ORG_ADMIN });
  const relName = `Tier 1 ${tag()}`;
  const rel = await approved(admin, orgAdmin, org.id, relName);
  const otherRel = await approved(admin, otherAdmin, other.id, `Other ${tag()}`);
  const relB = await approved(adminB, orgBAdmin, orgB.id, `B ${tag()}`);
  expectStatus(await admin.api.patch('/orgs/partners/me', { settings: { requireRelationships: true } }), 200);
  expectStatus(await adminB.api.patch('/orgs/partners/me', { settings: { requireRelationships: true } }), 200);
  return { partner, org, other, site, device, admin, orgAdmin, partnerB, orgB, adminB, rel, otherRel, relB, relName };
}
type World = Awaited<ReturnType<typeof world>>;

async function approved(admin: SignedInMember, orgAdmin: SignedInMember, orgId: string, name: string) {
  const d = expectStatus(
    await admin.api.raw.post('/relationships', { orgId, name, roleIds: [PARTNER_TECH], duration: 'P1Y' }),
    201,
  );
  expectStatus(await admin.api.post(`/relationships/${d.body.id}/request`), 200);
  return expectStatus(await orgAdmin.api.post(`/relationships/${d.body.id}/approve`), 200).body as {
    id: string;
    name: string;
  };
}

const newGroup = async (api: ApiClient, body: Record<string, unknown>) =>
  expectStatus(await api.raw.post('/access-groups', body), 201).body as { id: string; name: string };

const reachesOrg = async (api: ApiClient, orgId: string) => (await api.get(`/orgs/organizations/${orgId}`)).status;

/** The customer's admin asks why a partner member reaches (or not) its device. */
const explainOn = (w: World, userId: string) =>
  w.orgAdmin.api.raw.get('/access/explain', {
    query: { userId, permission: 'devices:read', resourceType: 'device', resourceId: w.device.id },
  });

describe('joining a group attached to a relationship is the grant; leaving it, the revocation on every instance', () => {
  it('a technician with no standing access reaches the organisation through the group, and nothing else', async () => {
    const w = await world();
    const tech = await invited(w.admin, { orgAccess: 'none' });
    expect(await reachesOrg(tech.api, w.org.id)).toBe(404);
    const group = await newGroup(w.admin.api, { name: `Tier 1 – Contoso ${tag()}` });
    const attached = expectStatus(
      await w.admin.api.raw.post(`/access-groups/${group.id}/relationships`, { relationshipId: w.rel.id }),
      201,
    );
    expect(attached.body).toMatchObject({ groupId: group.id, relationshipId: w.rel.id, orgId: w.org.id });
    const added = expectStatus(
      await w.admin.api.raw.post(`/access-groups/${group.id}/members`, { userId: tech.id }),
      201,
    );
    expect(added.body).toMatchObject({ userId: tech.id, source: 'direct' });
    // The grant bites on the next request, on both instances.
    expect(await reachesOrg(tech.api, w.org.id)).toBe(200);
    expect(await reachesOrg(tech.peer, w.org.id)).toBe(200);
    expect((await tech.api.get(`/devices/${w.device.id}`)).status).toBe(200);
    const orgs = expectStatus(await tech.api.get('/orgs/organizations', { query: { limit: 200 } }), 200).body.data;
    expect(orgs.map((o: { id: string }) => o.id)).toEqual([w.org.id]);
    // Not the other organisation (its relationship has no group and the technician has no standing access).
    expect(await reachesOrg(tech.api, w.other.id)).toBe(404);
    // Within the relationship's roles: Partner Technician cannot delete devices.
    expectError(await tech.api.delete(`/devices/${w.device.id}`), 403, 'forbidden');

    // Explain names the relationship and the group.
    const why = expectStatus(await explainOn(w, tech.id), 200).body;
    expect(why.allowed).toBe(true);
    const access = why.reasons.find((r: { step: string }) => r.step === 'organization_access');
    expect(access).toMatchObject({ via: 'access_group', accessGroupIds: [group.id], relationshipIds: [w.rel.id] });
    const step = why.reasons.find((r: { step: string }) => r.step === 'relationship');
    expect(step).toMatchObject({ allowed: true, relationshipIds: [w.rel.id], accessGroupIds: [group.id] });
    expect(step.detail).toContain(w.relName);
    expect(step.detail).toContain(group.name);
    // who-can (the customer's admin asking) lists the technician by relationship and group, and filters by relationship.
    const whoCan = (relationshipId?: string) =>
      w.orgAdmin.api.raw.get('/access/who-can', {
        query: {
          permission: 'devices:read',
          resourceType: 'device',
          resourceId: w.device.id,
          limit: 200,
          ...(relationshipId ? { relationshipId } : {}),
        },
      });
    const row = expectStatus(await whoCan(), 200).body.data.find((r: { id: string }) => r.id === tech.id);
    expect(row.relationships).toEqual([
      {
        id: w.rel.id,
        name: w.relName,
        endsAt: expect.any(String),
        accessGroups: [{ id: group.id, name: group.name }],
      },
    ]);
    const filtered = expectStatus(await whoCan(w.rel.id), 200).body.data.map((r: { id: string }) => r.id);
    expect(filtered).toContain(tech.id);
    expect(expectStatus(await whoCan(w.otherRel.id), 200).body.data).toEqual([]);

    // The customer's view lists the technician, reached through an access group.
    const view = expectStatus(await w.orgAdmin.api.raw.get(`/orgs/organizations/${w.org.id}/partner-access`), 200);
    expect(view.body.data.find((m: { userId: string }) => m.userId === tech.id)).toMatchObject({
      access: 'access_group',
      orgAccess: 'none',
      reachesNow: true,
    });

    // The revocation: the next request on either instance is refused.
    expectStatus(await w.admin.api.raw.delete(`/access-groups/${group.id}/members/${tech.id}`), 200);
    expect(await reachesOrg(tech.peer, w.org.id)).toBe(404);
    expect(await reachesOrg(tech.api, w.org.id)).toBe(404);
    const after = expectStatus(await w.orgAdmin.api.raw.get(`/orgs/organizations/${w.org.id}/partner-access`), 200);
    expect(after.body.data.map((m: { userId: string }) => m.userId)).not.toContain(tech.id);
    const refused = expectStatus(await explainOn(w, tech.id), 200).body;
    expect(refused).toMatchObject({ allowed: false, deniedBy: 'organization_access' });
    const actions = (await auditRecords(t, 'access_group.member.add', group.id)).map((r) => r.details);
    expect(actions[0]).toMatchObject({ userId: tech.id });
    expect(await auditRecords(t, 'access_group.member.remove', group.id)).toHaveLength(1);
  });

  it('a relationship once given a group serves only its members, even after the group is detached or deleted', async () => {
    const w = await world();
    const wide = await invited(w.admin, { orgAccess: 'all' });
    // No group yet: today's behaviour, standing access through the relationship.
    expect(await reachesOrg(wide.api, w.org.id)).toBe(200);
    const group = await newGroup(w.admin.api, { name: `Shared ${tag()}` });
    // One group shared by two relationships.
    for (const r of [w.rel, w.otherRel])
      expectStatus(
        await w.admin.api.raw.post(`/access-groups/${group.id}/relationships`, { relationshipId: r.id }),
        201,
      );
    expect(await reachesOrg(wide.peer, w.org.id)).toBe(404);
    expect(await reachesOrg(wide.api, w.other.id)).toBe(404);
    const why = expectStatus(await explainOn(w, wide.id), 200).body;
    expect(why).toMatchObject({ allowed: false, deniedBy: 'relationship' });
    expect(why.reasons.find((r: { step: string }) => r.step === 'relationship').detail).toContain(group.name);
    expectStatus(await w.admin.api.raw.post(`/access-groups/${group.id}/members`, { userId: wide.id }), 201);
    expect(await reachesOrg(wide.api, w.org.id)).toBe(200);
    expect(await reachesOrg(wide.api, w.other.id)).toBe(200);
    const listed = expectStatus(await w.admin.api.raw.get(`/access-groups/${group.id}`), 200).body;
    expect(listed.relationships.map((r: { id: string }) => r.id).sort()).toEqual([w.rel.id, w.otherRel.id].sort());
    expect(listed.memberCount).toBe(1);
    const ofRel = expectStatus(
      await w.admin.api.raw.get('/access-groups', { query: { relationshipId: w.rel.id } }),
      200,
    );
    expect(ofRel.body.data.map((g: { id: string }) => g.id)).toEqual([group.id]);
    // Detached from one relationship: that one serves nobody now; the other still does.
    expectStatus(await w.admin.api.raw.delete(`/access-groups/${group.id}/relationships/${w.rel.id}`), 200);
    expect(await reachesOrg(wide.api, w.org.id)).toBe(404);
    expect(await reachesOrg(wide.api, w.other.id)).toBe(200);
    // Deleted: nothing widens back.
    expectStatus(await w.admin.api.raw.delete(`/access-groups/${group.id}`), 200);
    expect(await reachesOrg(wide.api, w.other.id)).toBe(404);
    expect(await reachesOrg(wide.api, w.org.id)).toBe(404);
  });

  it('with requireRelationships off, groups change nothing: standing access decides, as before', async () => {
    const w = await world();
    const tech = await invited(w.admin, { orgAccess: 'none' });
    const wide = await invited(w.admin, { orgAccess: 'all' });
    const group = await newGroup(w.admin.api, { name: `Off ${tag()}` });
    expectStatus(
      await w.admin.api.raw.post(`/access-groups/${group.id}/relationships`, { relationshipId: w.rel.id }),
      201,
    );
    expectStatus(await w.admin.api.raw.post(`/access-groups/${group.id}/members`, { userId: tech.id }), 201);
    expectStatus(await w.admin.api.patch('/orgs/partners/me', { settings: { requireRelationships: false } }), 200);
    expect(await reachesOrg(tech.api, w.org.id)).toBe(404);
    expect(await reachesOrg(wide.api, w.org.id)).toBe(200);
  });
});

describe("a partner's groups are its own", () => {
  it('the other partner sees none of them; foreign staff, relationships and SCIM groups are 400 with the field named', async () => {
    const w = await world();
    const group = await newGroup(w.admin.api, { name: `Mine ${tag()}` });
    const techB = await signedInPartnerMember(t, w.partnerB.id, { roleId: PARTNER_TECH, orgAccess: 'none' });
    // Partner B: 404 on every route of A's group, and A's group is not in its list.
    expectError(await w.adminB.api.raw.get(`/access-groups/${group.id}`), 404, 'not_found');
    expectError(
      await w.adminB.api.raw.post(`/access-groups/${group.id}/members`, { userId: techB.user.id }),
      404,
      'not_found',
    );
    expectError(
      await w.adminB.api.raw.post(`/access-groups/${group.id}/relationships`, { relationshipId: w.relB.id }),
      404,
      'not_found',
    );
    expectError(await w.adminB.api.raw.patch(`/access-groups/${group.id}`, { name: 'Taken over' }), 404, 'not_found');
    expectError(await w.adminB.api.raw.delete(`/access-groups/${group.id}`), 404, 'not_found');
    const listB = expectStatus(await w.adminB.api.raw.get('/access-groups'), 200).body.data;
    expect(listB.map((g: { id: string }) => g.id)).not.toContain(group.id);
    // Partner A names B's staff, B's relationship, B's SCIM group: 400 with the field named, nothing written.
    const foreignUser = await w.admin.api.raw.post(`/access-groups/${group.id}/members`, { userId: techB.user.id });
    expectError(foreignUser, 400, 'validation_failed');
    expect(Object.keys(foreignUser.body.details.fieldErrors)).toEqual(['userId']);
    const foreignRel = await w.admin.api.raw.post(`/access-groups/${group.id}/relationships`, {
      relationshipId: w.relB.id,
    });
    expectError(foreignRel, 400, 'validation_failed');
    expect(Object.keys(foreignRel.body.details.fieldErrors)).toEqual(['relationshipId']);
    const scimB = new ScimClient(
      t.baseUrl,
      (await issueScimToken(w.adminB.api, { defaultRoleId: PARTNER_TECH })).token,
    );
    const groupB = await scimB.post('/Groups', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
      displayName: `B ${tag()}`,
    });
    // The SCIM groups offered for mapping are each partner's own, by name.
    const offeredB = expectStatus(await w.adminB.api.raw.get('/access-groups/scim-groups'), 200).body.data;
    expect(offeredB).toContainEqual({ id: groupB.body.id, name: groupB.body.displayName });
    const offeredA = expectStatus(await w.admin.api.raw.get('/access-groups/scim-groups'), 200).body.data;
    expect(offeredA.map((g: { id: string }) => g.id)).not.toContain(groupB.body.id);
    const foreignScim = await w.admin.api.raw.patch(`/access-groups/${group.id}`, { scimGroupId: groupB.body.id });
    expectError(foreignScim, 400, 'validation_failed');
    expect(Object.keys(foreignScim.body.details.fieldErrors)).toEqual(['scimGroupId']);
    expect(expectStatus(await w.admin.api.raw.get(`/access-groups/${group.id}`), 200).body).toMatchObject({
      memberCount: 0,
      relationships: [],
      scimGroupId: null,
    });
    // Same name twice in one partner: 409 name_taken; another partner may use it.
    expectError(await w.admin.api.raw.post('/access-groups', { name: group.name.toUpperCase() }), 409, 'name_taken');
    expectStatus(await w.adminB.api.raw.post('/access-groups', { name: group.name }), 201);
  });

  it('staff without full organisation access and organisation members are refused', async () => {
    const w = await world();
    const selected = await signedInPartnerMember(t, w.partner.id, {
      roleId: PARTNER_ADMIN,
      orgAccess: 'selected',
      orgIds: [w.org.id],
    });
    expectError(await selected.api.raw.get('/access-groups'), 403, 'full_org_access_required');
    expectError(await w.orgAdmin.api.raw.get('/access-groups'), 403, 'forbidden');
    expectError(await w.orgAdmin.api.raw.post('/access-groups', { name: 'Mine' }), 403, 'forbidden');
  });
});

describe("a SCIM group of the partner's IdP mapped to an access group: membership follows the IdP", () => {
  it('a member the IdP adds reaches the organisation; removed at the IdP, the next request is refused', async () => {
    const w = await world();
    const scim = new ScimClient(t.baseUrl, (await issueScimToken(w.admin.api, { defaultRoleId: PARTNER_TECH })).token);
    const login = `idp.${tag()}@example.test`;
    const user = await scim.post('/Users', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: login,
      emails: [{ value: login, type: 'work', primary: true }],
      active: true,
    });
    expect(user.status, user.text).toBe(201);
    const [rec] = (await auditRecords(t, 'scim.user.create')).filter(
      (r) => (r.details as { scimId?: string }).scimId === user.body.id,
    );
    const userId = rec!.resourceId!;
    const scimGroup = await scim.post('/Groups', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
      displayName: `Helpdesk ${tag()}`,
    });
    expect(scimGroup.status, scimGroup.text).toBe(201);
    const group = await newGroup(w.admin.api, { name: `IdP ${tag()}`, scimGroupId: scimGroup.body.id });
    expect(expectStatus(await w.admin.api.raw.get(`/access-groups/${group.id}`), 200).body).toMatchObject({
      scimGroupId: scimGroup.body.id,
      scimGroupName: scimGroup.body.displayName,
    });
    expectStatus(
      await w.admin.api.raw.post(`/access-groups/${group.id}/relationships`, { relationshipId: w.rel.id }),
      201,
    );
    // The provisioned person sets a password from the mailed invitation: its own session, in the partner.
    const accepted = expectStatus(
      await t.client().post('/auth/accept-invite', { token: linkToken(await mail.waitFor(login)), password: PASSWORD }),
      200,
    );
    const api = t.client().withToken(accepted.body.accessToken);
    const onPeer = peer.client().withToken(accepted.body.accessToken);
    expect((await api.get('/users/me')).body).toMatchObject({ id: userId, scope: 'partner', partnerId: w.partner.id });
    expect(await reachesOrg(api, w.org.id)).toBe(404);
    const add = await scim.patch(`/Groups/${scimGroup.body.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Add', path: 'members', value: [{ value: user.body.id }] }],
    });
    expect(add.status, add.text).toBe(200);
    expect(await reachesOrg(onPeer, w.org.id)).toBe(200);
    const members = expectStatus(await w.admin.api.raw.get(`/access-groups/${group.id}/members`), 200).body.data;
    expect(members).toEqual([expect.objectContaining({ userId, source: 'scim' })]);
    const out = await scim.patch(`/Groups/${scimGroup.body.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'remove', path: `members[value eq "${user.body.id}"]` }],
    });
    expect(out.status, out.text).toBe(200);
    expect(await reachesOrg(onPeer, w.org.id)).toBe(404);
    expect(await reachesOrg(api, w.org.id)).toBe(404);
  });
});

// User administration: own profile, lists, details, update, disable, remove,
// role assignment and the roles of a scope, all through HTTP on a real database.
import { randomBytes } from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { organizationUsers, sessions } from '../../src/db/schema/index.js';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, startPeer, type PeerApp, type TestApp } from '../support/app.js';
import {
  accountOf,
  auditRecords,
  createOrg,
  partnerAdmin,
  sessionFor,
  signedInOrgMember,
  signedInPartnerMember,
} from '../support/fixtures.js';

const [, PARTNER_TECH, PARTNER_VIEWER, ORG_ADMIN, ORG_TECH, ORG_VIEWER] = SYSTEM_ROLES.map((r) => r.id as string) as [
  string,
  string,
  string,
  string,
  string,
  string,
];
const PASSWORD = 'Glacier-7f3a9c-Saffron!';
const email = (tag: string) => `${tag}-${randomBytes(4).toString('hex')}@example.test`;
/** A member row (a pending member carries only id, email, status and invitedAt). */
type Row = { id: string; email: string; roleId?: string; roleName?: string; status: string };

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

describe('own profile: GET and PATCH /users/me', () => {
  it('reads the profile with the permissions of the membership; changes name and avatarUrl; audit user.profile.update', async () => {
    const { partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const me = await signedInOrgMember(t, org, { roleId: ORG_VIEWER, name: 'Old Name' });
    const got = await me.api.get('/users/me');
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      id: me.user.id,
      name: 'Old Name',
      scope: 'organization',
      orgId: org.id,
      partnerId: partner.id,
      roleId: ORG_VIEWER,
    });
    expect(got.body.permissions).toContain('devices:read');
    expect(got.body.permissions).not.toContain('users:read');
    expect(got.body).not.toHaveProperty('passwordHash');

    const patched = await me.api.patch('/users/me', { name: 'New Name', avatarUrl: 'https://cdn.example.test/a.png' });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ name: 'New Name', avatarUrl: 'https://cdn.example.test/a.png' });
    expect((await me.api.get('/users/me')).body.name).toBe('New Name');
    const [ev] = await auditRecords(t, 'user.profile.update', me.user.id);
    expect(ev).toMatchObject({ actorUserId: me.user.id, partnerId: partner.id, orgId: org.id, result: 'success' });
  });

  it('refuses an empty patch, unknown fields, a status change, a malformed e-mail and a non-http avatar (400 validation_failed)', async () => {
    const { api } = await partnerAdmin(t);
    for (const body of [
      {},
      { status: 'active' },
      { email: 'not-an-address' },
      { avatarUrl: 'javascript:alert(1)' },
      { name: '' },
    ]) {
      const r = await api.patch('/users/me', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe('validation_failed');
    }
  });
});

describe('GET /users lists the partner members, or an organisation members with ?orgId=', () => {
  it('partner list holds partner members only (with orgAccess), org list holds that organisation only (with siteIds)', async () => {
    const { api, partner, user: admin } = await partnerAdmin(t);
    const orgA = await createOrg(t, partner.id);
    const orgB = await createOrg(t, partner.id);
    const tech = await signedInPartnerMember(t, partner.id, {
      roleId: PARTNER_TECH,
      orgAccess: 'selected',
      orgIds: [orgA.id],
    });
    const inA = await signedInOrgMember(t, orgA, { roleId: ORG_VIEWER });
    const inB = await signedInOrgMember(t, orgB, { roleId: ORG_TECH });

    const partnerList = await api.get('/users');
    expect(partnerList.status).toBe(200);
    expect(partnerList.body.data.map((u: Row) => u.id).sort()).toEqual([admin.id, tech.user.id].sort());
    expect(partnerList.body.data.find((u: Row) => u.id === tech.user.id)).toMatchObject({
      orgAccess: 'selected',
      orgIds: [orgA.id],
      roleName: 'Partner Technician',
    });
    expect(partnerList.body.data[0]).not.toHaveProperty('siteIds');

    const listA = await api.get('/users', { query: { orgId: orgA.id } });
    expect(listA.body.data.map((u: Row) => u.id)).toEqual([inA.user.id]);
    expect(listA.body.data[0]).toMatchObject({
      roleId: ORG_VIEWER,
      roleName: 'Organization Viewer',
      siteIds: null,
      deviceGroupIds: null,
    });
    expect(listA.body.data[0]).not.toHaveProperty('orgAccess');
    const listB = await api.get('/users', { query: { orgId: orgB.id } });
    expect(listB.body.data.map((u: Row) => u.id)).toEqual([inB.user.id]);
  });

  it('keyset pages: limit and cursor walk every member once, search filters by prefix', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    for (let i = 0; i < 5; i++)
      await signedInOrgMember(t, org, {
        roleId: ORG_VIEWER,
        email: `page${i}-${randomBytes(2).toString('hex')}@example.test`,
      });
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 10; i++) {
      const r = await api.get('/users', { query: { orgId: org.id, limit: 2, cursor } });
      expect(r.status, r.text).toBe(200);
      seen.push(...r.body.data.map((u: Row) => u.email));
      cursor = r.body.nextCursor ?? undefined;
      if (!cursor) break;
    }
    expect(seen).toHaveLength(5);
    expect(new Set(seen).size).toBe(5);
    expect([...seen]).toEqual([...seen].sort());
    expect((await api.get('/users', { query: { orgId: org.id, search: 'page3' } })).body.data).toHaveLength(1);
    expect((await api.get('/users', { query: { orgId: org.id, cursor: 'not-a-cursor' } })).status).toBe(400);
  });
});

describe('GET /users/:id gives one member of the scope', () => {
  it('shape of a list row; a member of another scope of the same partner is 404 without the right ?orgId=', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const m = await signedInOrgMember(t, org, { roleId: ORG_TECH });
    const row = await api.get(`/users/${m.user.id}`, { query: { orgId: org.id } });
    expect(row.status).toBe(200);
    expect(row.body).toMatchObject({
      id: m.user.id,
      email: m.user.email,
      status: 'active',
      roleId: ORG_TECH,
      roleName: 'Organization Technician',
      mfaEnabled: true,
      lastLoginAt: null,
    });
    expect(Object.keys(row.body).sort()).toEqual([
      'deviceGroupIds',
      'email',
      'emailVerified',
      'id',
      'lastLoginAt',
      'mfaEnabled',
      'name',
      'roleId',
      'roleName',
      'siteIds',
      'status',
    ]);
    expect((await api.get(`/users/${m.user.id}`)).status).toBe(404);
    expect((await api.get('/users/not-a-uuid')).status).toBe(400);
  });
});

describe('PATCH /users/:id changes name or status; disabled ends every session at once', () => {
  it('name change is returned and audited as user.update', async () => {
    const { api, partner, user: admin } = await partnerAdmin(t);
    const m = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_VIEWER });
    const r = await api.patch(`/users/${m.user.id}`, { name: 'Renamed' });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ id: m.user.id, name: 'Renamed', status: 'active' });
    const [ev] = await auditRecords(t, 'user.update', m.user.id);
    expect(ev).toMatchObject({ actorUserId: admin.id, partnerId: partner.id, orgId: null, result: 'success' });
    expect(ev!.details).toMatchObject({ changed: ['name'] });
  });

  it("disabled: the user's live access token gets 401 on the next request, on this instance and on a second one", async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const m = await signedInOrgMember(t, org, { roleId: ORG_VIEWER, password: PASSWORD });
    const second = await sessionFor(t, m.user.id, {
      scope: 'organization',
      partnerId: partner.id,
      orgId: org.id,
      roleId: ORG_VIEWER,
    });
    const onPeer = peer.client().withToken(m.session.accessToken);
    expect((await m.api.get('/users/me')).status).toBe(200);
    expect((await onPeer.get('/users/me')).status).toBe(200);

    const r = await api.patch(`/users/${m.user.id}`, { status: 'disabled' }, { query: { orgId: org.id } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.status).toBe('disabled');

    const here = await m.api.get('/users/me');
    expect(here.status).toBe(401);
    expect(here.body.code).toBe('unauthenticated');
    expect((await onPeer.get('/users/me')).status).toBe(401);
    expect((await peer.client().withToken(second.accessToken).get('/users/me')).status).toBe(401);
    const live = await t.deps.db
      .select()
      .from(sessions)
      .where(and(eq(sessions.userId, m.user.id), isNull(sessions.revokedAt)));
    expect(live).toHaveLength(0);
    // A disabled account cannot sign in either (the same answer as a wrong password).
    const login = await t.client().post('/auth/login', { email: m.user.email, password: PASSWORD });
    expect(login.status).toBe(401);
    expect(login.body.code).toBe('invalid_credentials');
    const [ev] = await auditRecords(t, 'user.update', m.user.id);
    expect(ev!.details).toMatchObject({ status: 'disabled', sessionsRevoked: 2 });
  });

  it('re-enabling lets the user sign in again but revives no old token; an invited user cannot be made active by hand (409)', async () => {
    const { api, partner } = await partnerAdmin(t);
    const m = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_VIEWER, password: PASSWORD });
    await api.patch(`/users/${m.user.id}`, { status: 'disabled' });
    const back = await api.patch(`/users/${m.user.id}`, { status: 'active' });
    expect(back.status).toBe(200);
    expect(back.body.status).toBe('active');
    expect((await m.api.get('/users/me')).status).toBe(401);
    expect((await t.client().post('/auth/login', { email: m.user.email, password: PASSWORD })).status).toBe(200);

    const inv = await api.post('/users/invite', { email: email('inv'), name: 'Inv', roleId: PARTNER_VIEWER });
    const forced = await api.patch(`/users/${inv.body.id}`, { status: 'active' });
    expect(forced.status).toBe(409);
    expect((await api.raw.patch(`/users/${inv.body.id}`, { status: 'invited' })).status).toBe(400);
  });
});

describe('DELETE /users/:id removes the association only', () => {
  it('the account survives; tokens of that membership die at once; other memberships of the account are untouched', async () => {
    const { api, partner, user: admin } = await partnerAdmin(t);
    const orgA = await createOrg(t, partner.id);
    const orgB = await createOrg(t, partner.id);
    const m = await signedInOrgMember(t, orgA, { roleId: ORG_VIEWER });
    await t.deps.db.insert(organizationUsers).values({ orgId: orgB.id, userId: m.user.id, roleId: ORG_VIEWER });
    const inB = await sessionFor(t, m.user.id, {
      scope: 'organization',
      partnerId: partner.id,
      orgId: orgB.id,
      roleId: ORG_VIEWER,
    });

    const r = await api.delete(`/users/${m.user.id}`, { query: { orgId: orgA.id } });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({ success: true });
    expect(await accountOf(t, m.user.id)).toMatchObject({ status: 'active' });
    expect((await m.api.get('/users/me')).status).toBe(401);
    expect((await peer.client().withToken(m.session.accessToken).get('/users/me')).status).toBe(401);
    expect((await t.client().withToken(inB.accessToken).get('/users/me')).status).toBe(200);
    expect((await api.get(`/users/${m.user.id}`, { query: { orgId: orgB.id } })).status).toBe(200);
    expect((await api.delete(`/users/${m.user.id}`, { query: { orgId: orgA.id } })).status).toBe(404);
    const [ev] = await auditRecords(t, 'user.remove', m.user.id);
    expect(ev).toMatchObject({ actorUserId: admin.id, partnerId: partner.id, orgId: orgA.id, result: 'success' });
  });
});

describe('POST /users/:id/role assigns another role of the scope', () => {
  it("the new role shows in the row and in the user's very next request", async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const m = await signedInOrgMember(t, org, { roleId: ORG_VIEWER });
    expect((await m.api.get('/users')).status).toBe(403);
    const r = await api.post(`/users/${m.user.id}/role`, { roleId: ORG_ADMIN }, { query: { orgId: org.id } });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ roleId: ORG_ADMIN, roleName: 'Organization Admin' });
    expect((await m.api.get('/users')).status).toBe(200);
    expect((await peer.client().withToken(m.session.accessToken).get('/users')).status).toBe(200);
    expect((await m.api.get('/users/me')).body.permissions).toContain('users:invite');
  });

  it('a role outside the scope is refused (400) and the assignment is unchanged', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const other = await createOrg(t, partner.id);
    const foreignRole = await api.post('/roles', { name: 'Other org role', permissions: [], orgId: other.id });
    const m = await signedInOrgMember(t, org, { roleId: ORG_VIEWER });
    for (const roleId of [PARTNER_VIEWER, foreignRole.body.id, '00000000-0000-4000-8000-00000000beef']) {
      const r = await api.post(`/users/${m.user.id}/role`, { roleId }, { query: { orgId: org.id } });
      expect(r.status, roleId).toBe(400);
    }
    expect((await api.get(`/users/${m.user.id}`, { query: { orgId: org.id } })).body.roleId).toBe(ORG_VIEWER);
  });
});

describe('GET /users/roles lists the roles available in the scope', () => {
  it('partner scope: partner system roles and the partner custom roles; organisation scope: its own', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    await api.post('/roles', { name: 'Partner Custom', permissions: [{ resource: 'devices', action: 'read' }] });
    await api.post('/roles', {
      name: 'Org Custom',
      permissions: [{ resource: 'devices', action: 'read' }],
      orgId: org.id,
    });
    const p = await api.get('/users/roles');
    expect(p.status).toBe(200);
    expect(p.body.data.map((r: { name: string }) => r.name).sort()).toEqual([
      'Partner Admin',
      'Partner Custom',
      'Partner Technician',
      'Partner Viewer',
    ]);
    const o = await api.get('/users/roles', { query: { orgId: org.id } });
    expect(o.body.data.map((r: { name: string }) => r.name).sort()).toEqual([
      'Org Custom',
      'Organization Admin',
      'Organization Technician',
      'Organization Viewer',
    ]);
    const orgAdmin = await signedInOrgMember(t, org);
    const own = await orgAdmin.api.get('/users/roles');
    expect(own.body.data.map((r: { name: string }) => r.name).sort()).toEqual([
      'Org Custom',
      'Organization Admin',
      'Organization Technician',
      'Organization Viewer',
    ]);
  });
});

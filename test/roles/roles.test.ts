// Roles: scoped custom roles, canonical permissions, immutable system
// roles, delete refusals with counts, clone, users of a role, counts that never include other tenants.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG_ENTRIES, SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import {
  auditRecords,
  createOrg,
  partnerAdmin,
  signedInOrgMember,
  signedInPartnerMember,
} from '../support/fixtures.js';

const [PARTNER_ADMIN, PARTNER_TECH, PARTNER_VIEWER, ORG_ADMIN, ORG_TECH, ORG_VIEWER] = SYSTEM_ROLES.map(
  (r) => r.id as string,
) as [string, string, string, string, string, string];
type Role = { id: string; name: string; userCount: number; scope: string; isSystem: boolean };
const perm = (k: string) => {
  const [resource, action] = k.split(':');
  return { resource: resource!, action: action! };
};
const byName = (rows: Role[], name: string) => rows.find((r) => r.name === name);

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => t?.close());

describe("custom roles are scoped to the caller's partner or organisation", () => {
  it('a partner role lives in the partner list only; an organisation role (orgId) in that organisation only', async () => {
    const { api, partner } = await partnerAdmin(t);
    const orgA = await createOrg(t, partner.id);
    const orgB = await createOrg(t, partner.id);
    const pRole = await api.post('/roles', {
      name: 'Partner Helpdesk',
      description: 'first line',
      permissions: [perm('devices:read')],
    });
    expect(pRole.status, pRole.text).toBe(201);
    expect(pRole.body).toMatchObject({
      name: 'Partner Helpdesk',
      description: 'first line',
      scope: 'partner',
      isSystem: false,
      parentRoleId: null,
      parentRoleName: null,
      forceMfa: false,
      userCount: 0,
    });
    expect(Object.keys(pRole.body).sort()).toEqual(
      [
        'createdAt',
        'description',
        'forceMfa',
        'id',
        'isSystem',
        'name',
        'parentRoleId',
        'parentRoleName',
        'permissions',
        'scope',
        'updatedAt',
        'userCount',
      ].sort(),
    );
    const oRole = await api.post('/roles', {
      name: 'Org Helpdesk',
      permissions: [perm('devices:read')],
      orgId: orgA.id,
    });
    expect(oRole.body.scope).toBe('organization');

    const partnerList = (await api.get('/roles')).body.data as Role[];
    expect(byName(partnerList, 'Partner Helpdesk')).toBeDefined();
    expect(byName(partnerList, 'Org Helpdesk')).toBeUndefined();
    expect(
      partnerList
        .filter((r) => r.isSystem)
        .map((r) => r.name)
        .sort(),
    ).toEqual(['Partner Admin', 'Partner Technician', 'Partner Viewer']);
    const listA = (await api.get('/roles', { query: { orgId: orgA.id } })).body.data as Role[];
    expect(byName(listA, 'Org Helpdesk')).toBeDefined();
    expect(byName(listA, 'Partner Helpdesk')).toBeUndefined();
    expect(
      listA
        .filter((r) => r.isSystem)
        .map((r) => r.name)
        .sort(),
    ).toEqual(['Organization Admin', 'Organization Technician', 'Organization Viewer']);
    expect(byName((await api.get('/roles', { query: { orgId: orgB.id } })).body.data, 'Org Helpdesk')).toBeUndefined();

    // An organisation's role asked for without its ?orgId= (or with another) is 404; a partner role inside an organisation too.
    expect((await api.get(`/roles/${oRole.body.id}`)).status).toBe(404);
    expect((await api.get(`/roles/${oRole.body.id}`, { query: { orgId: orgB.id } })).status).toBe(404);
    expect((await api.get(`/roles/${oRole.body.id}`, { query: { orgId: orgA.id } })).status).toBe(200);
    expect((await api.get(`/roles/${pRole.body.id}`, { query: { orgId: orgA.id } })).status).toBe(404);
  });

  it('an organisation admin creates roles in its own organisation without naming it', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const orgAdmin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN });
    const r = await orgAdmin.api.post('/roles', { name: 'Site Lead', permissions: [perm('sites:write')] });
    expect(r.status, r.text).toBe(201);
    expect(r.body.scope).toBe('organization');
    expect((await api.get(`/roles/${r.body.id}`, { query: { orgId: org.id } })).status).toBe(200);
  });

  it('names are unique per owner, case-insensitively (409 name_taken); the same name elsewhere is fine', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    expect((await api.post('/roles', { name: 'Ops', permissions: [] })).status).toBe(201);
    const dup = await api.post('/roles', { name: 'OPS', permissions: [] });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('name_taken');
    expect((await api.post('/roles', { name: 'Ops', permissions: [], orgId: org.id })).status).toBe(201);
    const other = await partnerAdmin(t);
    expect((await other.api.post('/roles', { name: 'Ops', permissions: [] })).status).toBe(201);
    const second = await api.post('/roles', { name: 'Ops 2', permissions: [] });
    expect((await api.patch(`/roles/${second.body.id}`, { name: 'ops' })).body.code).toBe('name_taken');
  });

  it('bad bodies: missing or over-long name, unknown fields → 400 validation_failed', async () => {
    const { api } = await partnerAdmin(t);
    for (const body of [
      { permissions: [] },
      { name: 'x'.repeat(101), permissions: [] },
      { name: '   ', permissions: [] },
      { name: 'A', permissions: [], isSystem: true },
      { name: 'A', permissions: [{ resource: 'devices' }] },
    ]) {
      const r = await api.raw.post('/roles', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe('validation_failed');
    }
    expect((await api.post('/roles', { name: 'x'.repeat(100), permissions: [] })).status).toBe(201);
  });
});

describe('catalogue aliases view, create and update are stored canonical (read, write)', () => {
  it('on create and on update; duplicates collapse', async () => {
    const { api } = await partnerAdmin(t);
    const r = await api.post('/roles', {
      name: 'Aliased',
      permissions: [
        { resource: 'devices', action: 'view' },
        { resource: 'devices', action: 'create' },
        { resource: 'devices', action: 'update' },
        { resource: 'devices', action: 'write' },
        { resource: 'scripts', action: 'execute' },
      ],
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body.permissions).toEqual([perm('devices:read'), perm('devices:write'), perm('scripts:execute')]);
    const u = await api.patch(`/roles/${r.body.id}`, {
      permissions: [
        { resource: 'alerts', action: 'view' },
        { resource: 'reports', action: 'update' },
      ],
    });
    expect(u.status, u.text).toBe(200);
    expect(u.body.permissions).toEqual([perm('alerts:read'), perm('reports:write')]);
    expect((await api.get(`/roles/${r.body.id}`)).body.permissions).toEqual([
      perm('alerts:read'),
      perm('reports:write'),
    ]);
  });
});

describe('*:* and permissions outside the catalogue are refused (400)', () => {
  it('*:* or any wildcard on create and update → 400; nothing stored', async () => {
    const { api } = await partnerAdmin(t);
    for (const p of [perm('*:*'), perm('devices:*'), perm('*:read')]) {
      const r = await api.post('/roles', { name: `Wild ${p.resource}${p.action}`, permissions: [p] });
      expect(r.status, JSON.stringify(p)).toBe(400);
      expect(r.body.code).toBe('unknown_permission');
      expect(r.body.details.fieldErrors['permissions.0']).toBeDefined();
    }
    expect((await api.get('/roles', { query: { search: 'Wild' } })).body.data as Role[]).toHaveLength(0);
    const role = await api.post('/roles', { name: 'Tame', permissions: [] });
    const up = await api.patch(`/roles/${role.body.id}`, { permissions: [perm('*:*')] });
    expect(up.status).toBe(400);
    expect((await api.get(`/roles/${role.body.id}`)).body.permissions).toEqual([]);
  });

  it('unknown resources, unknown verbs and uncatalogued pairs → 400 unknown_permission naming each bad entry', async () => {
    const { api } = await partnerAdmin(t);
    const r = await api.post('/roles', {
      name: 'Unknown',
      permissions: [
        perm('devices:read'),
        perm('spaceships:read'),
        perm('devices:fly'),
        perm('remote:read'),
        perm('DEVICES:read'),
      ],
    });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('unknown_permission');
    expect(Object.keys(r.body.details.fieldErrors).sort()).toEqual([
      'permissions.1',
      'permissions.2',
      'permissions.3',
      'permissions.4',
    ]);
  });
});

describe('system roles are immutable (403 system_role_immutable)', () => {
  it('PATCH and DELETE of every system role are refused, in partner and organisation scope, and nothing changes', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    for (const id of [PARTNER_ADMIN, PARTNER_TECH, PARTNER_VIEWER]) {
      const p = await api.patch(`/roles/${id}`, { name: 'Hacked', permissions: [] });
      expect(p.status).toBe(403);
      expect(p.body.code).toBe('system_role_immutable');
      const d = await api.delete(`/roles/${id}`);
      expect(d.status).toBe(403);
      expect(d.body.code).toBe('system_role_immutable');
    }
    for (const id of [ORG_ADMIN, ORG_TECH, ORG_VIEWER]) {
      expect((await api.patch(`/roles/${id}`, { forceMfa: true }, { query: { orgId: org.id } })).body.code).toBe(
        'system_role_immutable',
      );
      expect((await api.delete(`/roles/${id}`, { query: { orgId: org.id } })).body.code).toBe('system_role_immutable');
    }
    const orgAdmin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN });
    expect((await orgAdmin.api.patch(`/roles/${ORG_VIEWER}`, { permissions: [perm('devices:write')] })).body.code).toBe(
      'system_role_immutable',
    );
    const viewer = await api.get(`/roles/${PARTNER_VIEWER}`);
    expect(viewer.body).toMatchObject({ name: 'Partner Viewer', isSystem: true, scope: 'system' });
    expect(viewer.body.permissions).toHaveLength(7);
    expect((await api.get(`/roles/${PARTNER_ADMIN}`)).body).toMatchObject({
      name: 'Partner Admin',
      forceMfa: true,
      permissions: [perm('*:*')],
    });
  });
});

describe('a role in use cannot be deleted: 400 with the count of what blocks it', () => {
  it('role_has_users with userCount, role_has_children with childRoleCount, then deletion once free; audit role.delete', async () => {
    const { api, partner, user: admin } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const parent = await api.post('/roles', { name: 'Parent', permissions: [perm('devices:read')], orgId: org.id });
    const used = await api.post('/roles', { name: 'Used', permissions: [], orgId: org.id });
    const c1 = await api.post('/roles', {
      name: 'Child 1',
      permissions: [],
      parentRoleId: parent.body.id,
      orgId: org.id,
    });
    const c2 = await api.post('/roles', {
      name: 'Child 2',
      permissions: [],
      parentRoleId: parent.body.id,
      orgId: org.id,
    });
    const m1 = await signedInOrgMember(t, org, { roleId: used.body.id });
    const m2 = await signedInOrgMember(t, org, { roleId: used.body.id });

    const q = { query: { orgId: org.id } };
    const hasUsers = await api.delete(`/roles/${used.body.id}`, q);
    expect(hasUsers.status).toBe(400);
    expect(hasUsers.body).toMatchObject({ code: 'role_has_users', userCount: 2 });
    const hasChildren = await api.delete(`/roles/${parent.body.id}`, q);
    expect(hasChildren.status).toBe(400);
    expect(hasChildren.body).toMatchObject({ code: 'role_has_children', childRoleCount: 2 });

    await api.post(`/users/${m1.user.id}/role`, { roleId: ORG_VIEWER }, q);
    expect((await api.delete(`/roles/${used.body.id}`, q)).body).toMatchObject({
      code: 'role_has_users',
      userCount: 1,
    });
    await api.delete(`/users/${m2.user.id}`, q);
    const gone = await api.delete(`/roles/${used.body.id}`, q);
    expect(gone.status, gone.text).toBe(200);
    expect((await api.get(`/roles/${used.body.id}`, q)).status).toBe(404);

    await api.delete(`/roles/${c1.body.id}`, q);
    expect((await api.delete(`/roles/${parent.body.id}`, q)).body).toMatchObject({
      code: 'role_has_children',
      childRoleCount: 1,
    });
    await api.patch(`/roles/${c2.body.id}`, { parentRoleId: null }, q);
    expect((await api.delete(`/roles/${parent.body.id}`, q)).status).toBe(200);

    const [ev] = await auditRecords(t, 'role.delete', used.body.id);
    expect(ev).toMatchObject({ actorUserId: admin.id, partnerId: partner.id, orgId: org.id, result: 'success' });
  });
});

describe('clone copies a role (system roles too) into a new custom role of the caller', () => {
  it('cloning Partner Admin gives every catalogue permission explicitly, never *:*', async () => {
    const { api } = await partnerAdmin(t);
    const catalog = await api.get('/permissions/catalog');
    const c = await api.post(`/roles/${PARTNER_ADMIN}/clone`, { name: 'Admin, explicitly' });
    expect(c.status, c.text).toBe(201);
    expect(c.body).toMatchObject({
      name: 'Admin, explicitly',
      isSystem: false,
      scope: 'partner',
      parentRoleId: null,
      userCount: 0,
    });
    const keys = (ps: { resource: string; action: string }[]) => ps.map((p) => `${p.resource}:${p.action}`).sort();
    expect(keys(c.body.permissions)).toEqual(keys(catalog.body.permissions));
    expect(keys(c.body.permissions)).toEqual(keys(CATALOG_ENTRIES));
    expect(keys(c.body.permissions)).not.toContain('*:*');
    // The clone is a custom role: it can be edited (the source cannot).
    expect((await api.patch(`/roles/${c.body.id}`, { name: 'Admin, edited' })).status).toBe(200);
  });

  it('an organisation system role clones into the organisation; a custom child clones its effective permissions, flat', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const c = await api.post(`/roles/${ORG_TECH}/clone`, { name: 'Tech copy', orgId: org.id });
    expect(c.status, c.text).toBe(201);
    expect(c.body.scope).toBe('organization');
    expect(c.body.permissions).toEqual(
      (await api.get(`/roles/${ORG_TECH}`, { query: { orgId: org.id } })).body.permissions,
    );

    const base = await api.post('/roles', { name: 'Base', permissions: [perm('alerts:read')], orgId: org.id });
    const child = await api.post('/roles', {
      name: 'Child',
      permissions: [perm('devices:read')],
      parentRoleId: base.body.id,
      orgId: org.id,
    });
    const flat = await api.post(`/roles/${child.body.id}/clone`, { name: 'Child flat', orgId: org.id });
    expect(flat.body).toMatchObject({ parentRoleId: null });
    expect(flat.body.permissions).toEqual([perm('alerts:read'), perm('devices:read')]);
    // A taken name is 409; a role not visible in the target scope is 404.
    expect((await api.post(`/roles/${child.body.id}/clone`, { name: 'Base', orgId: org.id })).body.code).toBe(
      'name_taken',
    );
    expect((await api.post(`/roles/${child.body.id}/clone`, { name: 'Elsewhere' })).status).toBe(404);
  });
});

describe('GET /roles/:id/users lists the members of the scope holding the role', () => {
  it('custom and system roles; never a member of another scope', async () => {
    const { api, partner, user: admin } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const role = await api.post('/roles', { name: 'Holders', permissions: [], orgId: org.id });
    const h1 = await signedInOrgMember(t, org, { roleId: role.body.id });
    const h2 = await signedInOrgMember(t, org, { roleId: role.body.id });
    await signedInOrgMember(t, org, { roleId: ORG_VIEWER });
    const r = await api.get(`/roles/${role.body.id}/users`, { query: { orgId: org.id } });
    expect(r.status).toBe(200);
    expect(r.body.data.map((u: { id: string }) => u.id).sort()).toEqual([h1.user.id, h2.user.id].sort());
    const admins = await api.get(`/roles/${PARTNER_ADMIN}/users`);
    expect(admins.body.data.map((u: { id: string }) => u.id)).toEqual([admin.id]);
  });
});

describe("user counts of system roles never include other tenants' members", () => {
  it('GET /roles, GET /users/roles, GET /roles/:id and /roles/:id/users count this scope only', async () => {
    const mine = await partnerAdmin(t);
    const myOrg = await createOrg(t, mine.partner.id);
    await signedInOrgMember(t, myOrg, { roleId: ORG_VIEWER });
    const theirs = await partnerAdmin(t);
    const theirOrg = await createOrg(t, theirs.partner.id);
    for (let i = 0; i < 3; i++) {
      await signedInPartnerMember(t, theirs.partner.id, { roleId: PARTNER_ADMIN });
      await signedInOrgMember(t, theirOrg, { roleId: ORG_VIEWER });
    }
    for (const path of ['/roles', '/users/roles'] as const) {
      const p = (await mine.api.get(path)).body.data as Role[];
      expect(byName(p, 'Partner Admin')!.userCount, path).toBe(1);
      expect(byName(p, 'Partner Viewer')!.userCount, path).toBe(0);
      const o = (await mine.api.get(path, { query: { orgId: myOrg.id } })).body.data as Role[];
      expect(byName(o, 'Organization Viewer')!.userCount, path).toBe(1);
      expect(byName((await theirs.api.get(path)).body.data as Role[], 'Partner Admin')!.userCount).toBe(4);
    }
    expect((await mine.api.get(`/roles/${PARTNER_ADMIN}`)).body.userCount).toBe(1);
    expect((await mine.api.get(`/roles/${ORG_VIEWER}`, { query: { orgId: myOrg.id } })).body.userCount).toBe(1);
    expect((await mine.api.get(`/roles/${ORG_VIEWER}/users`, { query: { orgId: myOrg.id } })).body.data).toHaveLength(
      1,
    );
    const orgAdmin = await signedInOrgMember(t, myOrg, { roleId: ORG_ADMIN });
    expect(byName((await orgAdmin.api.get('/roles')).body.data, 'Organization Viewer')!.userCount).toBe(1);
  });
});

describe('the permission catalogue', () => {
  it('GET /permissions/catalog lists every assignable permission with a description and the aliases; guarded by users:read', async () => {
    const { api, partner } = await partnerAdmin(t);
    const c = await api.get('/permissions/catalog');
    expect(c.status).toBe(200);
    expect(c.body.aliases).toEqual({ view: 'read', create: 'write', update: 'write' });
    expect(c.body.permissions).toHaveLength(CATALOG_ENTRIES.length);
    expect(c.body.permissions).toContainEqual(
      expect.objectContaining({ resource: 'users', action: 'invite', description: expect.any(String) }),
    );
    expect(c.body.permissions.some((p: { resource: string }) => p.resource === '*')).toBe(false);
    const avail = await api.get('/roles/permissions/available');
    expect(avail.status).toBe(200);
    expect(avail.body.resources).toEqual(expect.arrayContaining(['devices', 'users', 'ai_agents']));
    const org = await createOrg(t, partner.id);
    const viewer = await signedInOrgMember(t, org, { roleId: ORG_VIEWER });
    const denied = await viewer.api.get('/permissions/catalog');
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('forbidden');
  });
});

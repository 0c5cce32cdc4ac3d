// Role inheritance: single parent in the same scope, no cycles, at most 16 levels,
// effective permissions naming their source role, and role changes seen by the very next request on every instance.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, startPeer, type PeerApp, type TestApp } from '../support/app.js';
import type { ApiClient } from '../support/client.js';
import { createOrg, partnerAdmin, signedInOrgMember } from '../support/fixtures.js';

const [PARTNER_ADMIN, PARTNER_TECH, , ORG_ADMIN, , ORG_VIEWER] = SYSTEM_ROLES.map((r) => r.id as string) as [
  string,
  string,
  string,
  string,
  string,
  string,
];
const perm = (k: string) => {
  const [resource, action] = k.split(':');
  return { resource: resource!, action: action! };
};

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

/** A chain of `n` roles in the organisation, the first holding `top`, each next one a child of the previous. */
async function chain(api: ApiClient, orgId: string, n: number, prefix: string, top: string[] = []) {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await api.post('/roles', {
      name: `${prefix} ${i + 1}`,
      permissions: i === 0 ? top.map(perm) : [],
      parentRoleId: ids.at(-1) ?? null,
      orgId,
    });
    expect(r.status, `${prefix} ${i + 1}: ${r.text}`).toBe(201);
    ids.push(r.body.id);
  }
  return ids;
}

async function orgWithAdmin() {
  const admin = await partnerAdmin(t);
  const org = await createOrg(t, admin.partner.id);
  return { ...admin, org, q: { query: { orgId: org.id } } };
}

describe('circular inheritance is refused (400 circular_inheritance)', () => {
  it('a role as its own parent, a two-cycle and a three-cycle; the graph is unchanged', async () => {
    const { api, org, q } = await orgWithAdmin();
    const [a, b, c] = await chain(api, org.id, 3, 'Cyc');
    for (const [id, parent] of [
      [a!, a!],
      [a!, b!],
      [a!, c!],
      [b!, c!],
    ]) {
      const r = await api.patch(`/roles/${id}`, { parentRoleId: parent }, q);
      expect(r.status, r.text).toBe(400);
      expect(r.body).toMatchObject({
        code: 'circular_inheritance',
        message: 'Cannot set parent role: would create circular inheritance.',
      });
    }
    expect((await api.get(`/roles/${a}`, q)).body.parentRoleId).toBeNull();
    expect((await api.get(`/roles/${c}`, q)).body.parentRoleId).toBe(b);
  });

  it('two concurrent re-parentings that would close a cycle together: at most one succeeds', async () => {
    const { api, org, q } = await orgWithAdmin();
    const x = await api.post('/roles', { name: 'X', permissions: [], orgId: org.id });
    const y = await api.post('/roles', { name: 'Y', permissions: [], orgId: org.id });
    const rs = await Promise.all([
      api.patch(`/roles/${x.body.id}`, { parentRoleId: y.body.id }, q),
      api.patch(`/roles/${y.body.id}`, { parentRoleId: x.body.id }, q),
    ]);
    expect(rs.map((r) => r.status).sort()).toEqual([200, 400]);
    const parents = [
      (await api.get(`/roles/${x.body.id}`, q)).body.parentRoleId,
      (await api.get(`/roles/${y.body.id}`, q)).body.parentRoleId,
    ];
    expect(parents.filter(Boolean)).toHaveLength(1);
  });
});

describe('inheritance is at most 16 levels deep', () => {
  it('a chain of exactly 16 works; a 17th level is 400 inheritance_too_deep', async () => {
    const { api, org, q } = await orgWithAdmin();
    const ids = await chain(api, org.id, 16, 'Deep', ['alerts:read']);
    const eff = await api.get(`/roles/${ids[15]}/effective-permissions`, q);
    expect(eff.status).toBe(200);
    expect(eff.body.inheritanceChain).toHaveLength(16);
    expect(eff.body.inheritanceChain.map((c: { id: string }) => c.id)).toEqual([...ids].reverse());
    expect(eff.body.permissions).toEqual([
      { resource: 'alerts', action: 'read', inherited: true, sourceRoleId: ids[0], sourceRoleName: 'Deep 1' },
    ]);
    const tooDeep = await api.post('/roles', {
      name: 'Deep 17',
      permissions: [],
      parentRoleId: ids[15],
      orgId: org.id,
    });
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.body.code).toBe('inheritance_too_deep');
  });

  it('re-parenting a subtree counts the levels below it: 8 + 8 fits, 8 + 9 does not', async () => {
    const { api, org, q } = await orgWithAdmin();
    const upper = await chain(api, org.id, 8, 'Up');
    const lower = await chain(api, org.id, 9, 'Low');
    const refused = await api.patch(`/roles/${lower[0]}`, { parentRoleId: upper[7] }, q);
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('inheritance_too_deep');
    // Cut the lower chain to 8 (its 9th level becomes a root), then it fits.
    expect((await api.patch(`/roles/${lower[8]}`, { parentRoleId: null }, q)).status).toBe(200);
    const ok = await api.patch(`/roles/${lower[0]}`, { parentRoleId: upper[7] }, q);
    expect(ok.status, ok.text).toBe(200);
    expect((await api.get(`/roles/${lower[7]}/effective-permissions`, q)).body.inheritanceChain).toHaveLength(16);
  });
});

describe('a parent must be a role of the same scope and membership kind', () => {
  it('a role of another organisation, of the partner, or of another partner → 400; nothing created', async () => {
    const { api, org, partner } = await orgWithAdmin();
    const otherOrg = await createOrg(t, partner.id);
    const inOther = await api.post('/roles', { name: 'Other org', permissions: [], orgId: otherOrg.id });
    const partnerRole = await api.post('/roles', { name: 'Partner level', permissions: [] });
    const stranger = await partnerAdmin(t);
    const foreign = await stranger.api.post('/roles', { name: 'Foreign', permissions: [] });
    for (const parentRoleId of [
      inOther.body.id,
      partnerRole.body.id,
      foreign.body.id,
      PARTNER_TECH,
      '00000000-0000-4000-8000-00000000f00d',
    ]) {
      const r = await api.post('/roles', { name: 'Orphan', permissions: [], parentRoleId, orgId: org.id });
      expect(r.status, parentRoleId).toBe(400);
      expect(r.body.code).toBe('validation_failed');
      expect(r.body.details.fieldErrors.parentRoleId).toBeDefined();
    }
    expect(
      (await api.post('/roles', { name: 'Partner child', permissions: [], parentRoleId: ORG_VIEWER })).status,
    ).toBe(400);
    expect((await api.get('/roles', { query: { orgId: org.id, search: 'Orphan' } })).body.data).toHaveLength(0);
  });

  it('a system role of the same kind may be a parent, but never one holding *:* (a custom role never holds *:*)', async () => {
    const { api, org, q } = await orgWithAdmin();
    const fromViewer = await api.post('/roles', {
      name: 'Viewer plus',
      permissions: [perm('scripts:execute')],
      parentRoleId: ORG_VIEWER,
      orgId: org.id,
    });
    expect(fromViewer.status, fromViewer.text).toBe(201);
    expect((await api.get(`/roles/${fromViewer.body.id}/effective-permissions`, q)).body.permissions).toContainEqual({
      resource: 'devices',
      action: 'read',
      inherited: true,
      sourceRoleId: ORG_VIEWER,
      sourceRoleName: 'Organization Viewer',
    });
    const underAdmin = await api.post('/roles', { name: 'Admin child', permissions: [], parentRoleId: PARTNER_ADMIN });
    expect(underAdmin.status, underAdmin.text).toBe(400);
    const plain = await api.post('/roles', { name: 'Plain', permissions: [] });
    expect((await api.patch(`/roles/${plain.body.id}`, { parentRoleId: PARTNER_ADMIN })).status).toBe(400);
    expect((await api.get(`/roles/${plain.body.id}/effective-permissions`)).body.permissions).toEqual([]);
  });
});

describe('effective permissions distinguish direct from inherited and name the source role', () => {
  it('each permission once, from the nearest role that grants it, with the chain from the role up', async () => {
    const { api, org, q } = await orgWithAdmin();
    const root = await api.post('/roles', {
      name: 'Root',
      permissions: [perm('devices:read'), perm('alerts:read')],
      orgId: org.id,
    });
    const mid = await api.post('/roles', {
      name: 'Mid',
      permissions: [perm('scripts:read'), perm('alerts:read')],
      parentRoleId: root.body.id,
      orgId: org.id,
    });
    const leaf = await api.post('/roles', {
      name: 'Leaf',
      permissions: [perm('scripts:execute')],
      parentRoleId: mid.body.id,
      orgId: org.id,
    });
    expect(leaf.body).toMatchObject({
      parentRoleId: mid.body.id,
      parentRoleName: 'Mid',
      permissions: [perm('scripts:execute')],
    });
    const eff = await api.get(`/roles/${leaf.body.id}/effective-permissions`, q);
    expect(eff.status).toBe(200);
    expect(eff.body.roleId).toBe(leaf.body.id);
    expect(eff.body.roleName).toBe('Leaf');
    expect(eff.body.inheritanceChain).toEqual([
      { id: leaf.body.id, name: 'Leaf' },
      { id: mid.body.id, name: 'Mid' },
      { id: root.body.id, name: 'Root' },
    ]);
    const key = (p: { resource: string; action: string }) => `${p.resource}:${p.action}`;
    const sorted = [...eff.body.permissions].sort((a, b) => key(a).localeCompare(key(b)));
    expect(sorted).toEqual([
      { resource: 'alerts', action: 'read', inherited: true, sourceRoleId: mid.body.id, sourceRoleName: 'Mid' },
      { resource: 'devices', action: 'read', inherited: true, sourceRoleId: root.body.id, sourceRoleName: 'Root' },
      { resource: 'scripts', action: 'execute', inherited: false, sourceRoleId: leaf.body.id, sourceRoleName: 'Leaf' },
      { resource: 'scripts', action: 'read', inherited: true, sourceRoleId: mid.body.id, sourceRoleName: 'Mid' },
    ]);
  });
});

describe('a role change is seen by the very next request, on every instance', () => {
  it("adding a permission to an ancestor grants it to a descendant's holder at once, here and on a second instance; removing it takes it away", async () => {
    const { api, org, q } = await orgWithAdmin();
    const ids = await chain(api, org.id, 4, 'Cache', ['devices:read']);
    const holder = await signedInOrgMember(t, org, { roleId: ids[3] });
    const onPeer = peer.client().withToken(holder.session.accessToken);
    // Both instances have resolved (and cached) the role without users:read.
    expect((await holder.api.permissionCatalog()).status).toBe(403);
    expect((await onPeer.permissionCatalog()).status).toBe(403);

    const up = await api.patch(`/roles/${ids[0]}`, { permissions: [perm('devices:read'), perm('users:read')] }, q);
    expect(up.status, up.text).toBe(200);
    expect((await holder.api.permissionCatalog()).status).toBe(200);
    expect((await onPeer.permissionCatalog()).status).toBe(200);
    expect((await onPeer.usersMe()).body.permissions).toContain('users:read');

    await api.patch(`/roles/${ids[0]}`, { permissions: [perm('devices:read')] }, q);
    expect((await holder.api.permissionCatalog()).status).toBe(403);
    expect((await onPeer.permissionCatalog()).status).toBe(403);
  });

  it("cutting the chain (a new parent, or none) changes the holder's permissions at once on both instances", async () => {
    const { api, org, q } = await orgWithAdmin();
    const granting = await api.post('/roles', { name: 'Granting', permissions: [perm('users:read')], orgId: org.id });
    const child = await api.post('/roles', {
      name: 'Child',
      permissions: [],
      parentRoleId: granting.body.id,
      orgId: org.id,
    });
    const holder = await signedInOrgMember(t, org, { roleId: child.body.id });
    const onPeer = peer.client().withToken(holder.session.accessToken);
    expect((await onPeer.permissionCatalog()).status).toBe(200);
    expect((await holder.api.permissionCatalog()).status).toBe(200);
    await api.patch(`/roles/${child.body.id}`, { parentRoleId: null }, q);
    expect((await onPeer.permissionCatalog()).status).toBe(403);
    expect((await holder.api.permissionCatalog()).status).toBe(403);
    await api.patch(`/roles/${child.body.id}`, { parentRoleId: granting.body.id }, q);
    expect((await onPeer.permissionCatalog()).status).toBe(200);
  });

  it('an assignment change is seen at once on both instances', async () => {
    const { api, org, q } = await orgWithAdmin();
    const holder = await signedInOrgMember(t, org, { roleId: ORG_VIEWER });
    const onPeer = peer.client().withToken(holder.session.accessToken);
    expect((await onPeer.permissionCatalog()).status).toBe(403);
    expect((await api.post(`/users/${holder.user.id}/role`, { roleId: ORG_ADMIN }, q)).status).toBe(200);
    expect((await onPeer.permissionCatalog()).status).toBe(200);
    expect((await holder.api.permissionCatalog()).status).toBe(200);
  });

  it("Force MFA switched on at an ancestor holds a descendant's holder without MFA at 428 from the next request", async () => {
    const { api, org, q } = await orgWithAdmin();
    const top = await api.post('/roles', { name: 'Top', permissions: [perm('users:read')], orgId: org.id });
    const leaf = await api.post('/roles', { name: 'Leaf', permissions: [], parentRoleId: top.body.id, orgId: org.id });
    const holder = await signedInOrgMember(t, org, { roleId: leaf.body.id, mfaEnabled: false });
    const onPeer = peer.client().withToken(holder.session.accessToken);
    expect((await onPeer.permissionCatalog()).status).toBe(200);
    await api.patch(`/roles/${top.body.id}`, { forceMfa: true }, q);
    const held = await onPeer.permissionCatalog();
    expect(held.status).toBe(428);
    expect(held.body.code).toBe('mfa_enrollment_required');
    expect((await holder.api.permissionCatalog()).status).toBe(428);
    expect((await holder.api.usersMe()).status).toBe(200);
  });
});

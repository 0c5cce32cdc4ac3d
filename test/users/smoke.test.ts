import { afterAll, beforeAll, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { createOrg, partnerAdmin } from '../support/fixtures.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => t?.close());

it('a partner admin invites, lists, updates, re-roles and removes an organisation member, and builds roles', async () => {
  const { api, partner } = await partnerAdmin(t);
  const org = await createOrg(t, partner.id);
  const roles = await api.get('/roles', { query: { orgId: org.id } });
  expect(roles.status).toBe(200);
  const viewer = roles.body.data.find((r: { name: string }) => r.name === 'Organization Viewer')!;
  const inv = await api.post('/users/invite', {
    email: 'new.tech@example.test',
    name: 'New Tech',
    roleId: viewer.id,
    orgId: org.id,
  });
  expect(inv.status, JSON.stringify(inv.body)).toBe(201);
  expect(inv.body).toMatchObject({ status: 'invited', inviteEmailSent: false });
  const again = await api.post('/users/invite', {
    email: 'NEW.TECH@example.test',
    name: 'New Tech',
    roleId: viewer.id,
    orgId: org.id,
  });
  expect(again.status).toBe(409);
  expect(again.body.code).toBe('user_exists_in_scope');
  const list = await api.get('/users', { query: { orgId: org.id } });
  expect(list.body.data).toHaveLength(1);
  expect(list.body.data[0]).toMatchObject({
    email: 'new.tech@example.test',
    roleName: 'Organization Viewer',
    siteIds: null,
  });
  const created = await api.post('/roles', {
    name: 'Helpdesk',
    permissions: [
      { resource: 'devices', action: 'view' },
      { resource: 'users', action: 'read' },
    ],
    orgId: org.id,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect(created.body.permissions).toEqual([
    { resource: 'devices', action: 'read' },
    { resource: 'users', action: 'read' },
  ]);
  const child = await api.post('/roles', {
    name: 'Helpdesk+',
    permissions: [{ resource: 'scripts', action: 'execute' }],
    parentRoleId: created.body.id,
    orgId: org.id,
  });
  expect(child.status).toBe(201);
  const cyc = await api.patch(
    `/roles/${created.body.id}`,
    { parentRoleId: child.body.id },
    { query: { orgId: org.id } },
  );
  expect(cyc.body.code).toBe('circular_inheritance');
  const eff = await api.get(`/roles/${child.body.id}/effective-permissions`, { query: { orgId: org.id } });
  expect(eff.body.permissions).toContainEqual({
    resource: 'users',
    action: 'read',
    inherited: true,
    sourceRoleId: created.body.id,
    sourceRoleName: 'Helpdesk',
  });
  const assign = await api.post(`/users/${inv.body.id}/role`, { roleId: child.body.id }, { query: { orgId: org.id } });
  expect(assign.status, JSON.stringify(assign.body)).toBe(200);
  const del = await api.delete(`/roles/${child.body.id}`, { query: { orgId: org.id } });
  expect(del.body).toMatchObject({ code: 'role_has_users', userCount: 1 });
  const delParent = await api.delete(`/roles/${created.body.id}`, { query: { orgId: org.id } });
  expect(delParent.body).toMatchObject({ code: 'role_has_children', childRoleCount: 1 });
  const clone = await api.post(`/roles/00000000-0000-4000-8000-000000000001/clone`, { name: 'Almost Admin' });
  expect(clone.status, JSON.stringify(clone.body)).toBe(201);
  expect(clone.body.permissions.length).toBeGreaterThan(40);
  const rm = await api.delete(`/users/${inv.body.id}`, { query: { orgId: org.id } });
  expect(rm.status).toBe(200);
  expect((await api.get(`/users/${inv.body.id}`, { query: { orgId: org.id } })).status).toBe(404);
});

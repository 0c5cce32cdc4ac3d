// Audit events of user and role management, each in its tenant: each action writes one record with the actor, the
// partner, the organisation when the action concerns one, the result, the resource and the client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import type { ApiClient } from '../support/client.js';
import {
  auditRecords,
  createOrg,
  partnerAdmin,
  signedInOrgMember,
  signedInPartnerMember,
  type SignedInMember,
} from '../support/fixtures.js';

const [, , PARTNER_VIEWER, ORG_ADMIN, ORG_TECH, ORG_VIEWER] = SYSTEM_ROLES.map((r) => r.id as string) as [
  string,
  string,
  string,
  string,
  string,
  string,
];

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => t?.close());

type Actor = { user: { id: string; email: string } };

/** Runs every audited action once in a scope and returns the resource each record must name. */
async function everyAction(
  api: ApiClient,
  member: SignedInMember,
  orgId: string | undefined,
  tag: string,
  inOrg = orgId !== undefined,
) {
  const q = { query: orgId ? { orgId } : {} };
  const body = <T extends object>(b: T) => (orgId ? { ...b, orgId } : b);
  const viewerRole = inOrg ? ORG_VIEWER : PARTNER_VIEWER;
  const inv = await api.post(
    '/users/invite',
    body({ email: `audit-${tag}@example.test`, name: 'Audited', roleId: viewerRole }),
  );
  expect(inv.status, inv.text).toBe(201);
  expect((await api.post('/users/resend-invite', body({ userId: inv.body.id }))).status).toBe(200);
  expect((await api.patch(`/users/${member.user.id}`, { name: 'Renamed' }, q)).status).toBe(200);
  const role = await api.post(
    '/roles',
    body({ name: `Audit ${tag}`, permissions: [{ resource: 'devices', action: 'read' }] }),
  );
  expect(role.status, role.text).toBe(201);
  expect((await api.post(`/users/${member.user.id}/role`, { roleId: role.body.id }, q)).status).toBe(200);
  expect((await api.patch(`/roles/${role.body.id}`, { description: 'changed' }, q)).status).toBe(200);
  const clone = await api.post(`/roles/${role.body.id}/clone`, body({ name: `Audit ${tag} copy` }));
  expect(clone.status, clone.text).toBe(201);
  expect((await api.delete(`/roles/${clone.body.id}`, q)).status).toBe(200);
  expect((await api.delete(`/users/${inv.body.id}`, q)).status).toBe(200);
  expect((await api.patch('/users/me', { name: 'Self Renamed' })).status).toBe(200);
  return {
    'user.invite': inv.body.id,
    'user.invite.resend': inv.body.id,
    'user.update': member.user.id,
    'role.create': role.body.id,
    'user.role.assign': member.user.id,
    'role.update': role.body.id,
    'role.clone': clone.body.id,
    'role.delete': clone.body.id,
    'user.remove': inv.body.id,
  } as Record<string, string>;
}

/** `sessionOrgId`: the own-profile record carries the caller's session tenant, not the organisation it administered. */
async function expectRecords(
  resources: Record<string, string>,
  actor: Actor,
  partnerId: string,
  orgId: string | null,
  sessionOrgId = orgId,
) {
  for (const [action, resourceId] of Object.entries(resources)) {
    const rows = await auditRecords(t, action, resourceId);
    expect(rows, action).toHaveLength(1);
    expect(rows[0], action).toMatchObject({
      action,
      result: 'success',
      actorUserId: actor.user.id,
      actorEmail: actor.user.email,
      partnerId,
      orgId,
      resourceType: action.startsWith('role.') ? 'role' : 'user',
      resourceId,
      ip: '127.0.0.1',
    });
    expect(rows[0]!.hash).toMatch(/^[0-9a-f]{64}$/);
  }
  const profile = await auditRecords(t, 'user.profile.update', actor.user.id);
  expect(profile.at(-1)).toMatchObject({
    result: 'success',
    actorUserId: actor.user.id,
    partnerId,
    orgId: sessionOrgId,
    resourceType: 'user',
    resourceId: actor.user.id,
  });
}

describe('every user and role action is audited with actor, tenant and result', () => {
  it('a partner admin in the partner scope: partnerId set, orgId null', async () => {
    const admin = await partnerAdmin(t);
    const member = await signedInPartnerMember(t, admin.partner.id, { roleId: PARTNER_VIEWER });
    const resources = await everyAction(admin.api, member, undefined, 'p');
    await expectRecords(resources, admin, admin.partner.id, null);
  });

  it('a partner admin acting in an organisation (?orgId=): recorded with that orgId', async () => {
    const admin = await partnerAdmin(t);
    const org = await createOrg(t, admin.partner.id);
    const member = await signedInOrgMember(t, org, { roleId: ORG_TECH });
    const resources = await everyAction(admin.api, member, org.id, 'po');
    await expectRecords(resources, admin, admin.partner.id, org.id, null);
  });

  it('an organisation admin in its organisation: partnerId of its partner and its orgId', async () => {
    const { partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const orgAdmin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN });
    const member = await signedInOrgMember(t, org, { roleId: ORG_VIEWER });
    const resources = await everyAction(orgAdmin.api, member, undefined, 'o', true);
    await expectRecords(resources, orgAdmin, partner.id, org.id);
  });
});

describe('a refused action writes no success record', () => {
  it('forbidden_self_action, permission_ceiling and 404 leave the trail as it was', async () => {
    const { partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const orgAdmin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN });
    const before =
      (await auditRecords(t, 'role.create')).length +
      (await auditRecords(t, 'user.remove')).length +
      (await auditRecords(t, 'user.role.assign')).length;
    expect(
      (await orgAdmin.api.post('/roles', { name: 'Bill', permissions: [{ resource: 'billing', action: 'read' }] }))
        .status,
    ).toBe(403);
    expect((await orgAdmin.api.delete(`/users/${orgAdmin.user.id}`)).status).toBe(403);
    expect(
      (await orgAdmin.api.post(`/users/00000000-0000-4000-8000-0000000000aa/role`, { roleId: ORG_VIEWER })).status,
    ).toBe(404);
    const after =
      (await auditRecords(t, 'role.create')).length +
      (await auditRecords(t, 'user.remove')).length +
      (await auditRecords(t, 'user.role.assign')).length;
    expect(after).toBe(before);
  });
});

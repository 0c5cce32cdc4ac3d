// Who may administer users and roles at all: only partner users with orgAccess
// all (403 full_org_access_required otherwise), never a caller without an association (403 tenant_context_required),
// and an organisation user only its own organisation (another one named by orgId is 404). Every route is tried.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import {
  createOrg,
  createUser,
  partnerAdmin,
  sessionFor,
  signedInOrgMember,
  signedInPartnerMember,
} from '../support/fixtures.js';
import { ADMIN_ROUTES, FOREIGN_ROUTES, label, OTHER_ROUTES, type RouteIds } from '../tenancy/routes.js';

const [PARTNER_ADMIN, , PARTNER_VIEWER, ORG_ADMIN, , ORG_VIEWER] = SYSTEM_ROLES.map((r) => r.id as string) as [
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

/** A partner with two organisations, an organisation member and a custom role in the first. */
async function world() {
  const admin = await partnerAdmin(t);
  const orgA = await createOrg(t, admin.partner.id);
  const orgB = await createOrg(t, admin.partner.id);
  const member = await signedInOrgMember(t, orgA, { roleId: ORG_VIEWER });
  const role = await admin.api.post('/roles', { name: 'Scoped', permissions: [], orgId: orgA.id });
  const partnerMember = await signedInPartnerMember(t, admin.partner.id, { roleId: PARTNER_VIEWER });
  return { admin, orgA, orgB, member, roleId: role.body.id as string, partnerMember };
}

describe('the route table covers every /users and /roles route the app serves', () => {
  it('registered routes = table + own profile + catalogue (+ routes of other issues)', () => {
    const served = t.app.registeredRoutes
      .filter((r) => /^\/api\/v1\/(users|roles|permissions)(\/|$)/.test(r.url))
      .map((r) => `${r.method} ${r.url.replace('/api/v1', '')}`)
      .filter((r) => !FOREIGN_ROUTES.includes(r));
    expect(new Set(served)).toEqual(new Set([...ADMIN_ROUTES.map(label), ...OTHER_ROUTES]));
  });

  it('control: with ids of its own scope, a partner admin gets 2xx from every route of the table (so refusals elsewhere mean something)', async () => {
    const w = await world();
    const invited = await w.admin.api.post('/users/invite', {
      email: `ctl-${w.orgA.id.slice(0, 8)}@example.test`,
      name: 'Ctl',
      roleId: ORG_VIEWER,
      orgId: w.orgA.id,
    });
    const ordered = [...ADMIN_ROUTES].sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
    for (const route of ordered) {
      const ids: RouteIds = {
        userId: route.url === '/users/resend-invite' ? invited.body.id : w.member.user.id,
        roleId: route.url === '/users/invite' || route.url === '/users/:id/role' ? ORG_VIEWER : w.roleId,
        orgId: w.orgA.id,
      };
      const r = await route.call(w.admin.api, ids);
      expect([200, 201], `${label(route)} ${r.text}`).toContain(r.status);
    }
  });
});

describe('partner users whose orgAccess is not "all" cannot administer users and roles (403 full_org_access_required)', () => {
  it.each(['selected', 'none'] as const)(
    'orgAccess %s, even holding *:*: every /users route but /users/me, and every /roles route',
    async (orgAccess) => {
      const w = await world();
      const limited = await signedInPartnerMember(t, w.admin.partner.id, {
        roleId: PARTNER_ADMIN,
        orgAccess,
        orgIds: orgAccess === 'selected' ? [w.orgA.id] : [],
      });
      for (const ids of [
        { userId: w.partnerMember.user.id, roleId: PARTNER_VIEWER },
        { userId: w.member.user.id, roleId: w.roleId, orgId: w.orgA.id }, // an organisation it may see
      ] satisfies RouteIds[]) {
        for (const route of ADMIN_ROUTES) {
          const r = await route.call(limited.api, ids);
          expect(r.status, `${label(route)} ${r.text}`).toBe(403);
          expect(r.body).toMatchObject({
            code: 'full_org_access_required',
            message: 'Full partner organization access required.',
          });
        }
      }
      expect((await limited.api.get('/users/me')).status).toBe(200);
      expect((await limited.api.patch('/users/me', { name: 'Still me' })).status).toBe(200);
      // Nothing changed behind the refusals.
      expect((await w.admin.api.get(`/users/${w.member.user.id}`, { query: { orgId: w.orgA.id } })).body).toMatchObject(
        { name: 'Test User', roleId: ORG_VIEWER },
      );
      expect(
        (await w.admin.api.get(`/roles/${w.roleId}`, { query: { orgId: w.orgA.id } })).body.description,
      ).toBeNull();
    },
  );

  it('the tenant-scope refusal comes before permission and body checks', async () => {
    const w = await world();
    const limited = await signedInPartnerMember(t, w.admin.partner.id, {
      roleId: PARTNER_VIEWER,
      orgAccess: 'selected',
      orgIds: [w.orgA.id],
    });
    expect((await limited.api.raw.post('/roles', { bogus: true })).body.code).toBe('full_org_access_required');
    expect((await limited.api.raw.post('/users/invite', {})).body.code).toBe('full_org_access_required');
  });
});

describe('a caller with no partner or organisation association is refused (403 tenant_context_required)', () => {
  it('every administration route and the catalogue; its own profile still answers', async () => {
    const w = await world();
    const loner = await createUser(t, { mfaEnabled: true });
    const session = await sessionFor(t, loner.id, { scope: null }, true);
    const api = t.client().withToken(session.accessToken);
    for (const route of ADMIN_ROUTES) {
      for (const ids of [
        { userId: w.member.user.id, roleId: w.roleId },
        { userId: w.member.user.id, roleId: w.roleId, orgId: w.orgA.id },
      ] satisfies RouteIds[]) {
        const r = await route.call(api, ids);
        expect(r.status, `${label(route)} ${r.text}`).toBe(403);
        expect(r.body).toMatchObject({
          code: 'tenant_context_required',
          message: 'Partner or organization context required.',
        });
      }
    }
    expect((await api.permissionCatalog()).body.code).toBe('tenant_context_required');
    const me = await api.get('/users/me');
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ scope: null, partnerId: null, orgId: null, permissions: [] });
  });

  it('without a token every route is 401 unauthenticated first', async () => {
    const w = await world();
    const anon = t.client();
    for (const route of ADMIN_ROUTES) {
      const r = await route.call(anon, { userId: w.member.user.id, roleId: w.roleId });
      expect(r.status, label(route)).toBe(401);
      expect(r.body.code).toBe('unauthenticated');
    }
  });
});

describe('an organisation user cannot reach another organisation by naming it (404)', () => {
  it('another organisation of its partner, or of another partner, on every route that takes orgId', async () => {
    const w = await world();
    const orgAdminB = await signedInOrgMember(t, w.orgB, { roleId: ORG_ADMIN });
    const stranger = await partnerAdmin(t);
    const strangerOrg = await createOrg(t, stranger.partner.id);
    for (const orgId of [w.orgA.id, strangerOrg.id]) {
      for (const route of ADMIN_ROUTES.filter((r) => r.url !== '/roles/permissions/available')) {
        // Ids of the foreign organisation's member and role; the organisation is named explicitly.
        const r = await route.call(orgAdminB.api, {
          userId: w.member.user.id,
          roleId: orgId === w.orgA.id ? w.roleId : ORG_VIEWER,
          orgId,
        });
        expect(r.status, `${label(route)} orgId=${orgId === w.orgA.id ? 'sibling' : 'foreign'}: ${r.text}`).toBe(404);
        expect(r.body.code).toBe('not_found');
      }
    }
    // Its own organisation, named or not, works.
    expect((await orgAdminB.api.get('/users', { query: { orgId: w.orgB.id } })).status).toBe(200);
    expect((await orgAdminB.api.get('/users')).body.data.map((u: { id: string }) => u.id)).toEqual([orgAdminB.user.id]);
    // And the member of the sibling organisation was left alone.
    expect((await w.member.api.get('/users/me')).body).toMatchObject({ name: 'Test User', roleId: ORG_VIEWER });
  });

  it("the partner's own members and partner roles do not exist for an organisation user (404 without orgId)", async () => {
    const w = await world();
    const orgAdminA = await signedInOrgMember(t, w.orgA, { roleId: ORG_ADMIN });
    const partnerRole = await w.admin.api.post('/roles', { name: 'Partner only', permissions: [] });
    for (const route of ADMIN_ROUTES.filter((r) => r.target !== 'none')) {
      const ids = {
        userId: w.partnerMember.user.id,
        roleId: route.target === 'role' ? partnerRole.body.id : ORG_VIEWER,
      };
      const r = await route.call(orgAdminA.api, ids);
      // A role named in a body (invite) is a bad field, 400, whether it exists elsewhere or not at all; a path id is 404.
      expect(r.status, `${label(route)} ${r.text}`).toBe(route.url === '/users/invite' ? 400 : 404);
    }
  });
});

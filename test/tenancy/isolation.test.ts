// Tenant isolation of every user and role management route: two partners, each with organisations, sites, device
// groups, users, invitations and roles. No route reads or changes anything of the other partner, an organisation user
// nothing of a sibling organisation, and a partner user with selected organisations administers none.
// "Changes nothing" is proved by a snapshot of the victim's rows before and after every attack.
import { and, asc, eq, inArray, ne, or } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  auditLogs,
  authFlows,
  organizationUsers,
  partnerUsers,
  rolePermissions,
  roles,
  sessions,
  users,
} from '../../src/db/schema/index.js';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import type { ApiClient, ApiResponse } from '../support/client.js';
import {
  createDeviceGroup,
  createOrg,
  createPartner,
  createSite,
  signedInOrgMember,
  signedInPartnerMember,
  type SignedInMember,
} from '../support/fixtures.js';
import { ADMIN_ROUTES, label } from './routes.js';

const [PARTNER_ADMIN, PARTNER_TECH, PARTNER_VIEWER, ORG_ADMIN, , ORG_VIEWER] = SYSTEM_ROLES.map(
  (r) => r.id as string,
) as [string, string, string, string, string, string];
const SYSTEM_IDS = new Set(SYSTEM_ROLES.map((r) => r.id as string));

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => t?.close());

interface OrgWorld {
  org: { id: string; partnerId: string; name: string };
  siteId: string;
  groupId: string;
  admin: SignedInMember;
  viewer: SignedInMember;
  invitedId: string;
  roleId: string;
}
interface Tenant {
  partnerId: string;
  admin: SignedInMember;
  tech: SignedInMember;
  invitedId: string;
  roleId: string;
  orgs: [OrgWorld, OrgWorld];
  userIds: string[];
  roleIds: string[];
}

async function buildOrg(adminApi: ApiClient, partnerId: string, tag: string): Promise<OrgWorld> {
  const org = await createOrg(t, partnerId);
  const site = await createSite(t, org.id);
  const group = await createDeviceGroup(t, org.id, { siteId: site.id });
  const role = await adminApi.post('/roles', {
    name: `${tag} role`,
    permissions: [{ resource: 'devices', action: 'read' }],
    orgId: org.id,
  });
  expect(role.status, role.text).toBe(201);
  const admin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN });
  const viewer = await signedInOrgMember(t, org, {
    roleId: role.body.id,
    siteIds: [site.id],
    deviceGroupIds: [group.id],
  });
  const inv = await adminApi.post('/users/invite', {
    email: `inv-${tag}-${org.id.slice(0, 8)}@example.test`,
    name: 'Invited',
    roleId: ORG_VIEWER,
    orgId: org.id,
  });
  expect(inv.status, inv.text).toBe(201);
  return { org, siteId: site.id, groupId: group.id, admin, viewer, invitedId: inv.body.id, roleId: role.body.id };
}

async function buildTenant(tag: string): Promise<Tenant> {
  const partner = await createPartner(t);
  const admin = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN });
  const o1 = await buildOrg(admin.api, partner.id, `${tag}1`);
  const o2 = await buildOrg(admin.api, partner.id, `${tag}2`);
  const tech = await signedInPartnerMember(t, partner.id, {
    roleId: PARTNER_TECH,
    orgAccess: 'selected',
    orgIds: [o1.org.id],
  });
  const role = await admin.api.post('/roles', {
    name: `${tag} partner role`,
    permissions: [{ resource: 'alerts', action: 'read' }],
  });
  const child = await admin.api.post('/roles', {
    name: `${tag} child role`,
    permissions: [],
    parentRoleId: role.body.id,
  });
  const inv = await admin.api.post('/users/invite', {
    email: `inv-${tag}-${partner.id.slice(0, 8)}@example.test`,
    name: 'Invited',
    roleId: PARTNER_VIEWER,
  });
  const orgs: [OrgWorld, OrgWorld] = [o1, o2];
  return {
    partnerId: partner.id,
    admin,
    tech,
    invitedId: inv.body.id,
    roleId: role.body.id,
    orgs,
    userIds: [
      admin.user.id,
      tech.user.id,
      inv.body.id,
      ...orgs.flatMap((o) => [o.admin.user.id, o.viewer.user.id, o.invitedId]),
    ],
    roleIds: [role.body.id, child.body.id, ...orgs.map((o) => o.roleId)],
  };
}

/**
 * Every row a route of this issue could read or change for a set of organisations (and their partner).
 * `ownTrail`: the attacker belongs to this tenant, whose trail may note its refused attempts (access.denied).
 */
async function snapshot(partnerId: string | null, orgIds: string[], userIds: string[], ownTrail = false) {
  const db = t.deps.db;
  const pu = partnerId
    ? await db.select().from(partnerUsers).where(eq(partnerUsers.partnerId, partnerId)).orderBy(asc(partnerUsers.id))
    : [];
  const ou = await db
    .select()
    .from(organizationUsers)
    .where(inArray(organizationUsers.orgId, orgIds))
    .orderBy(asc(organizationUsers.id));
  const rs = await db
    .select()
    .from(roles)
    .where(partnerId ? or(eq(roles.partnerId, partnerId), inArray(roles.orgId, orgIds)) : inArray(roles.orgId, orgIds))
    .orderBy(asc(roles.id));
  const rp = rs.length
    ? await db
        .select()
        .from(rolePermissions)
        .where(
          inArray(
            rolePermissions.roleId,
            rs.map((r) => r.id),
          ),
        )
    : [];
  const us = await db.select().from(users).where(inArray(users.id, userIds)).orderBy(asc(users.id));
  const ss = await db
    .select({ id: sessions.id, revokedAt: sessions.revokedAt })
    .from(sessions)
    .where(inArray(sessions.userId, userIds))
    .orderBy(asc(sessions.id));
  const fl = await db
    .select({ id: authFlows.id, consumedAt: authFlows.consumedAt })
    .from(authFlows)
    .where(inArray(authFlows.userId, userIds))
    .orderBy(asc(authFlows.id));
  const au = await db
    .select({ seq: auditLogs.seq })
    .from(auditLogs)
    .where(
      and(
        partnerId
          ? or(eq(auditLogs.partnerId, partnerId), inArray(auditLogs.orgId, orgIds))
          : inArray(auditLogs.orgId, orgIds),
        ownTrail ? ne(auditLogs.action, 'access.denied') : undefined,
      ),
    );
  return JSON.parse(
    JSON.stringify({
      pu,
      ou,
      rs,
      rp: rp.map((r) => `${r.roleId}:${r.permissionId}`).sort(),
      us,
      ss,
      fl,
      audit: au.length,
    }),
  );
}

const tenantSnapshot = (x: Tenant, ownTrail = false) =>
  snapshot(
    x.partnerId,
    x.orgs.map((o) => o.org.id),
    x.userIds,
    ownTrail,
  );
const orgSnapshot = (o: OrgWorld) => snapshot(null, [o.org.id], [o.admin.user.id, o.viewer.user.id, o.invitedId]);

/** Ids of every row in a list answer (users or roles). */
const idsIn = (r: ApiResponse) => (r.body.data as { id: string }[]).map((x) => x.id);

/**
 * Runs every route that names a user or role with each foreign id, without orgId and with each given orgId.
 * Every answer must be 404, except an id referenced from a body (invite's roleId), which is a 400 like any unknown id.
 */
async function attackIds(
  api: ApiClient,
  foreign: { userIds: string[]; roleIds: string[] },
  orgIds: (string | undefined)[],
  ownRoleId: string,
  ownUserId: string,
) {
  for (const route of ADMIN_ROUTES.filter((r) => r.target !== 'none')) {
    for (const orgId of orgIds) {
      const targets = route.target === 'user' ? foreign.userIds : foreign.roleIds;
      for (const id of targets) {
        const ids =
          route.target === 'user' ? { userId: id, roleId: ownRoleId, orgId } : { userId: ownUserId, roleId: id, orgId };
        const r = await route.call(api, ids);
        const where = `${label(route)} id=${id} orgId=${orgId ?? '-'}: ${r.status} ${r.text}`;
        if (route.url === '/users/invite' && orgId === undefined) {
          expect(r.status, where).toBe(400);
          expect(r.body.code, where).toBe('validation_failed');
        } else if (route.url === '/users/invite') {
          expect([400, 404], where).toContain(r.status); // 404 when the organisation is not the caller's
          expect(r.status === 404 || r.body.code === 'validation_failed', where).toBe(true);
        } else {
          expect(r.status, where).toBe(404);
          expect(r.body.code, where).toBe('not_found');
        }
      }
    }
  }
}

/** Routes without an id, aimed at a foreign organisation by orgId: 404. */
async function attackOrgs(api: ApiClient, foreignOrgIds: string[], ownRoleId: string, ownUserId: string) {
  for (const route of ADMIN_ROUTES.filter((r) => r.url !== '/roles/permissions/available')) {
    for (const orgId of foreignOrgIds) {
      const r = await route.call(api, { userId: ownUserId, roleId: ownRoleId, orgId });
      expect(r.status, `${label(route)} orgId=${orgId}: ${r.text}`).toBe(404);
    }
  }
}

describe('two partners: no route reads or changes anything of the other', () => {
  let p: Tenant;
  let q: Tenant;
  beforeAll(async () => {
    p = await buildTenant('P');
    q = await buildTenant('Q');
  });

  describe.each([
    ['P', 'Q'],
    ['Q', 'P'],
  ])('partner admin of %s against %s', (me, _them) => {
    const pair = () => (me === 'P' ? [p, q] : [q, p]) as [Tenant, Tenant];

    it("lists of users, roles and holders never contain the other partner's rows; counts are its own", async () => {
      const [mine, other] = pair();
      const api = mine.admin.api;
      const lists = [
        await api.get('/users', { query: { limit: 200 } }),
        await api.get('/roles', { query: { limit: 200 } }),
        await api.get('/users/roles', { query: { limit: 200 } }),
        await api.get(`/roles/${PARTNER_ADMIN}/users`),
        await api.get(`/roles/${PARTNER_VIEWER}/users`),
        ...(await Promise.all(
          mine.orgs.flatMap((o) => [
            api.get('/users', { query: { orgId: o.org.id, limit: 200 } }),
            api.get('/roles', { query: { orgId: o.org.id, limit: 200 } }),
            api.get('/users/roles', { query: { orgId: o.org.id, limit: 200 } }),
            api.get(`/roles/${ORG_ADMIN}/users`, { query: { orgId: o.org.id } }),
            api.get(`/roles/${ORG_VIEWER}/users`, { query: { orgId: o.org.id } }),
          ]),
        )),
      ];
      const foreign = new Set([...other.userIds, ...other.roleIds]);
      for (const l of lists) {
        expect(l.status, l.text).toBe(200);
        const leaked = idsIn(l).filter((id) => foreign.has(id));
        expect(leaked, l.text).toEqual([]);
        // Every row is one of mine or a system role.
        for (const id of idsIn(l))
          expect(mine.userIds.includes(id) || mine.roleIds.includes(id) || SYSTEM_IDS.has(id), id).toBe(true);
      }
      const roleList = (await api.get('/roles')).body.data as { id: string; userCount: number }[];
      expect(roleList.find((r) => r.id === PARTNER_ADMIN)!.userCount).toBe(1);
      expect(roleList.find((r) => r.id === PARTNER_VIEWER)!.userCount).toBe(1); // its own invitee only
    });

    it("every route with the other partner's user and role ids, with or without orgId → 404; nothing changes", async () => {
      const [mine, other] = pair();
      const before = await tenantSnapshot(other);
      await attackIds(
        mine.admin.api,
        { userIds: other.userIds, roleIds: other.roleIds },
        [undefined, mine.orgs[0].org.id, other.orgs[0].org.id],
        PARTNER_VIEWER,
        mine.tech.user.id,
      );
      expect(await tenantSnapshot(other)).toEqual(before);
    });

    it("every route aimed at the other partner's organisations by orgId → 404; nothing created there", async () => {
      const [mine, other] = pair();
      const before = await tenantSnapshot(other);
      await attackOrgs(
        mine.admin.api,
        other.orgs.map((o) => o.org.id),
        ORG_VIEWER,
        mine.orgs[0].viewer.user.id,
      );
      expect(await tenantSnapshot(other)).toEqual(before);
    });

    it("the other partner's sites, device groups, organisations and roles are refused inside bodies (400), as unknown ids are", async () => {
      const [mine, other] = pair();
      const before = await tenantSnapshot(other);
      const api = mine.admin.api;
      const myOrg = mine.orgs[0].org.id;
      const their = other.orgs[0];
      const email = `body-${me}-${Date.now()}@example.test`;
      const bodies: [string, unknown, Record<string, string>?][] = [
        ['/users/invite', { email, name: 'X', roleId: ORG_VIEWER, orgId: myOrg, siteIds: [their.siteId] }],
        ['/users/invite', { email, name: 'X', roleId: ORG_VIEWER, orgId: myOrg, deviceGroupIds: [their.groupId] }],
        ['/users/invite', { email, name: 'X', roleId: PARTNER_VIEWER, orgAccess: 'selected', orgIds: [their.org.id] }],
        ['/users/invite', { email, name: 'X', roleId: their.roleId, orgId: myOrg }],
        ['/roles', { name: 'Foreign parent', permissions: [], parentRoleId: other.roleId }],
        ['/roles', { name: 'Foreign parent', permissions: [], parentRoleId: their.roleId, orgId: myOrg }],
      ];
      for (const [path, body] of bodies) {
        const r = await api.raw.post(path, body);
        expect(r.status, `${path} ${JSON.stringify(body)} ${r.text}`).toBe(400);
      }
      expect((await api.patch(`/roles/${mine.roleId}`, { parentRoleId: other.roleId })).status).toBe(400);
      expect((await api.post(`/users/${mine.tech.user.id}/role`, { roleId: other.roleId })).status).toBe(400);
      expect(
        (
          await api.post(
            `/users/${mine.orgs[0].viewer.user.id}/role`,
            { roleId: their.roleId },
            { query: { orgId: myOrg } },
          )
        ).status,
      ).toBe(400);
      expect(await tenantSnapshot(other)).toEqual(before);
    });

    it('an organisation admin of one partner reaches nothing of the other (ids and orgIds → 404)', async () => {
      const [mine, other] = pair();
      const before = await tenantSnapshot(other);
      const orgAdmin = mine.orgs[0].admin;
      await attackIds(
        orgAdmin.api,
        { userIds: other.userIds, roleIds: other.roleIds },
        [undefined, other.orgs[0].org.id],
        ORG_VIEWER,
        mine.orgs[0].viewer.user.id,
      );
      await attackOrgs(
        orgAdmin.api,
        other.orgs.map((o) => o.org.id),
        ORG_VIEWER,
        mine.orgs[0].viewer.user.id,
      );
      expect(await tenantSnapshot(other)).toEqual(before);
    });
  });
});

describe('within one partner: an organisation user reaches nothing of a sibling organisation or of the partner level', () => {
  it('ids of the sibling organisation and of the partner (users and roles) → 404; sibling orgId → 404; lists hold its own only', async () => {
    const p = await buildTenant('S');
    const [mine, sibling] = p.orgs;
    const before = await orgSnapshot(sibling);
    const partnerLevelBefore = await snapshot(p.partnerId, [], [p.admin.user.id, p.tech.user.id, p.invitedId], true);
    const api = mine.admin.api;
    await attackIds(
      api,
      {
        userIds: [
          sibling.admin.user.id,
          sibling.viewer.user.id,
          sibling.invitedId,
          p.admin.user.id,
          p.tech.user.id,
          p.invitedId,
        ],
        roleIds: [sibling.roleId, ...p.roleIds.filter((id) => id !== mine.roleId)],
      },
      [undefined, sibling.org.id],
      ORG_VIEWER,
      mine.viewer.user.id,
    );
    await attackOrgs(api, [sibling.org.id], ORG_VIEWER, mine.viewer.user.id);
    expect(await orgSnapshot(sibling)).toEqual(before);
    expect(await snapshot(p.partnerId, [], [p.admin.user.id, p.tech.user.id, p.invitedId], true)).toEqual(
      partnerLevelBefore,
    );

    const allowed = new Set([mine.admin.user.id, mine.viewer.user.id, mine.invitedId, mine.roleId, ...SYSTEM_IDS]);
    for (const l of [
      await api.get('/users'),
      await api.get('/roles'),
      await api.get('/users/roles'),
      await api.get(`/roles/${ORG_ADMIN}/users`),
    ]) {
      expect(l.status).toBe(200);
      expect(
        idsIn(l).filter((id) => !allowed.has(id)),
        l.text,
      ).toEqual([]);
    }
    // Partner-scope system roles are not roles of an organisation.
    expect(idsIn(await api.get('/roles'))).not.toContain(PARTNER_ADMIN);
  });

  it('a partner user with selected organisations administers none of them, nor any other (403), and changes nothing', async () => {
    const p = await buildTenant('T');
    const before = await tenantSnapshot(p, true);
    for (const o of p.orgs) {
      for (const route of ADMIN_ROUTES) {
        const r = await route.call(p.tech.api, { userId: o.viewer.user.id, roleId: o.roleId, orgId: o.org.id });
        expect(r.status, `${label(route)} ${r.text}`).toBe(403);
        expect(r.body.code).toBe('full_org_access_required');
      }
    }
    expect(await tenantSnapshot(p, true)).toEqual(before);
  });
});

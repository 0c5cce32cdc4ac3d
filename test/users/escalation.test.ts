// Escalation guards: the permission ceiling on invite, assign, create, update, clone and delete;
// no self role change, removal or disabling; the last holder of *:* in a partner stays, even under races.
import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { organizationUsers, partnerUsers, users } from '../../src/db/schema/index.js';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import type { ApiClient, ApiResponse } from '../support/client.js';
import {
  accountOf,
  createDeviceGroup,
  createOrg,
  createPartner,
  createSite,
  partnerAdmin,
  signedInOrgMember,
  signedInPartnerMember,
} from '../support/fixtures.js';

const [PARTNER_ADMIN, PARTNER_TECH, PARTNER_VIEWER, ORG_ADMIN, , ORG_VIEWER] = SYSTEM_ROLES.map(
  (r) => r.id as string,
) as [string, string, string, string, string, string];
const email = (tag: string) => `${tag}-${randomBytes(4).toString('hex')}@example.test`;
const perm = (k: string) => {
  const [resource, action] = k.split(':');
  return { resource: resource!, action: action! };
};
const VIEWER_PERMS = [
  'organizations:read',
  'sites:read',
  'devices:read',
  'scripts:read',
  'alerts:read',
  'reports:read',
  'topology:read',
];
const USER_ADMIN_PERMS = ['users:read', 'users:write', 'users:delete', 'users:invite'];

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => t?.close());

/**
 * A partner with a Partner Admin and a "User Manager" (orgAccess all) whose custom role administers users and roles
 * and reads like a viewer, but lacks e.g. devices:write, which Partner Technician holds.
 */
async function partnerWithManager() {
  const admin = await partnerAdmin(t);
  const role = await admin.api.post('/roles', {
    name: 'User Manager',
    permissions: [...USER_ADMIN_PERMS, ...VIEWER_PERMS].map(perm),
  });
  expect(role.status, role.text).toBe(201);
  const manager = await signedInPartnerMember(t, admin.partner.id, { roleId: role.body.id, orgAccess: 'all' });
  return { admin, manager, managerRoleId: role.body.id as string, partner: admin.partner };
}

const expectOutsideAuthority = (r: ApiResponse) => {
  expect(r.status, r.text).toBe(403);
  expect(r.body.code).toBe('account_outside_authority');
};
const expectCeiling = (r: ApiResponse, missing?: string) => {
  expect(r.status, r.text).toBe(403);
  expect(r.body.code).toBe('permission_ceiling');
  if (missing) expect(r.body.missing).toContain(missing);
};

describe('permission_ceiling: nobody grants a permission they lack', () => {
  it('invite: with a role holding more than the caller → 403, nothing created; with a role within the ceiling → 201', async () => {
    const { manager } = await partnerWithManager();
    const to = email('ceiling');
    expectCeiling(
      await manager.api.post('/users/invite', { email: to, name: 'X', roleId: PARTNER_TECH }),
      'devices:write',
    );
    expectCeiling(await manager.api.post('/users/invite', { email: to, name: 'X', roleId: PARTNER_ADMIN }), '*:*');
    expect((await manager.api.get('/users', { query: { search: 'ceiling-' } })).body.data).toHaveLength(0);
    expect((await manager.api.post('/users/invite', { email: to, name: 'X', roleId: PARTNER_VIEWER })).status).toBe(
      201,
    );
  });

  it('assign: giving a member a role above the caller → 403 and the assignment is unchanged', async () => {
    const { manager, partner } = await partnerWithManager();
    const viewer = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_VIEWER });
    expectCeiling(await manager.api.post(`/users/${viewer.user.id}/role`, { roleId: PARTNER_TECH }), 'devices:write');
    expectCeiling(await manager.api.post(`/users/${viewer.user.id}/role`, { roleId: PARTNER_ADMIN }));
    expect((await manager.api.get(`/users/${viewer.user.id}`)).body.roleId).toBe(PARTNER_VIEWER);
  });

  it('create: a permission above the caller, directly or through the parent → 403; within → 201', async () => {
    const { manager } = await partnerWithManager();
    expectCeiling(
      await manager.api.post('/roles', { name: 'Writer', permissions: [perm('devices:write')] }),
      'devices:write',
    );
    expectCeiling(
      await manager.api.post('/roles', { name: 'Via parent', permissions: [], parentRoleId: PARTNER_TECH }),
      'devices:write',
    );
    expectCeiling(
      await manager.api.post('/roles', { name: 'Alias', permissions: [{ resource: 'devices', action: 'update' }] }),
      'devices:write',
    );
    const ok = await manager.api.post('/roles', { name: 'Reader', permissions: [perm('devices:read')] });
    expect(ok.status, ok.text).toBe(201);
    expect((await manager.api.get('/roles', { query: { search: 'Writer' } })).body.data).toHaveLength(0);
  });

  it('update: adding a permission or a parent above the caller → 403; a role already above the caller cannot be edited at all', async () => {
    const { manager, admin } = await partnerWithManager();
    const own = await manager.api.post('/roles', { name: 'Small', permissions: [perm('devices:read')] });
    expectCeiling(
      await manager.api.patch(`/roles/${own.body.id}`, { permissions: [perm('devices:read'), perm('devices:write')] }),
      'devices:write',
    );
    expectCeiling(await manager.api.patch(`/roles/${own.body.id}`, { parentRoleId: PARTNER_TECH }), 'devices:write');
    expect((await manager.api.get(`/roles/${own.body.id}`)).body).toMatchObject({
      parentRoleId: null,
      permissions: [perm('devices:read')],
    });
    // An admin's role that holds devices:write: the manager may not even rename or shrink it.
    const big = await admin.api.post('/roles', { name: 'Big', permissions: [perm('devices:write')] });
    expectCeiling(await manager.api.patch(`/roles/${big.body.id}`, { name: 'Renamed' }));
    expectCeiling(await manager.api.patch(`/roles/${big.body.id}`, { permissions: [] }));
    expect((await manager.api.patch(`/roles/${own.body.id}`, { name: 'Small 2' })).status).toBe(200);
  });

  it('clone: a role (system or custom) holding more than the caller → 403; within → 201', async () => {
    const { manager, admin } = await partnerWithManager();
    expectCeiling(await manager.api.post(`/roles/${PARTNER_TECH}/clone`, { name: 'Tech copy' }), 'devices:write');
    expectCeiling(await manager.api.post(`/roles/${PARTNER_ADMIN}/clone`, { name: 'Admin copy' }));
    const big = await admin.api.post('/roles', { name: 'Big', permissions: [perm('billing:write')] });
    expectCeiling(await manager.api.post(`/roles/${big.body.id}/clone`, { name: 'Big copy' }), 'billing:write');
    const ok = await manager.api.post(`/roles/${PARTNER_VIEWER}/clone`, { name: 'Viewer copy' });
    expect(ok.status, ok.text).toBe(201);
  });

  it('delete: a role above the caller cannot be deleted', async () => {
    const { manager, admin } = await partnerWithManager();
    const big = await admin.api.post('/roles', { name: 'Big', permissions: [perm('billing:write')] });
    expectCeiling(await manager.api.delete(`/roles/${big.body.id}`));
    expect((await admin.api.get(`/roles/${big.body.id}`)).status).toBe(200);
  });

  it('members whose role exceeds the caller cannot be removed, re-roled, renamed or disabled by the caller', async () => {
    const { manager, admin, partner } = await partnerWithManager();
    const tech = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_TECH });
    for (const target of [tech.user.id, admin.user.id]) {
      expectCeiling(await manager.api.delete(`/users/${target}`));
      expectCeiling(await manager.api.post(`/users/${target}/role`, { roleId: PARTNER_VIEWER }));
      expectOutsideAuthority(await manager.api.patch(`/users/${target}`, { status: 'disabled' }));
      expectOutsideAuthority(await manager.api.patch(`/users/${target}`, { name: 'Pwned' }));
    }
    expect((await admin.api.get('/users/me')).status).toBe(200);
    expect((await tech.api.get('/users/me')).body.roleId).toBe(PARTNER_TECH);
  });

  it('organisation scope: an Organization Admin cannot create, clone or hand out what it lacks (billing)', async () => {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const billingRole = await api.post('/roles', {
      name: 'Billing',
      permissions: [perm('billing:read')],
      orgId: org.id,
    });
    expect(billingRole.status).toBe(201);
    const orgAdmin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN });
    const viewer = await signedInOrgMember(t, org, { roleId: ORG_VIEWER });
    expectCeiling(
      await orgAdmin.api.post('/roles', { name: 'Bill', permissions: [perm('billing:read')] }),
      'billing:read',
    );
    expectCeiling(
      await orgAdmin.api.post('/roles', { name: 'Child', permissions: [], parentRoleId: billingRole.body.id }),
      'billing:read',
    );
    expectCeiling(await orgAdmin.api.post(`/roles/${billingRole.body.id}/clone`, { name: 'Bill 2' }), 'billing:read');
    expectCeiling(
      await orgAdmin.api.post('/users/invite', { email: email('b'), name: 'B', roleId: billingRole.body.id }),
      'billing:read',
    );
    expectCeiling(
      await orgAdmin.api.post(`/users/${viewer.user.id}/role`, { roleId: billingRole.body.id }),
      'billing:read',
    );
    expectCeiling(await orgAdmin.api.patch(`/roles/${billingRole.body.id}`, { name: 'Free billing' }));
  });
});

describe('account-wide changes (name, status) need authority over every membership of the account', () => {
  it('an Organization Admin cannot disable or rename a Partner Admin who is also a member of its organisation', async () => {
    const { partner, user: partnerAdminUser, api: adminApi } = await partnerAdmin(t);
    const second = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN }); // so last_admin is not what stops it
    const org = await createOrg(t, partner.id);
    await t.deps.db
      .insert(organizationUsers)
      .values({ orgId: org.id, userId: partnerAdminUser.id, roleId: ORG_VIEWER });
    const orgAdmin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN });
    // The account has a membership outside the organisation: not the organisation's to change.
    const disable = await orgAdmin.api.patch(`/users/${partnerAdminUser.id}`, { status: 'disabled' });
    expectOutsideAuthority(disable);
    expectOutsideAuthority(await orgAdmin.api.patch(`/users/${partnerAdminUser.id}`, { name: 'Pwned' }));
    expect(await accountOf(t, partnerAdminUser.id)).toMatchObject({ status: 'active', name: 'Test User' });
    expect((await adminApi.get('/users/me')).status).toBe(200);
    // Removing the viewer membership from its own organisation is within its power.
    expect((await orgAdmin.api.delete(`/users/${partnerAdminUser.id}`)).status).toBe(200);
    expect((await second.api.get('/users/me')).status).toBe(200);
  });

  it("a partner user manager cannot disable a Partner Admin by addressing the admin's low organisation membership", async () => {
    const { manager, admin, partner } = await partnerWithManager();
    await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN });
    const org = await createOrg(t, partner.id);
    await t.deps.db.insert(organizationUsers).values({ orgId: org.id, userId: admin.user.id, roleId: ORG_VIEWER });
    expectOutsideAuthority(
      await manager.api.patch(`/users/${admin.user.id}`, { status: 'disabled' }, { query: { orgId: org.id } }),
    );
    expectOutsideAuthority(
      await manager.api.patch(`/users/${admin.user.id}`, { name: 'Pwned' }, { query: { orgId: org.id } }),
    );
    expect(await accountOf(t, admin.user.id)).toMatchObject({ status: 'active' });
    expect((await admin.api.get('/users/me')).status).toBe(200);
  });

  it('an Organization Admin cannot disable an account that is also a member of another organisation', async () => {
    const { partner } = await partnerAdmin(t);
    const orgA = await createOrg(t, partner.id);
    const orgB = await createOrg(t, partner.id);
    const shared = await signedInOrgMember(t, orgA, { roleId: ORG_VIEWER });
    await t.deps.db.insert(organizationUsers).values({ orgId: orgB.id, userId: shared.user.id, roleId: ORG_VIEWER });
    const adminA = await signedInOrgMember(t, orgA, { roleId: ORG_ADMIN });
    expectOutsideAuthority(await adminA.api.patch(`/users/${shared.user.id}`, { status: 'disabled' }));
    expect((await shared.api.get('/users/me')).status).toBe(200);
    // An account only in this organisation is the admin's to disable.
    const own = await signedInOrgMember(t, orgA, { roleId: ORG_VIEWER });
    expect((await adminA.api.patch(`/users/${own.user.id}`, { status: 'disabled' })).status).toBe(200);
  });
});

describe('an organisation admin restricted to sites or device groups grants and administers no wider access', () => {
  it('invites only within its own sites and device groups (omitted lists mean all: refused)', async () => {
    const { partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const [s1, s2] = [await createSite(t, org.id), await createSite(t, org.id)];
    const [g1, g2] = [
      await createDeviceGroup(t, org.id, { siteId: s1.id }),
      await createDeviceGroup(t, org.id, { siteId: s2.id }),
    ];
    const restricted = await signedInOrgMember(t, org, {
      roleId: ORG_ADMIN,
      siteIds: [s1.id],
      deviceGroupIds: [g1.id],
    });
    const invite = (extra: object) =>
      restricted.api.post('/users/invite', { email: email('site'), name: 'S', roleId: ORG_VIEWER, ...extra });
    for (const extra of [
      {},
      { siteIds: [s2.id], deviceGroupIds: [g1.id] },
      { siteIds: [s1.id] },
      { siteIds: [s1.id], deviceGroupIds: [g1.id, g2.id] },
    ]) {
      expectCeiling(await invite(extra));
    }
    expect((await invite({ siteIds: [s1.id], deviceGroupIds: [g1.id] })).status).toBe(201);
  });

  it('cannot remove, re-role or disable a member with wider site access; can for one within its own', async () => {
    const { partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const s1 = await createSite(t, org.id);
    const restricted = await signedInOrgMember(t, org, { roleId: ORG_ADMIN, siteIds: [s1.id] });
    const everywhere = await signedInOrgMember(t, org, { roleId: ORG_VIEWER });
    expectCeiling(await restricted.api.post(`/users/${everywhere.user.id}/role`, { roleId: ORG_VIEWER }));
    expectOutsideAuthority(await restricted.api.patch(`/users/${everywhere.user.id}`, { status: 'disabled' }));
    expectCeiling(await restricted.api.delete(`/users/${everywhere.user.id}`));
    expect((await everywhere.api.get('/users/me')).status).toBe(200);
    const inside = await signedInOrgMember(t, org, { roleId: ORG_VIEWER, siteIds: [s1.id] });
    expect((await restricted.api.patch(`/users/${inside.user.id}`, { status: 'disabled' })).status).toBe(200);
    expect((await restricted.api.delete(`/users/${inside.user.id}`)).status).toBe(200);
  });
});

describe('forbidden_self_action: no changing your own role, removing or disabling yourself', () => {
  it('partner admin on itself: role, removal and disabling → 403 forbidden_self_action; renaming itself is fine', async () => {
    const { api, user, partner } = await partnerAdmin(t);
    await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN }); // another admin: last_admin is not the reason
    for (const r of [
      await api.post(`/users/${user.id}/role`, { roleId: PARTNER_VIEWER }),
      await api.post(`/users/${user.id}/role`, { roleId: PARTNER_ADMIN }),
      await api.delete(`/users/${user.id}`),
      await api.patch(`/users/${user.id}`, { status: 'disabled' }),
    ]) {
      expect(r.status, r.text).toBe(403);
      expect(r.body.code).toBe('forbidden_self_action');
    }
    expect((await api.get(`/users/${user.id}`)).body).toMatchObject({ roleId: PARTNER_ADMIN, status: 'active' });
    expect((await api.patch(`/users/${user.id}`, { name: 'Me Renamed' })).status).toBe(200);
  });

  it('organisation admin on itself: role and removal → 403 forbidden_self_action', async () => {
    const { partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const me = await signedInOrgMember(t, org, { roleId: ORG_ADMIN });
    expect((await me.api.post(`/users/${me.user.id}/role`, { roleId: ORG_VIEWER })).body.code).toBe(
      'forbidden_self_action',
    );
    expect((await me.api.delete(`/users/${me.user.id}`)).body.code).toBe('forbidden_self_action');
    expect((await me.api.patch(`/users/${me.user.id}`, { status: 'disabled' })).body.code).toBe(
      'forbidden_self_action',
    );
    expect((await me.api.get('/users/me')).body.roleId).toBe(ORG_ADMIN);
  });
});

/** Active members of the partner holding Partner Admin. */
async function activeAdmins(partnerId: string) {
  const rows = await t.deps.db
    .select({ id: users.id })
    .from(partnerUsers)
    .innerJoin(users, eq(users.id, partnerUsers.userId))
    .where(
      and(eq(partnerUsers.partnerId, partnerId), eq(partnerUsers.roleId, PARTNER_ADMIN), eq(users.status, 'active')),
    );
  return rows.map((r) => r.id);
}

async function twoAdmins() {
  const partner = await createPartner(t);
  const a = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN });
  const b = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN });
  return { partner, a, b };
}

const ACTIONS: Record<string, (api: ApiClient, targetId: string) => Promise<ApiResponse>> = {
  demote: (api, id) => api.post(`/users/${id}/role`, { roleId: PARTNER_VIEWER }),
  remove: (api, id) => api.delete(`/users/${id}`),
  disable: (api, id) => api.patch(`/users/${id}`, { status: 'disabled' }),
};

describe('last_admin: a partner always keeps an active holder of *:*', () => {
  describe.each(Object.keys(ACTIONS))('two admins who %s each other at once (Promise.all)', (action) => {
    it('exactly one succeeds, the other is refused, and one admin remains (5 rounds)', async () => {
      const refusals: string[] = [];
      for (let round = 0; round < 5; round++) {
        const { partner, a, b } = await twoAdmins();
        const [ra, rb] = await Promise.all([ACTIONS[action]!(a.api, b.user.id), ACTIONS[action]!(b.api, a.user.id)]);
        const ok = [ra, rb].filter((r) => r.status === 200);
        const refused = [ra, rb].filter((r) => r.status !== 200);
        expect(ok, `${ra.status} ${ra.text} | ${rb.status} ${rb.text}`).toHaveLength(1);
        // The loser either reached the guard (last_admin) or had already lost its own power (401 / 403) by the time it was heard.
        expect([401, 403]).toContain(refused[0]!.status);
        if (refused[0]!.status === 403)
          expect(['last_admin', 'forbidden', 'permission_ceiling']).toContain(refused[0]!.body.code);
        refusals.push(refused[0]!.body.code ?? String(refused[0]!.status));
        expect(await activeAdmins(partner.id)).toHaveLength(1);
      }
      // eslint-disable-next-line no-console
      if (process.env.TEST_VERBOSE) console.log(action, refusals);
    });
  });

  /**
   * Fires both requests while the database is held, so both pass authentication (each still an admin) before
   * either change commits. PostgreSQL: a second connection holds the partner row lock until both requests wait on
   * it. PGlite runs one statement at a time in arrival order: an open transaction holds every query back.
   */
  async function heldRace(partnerId: string, fire: () => Promise<ApiResponse[]>): Promise<ApiResponse[]> {
    if (t.deps.database.kind === 'postgres') {
      const pg = await import('pg');
      const holder = new pg.default.Client({ connectionString: t.testDb.url });
      await holder.connect();
      try {
        await holder.query('begin');
        await holder.query('select id from partners where id = $1 for update', [partnerId]);
        const racing = fire();
        for (let i = 0; ; i++) {
          const { rows } = await holder.query(
            "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()",
          );
          if (rows[0].n >= 2) break;
          if (i > 300) throw new Error('the requests never reached the partner lock');
          await new Promise((r) => setTimeout(r, 10));
        }
        await holder.query('commit');
        return await racing;
      } finally {
        await holder.end();
      }
    }
    let release!: () => void;
    let started!: () => void;
    const begun = new Promise<void>((r) => (started = r));
    const held = t.deps.db.transaction(async () => {
      started();
      await new Promise<void>((r) => (release = r));
    });
    await begun;
    const racing = fire();
    await new Promise((r) => setTimeout(r, 300)); // both requests queue their session query behind the open transaction
    release();
    await held;
    return racing;
  }

  it.each(Object.keys(ACTIONS))(
    'two admins who %s each other, both heard before either commits: the second is refused with 403 last_admin',
    async (action) => {
      const { partner, a, b } = await twoAdmins();
      const rs = await heldRace(partner.id, () =>
        Promise.all([ACTIONS[action]!(a.api, b.user.id), ACTIONS[action]!(b.api, a.user.id)]),
      );
      expect(rs.map((r) => r.status).sort(), rs.map((r) => r.text).join(' | ')).toEqual([200, 403]);
      expect(rs.find((r) => r.status === 403)!.body.code).toBe('last_admin');
      expect(await activeAdmins(partner.id)).toHaveLength(1);
    },
  );
});

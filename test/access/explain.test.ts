// "Why can X do Y on Z?": GET /access/explain and GET /access/who-can through HTTP, each rule a named
// property. That they agree with enforcement for random worlds is explain-agrees.test.ts.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { createRoleChain } from '../support/access.js';
import {
  addOrgMember,
  addPartnerMember,
  createDevice,
  createDeviceGroup,
  createOrg,
  createSite,
  createUser,
  onboardingTenant,
  signedInOrgMember,
  signedInPartnerMember,
  type OnboardingTenant,
} from '../support/fixtures.js';
import { createServiceAccount } from '../support/service-accounts.js';
import {
  expectError,
  expectStatus,
  ORG_TECH,
  ORG_VIEWER,
  PARTNER_TECH,
  PARTNER_VIEWER,
} from '../onboarding/helpers.js';

let t: TestApp;
let w: OnboardingTenant;
let site1: { id: string };
let site2: { id: string };
let group1: { id: string };
let device1: { id: string };
let device2: { id: string };

beforeAll(async () => {
  t = await startApp();
  w = await onboardingTenant(t);
  site1 = await createSite(t, w.orgs[0].id);
  site2 = await createSite(t, w.orgs[0].id);
  group1 = await createDeviceGroup(t, w.orgs[0].id, { siteId: site1.id });
  device1 = await createDevice(t, w.orgs[0], site1.id, { groupIds: [group1.id] });
  device2 = await createDevice(t, w.orgs[0], site2.id);
});
afterAll(async () => t?.close());

const explain = (q: Record<string, string | undefined>) => w.admin.api.get('/access/explain', { query: q });
const stepOf = (reasons: { step: string }[], step: string) =>
  reasons.find((r) => r.step === step) as
    | { step: string; allowed: boolean; detail: string; roleId?: string; roleName?: string; via?: string }
    | undefined;

describe('explain names the role of the chain that grants the permission', () => {
  it('a permission held two levels up is granted by that ancestor, and the answer says so', async () => {
    const { leaf, chain } = await createRoleChain(t, { kind: 'organization', orgId: w.orgs[0].id }, [
      { permissions: ['devices:execute'] },
      { permissions: [] },
      { permissions: ['devices:read'] },
    ]);
    const member = await signedInOrgMember(t, w.orgs[0], { roleId: leaf.id });
    const res = expectStatus(
      await explain({
        userId: member.user.id,
        permission: 'devices:execute',
        resourceType: 'device',
        resourceId: device1.id,
      }),
      200,
    );
    expect(res.body).toMatchObject({
      allowed: true,
      deniedBy: null,
      subject: { type: 'user', id: member.user.id },
      resource: { type: 'device', id: device1.id, orgId: w.orgs[0].id },
    });
    const role = stepOf(res.body.reasons, 'role')!;
    expect(role).toMatchObject({ allowed: true, roleId: chain[0]!.id });
    expect(role.detail).toMatch(/inherited/);
    expect(res.body.reasons.map((r: { step: string }) => r.step)).toEqual([
      'account',
      'membership',
      'ip_allowlist',
      'mfa',
      'role',
      'organization_access',
      'site',
      'device_group',
    ]);
    // The permission the leaf holds itself is granted by the leaf.
    const own = expectStatus(
      await explain({
        userId: member.user.id,
        permission: 'devices:read',
        resourceType: 'device',
        resourceId: device1.id,
      }),
      200,
    );
    expect(stepOf(own.body.reasons, 'role')).toMatchObject({ allowed: true, roleId: leaf.id });
    // And one nobody in the chain holds is denied at the role step.
    const none = expectStatus(
      await explain({
        userId: member.user.id,
        permission: 'devices:delete',
        resourceType: 'device',
        resourceId: device1.id,
      }),
      200,
    );
    expect(none.body).toMatchObject({ allowed: false, deniedBy: 'role' });
  });

  it('a Partner Admin is granted by *:*; a partner member reaches the organisation by standing access', async () => {
    const res = expectStatus(
      await explain({
        userId: w.admin.user.id,
        permission: 'devices:execute',
        resourceType: 'device',
        resourceId: device1.id,
      }),
      200,
    );
    expect(res.body.allowed).toBe(true);
    expect(stepOf(res.body.reasons, 'role')!.detail).toMatch(/\*:\*/);
    expect(stepOf(res.body.reasons, 'organization_access')).toMatchObject({ allowed: true, via: 'standing_all' });
    const sel = expectStatus(
      await explain({
        userId: w.selected.user.id,
        permission: 'devices:read',
        resourceType: 'device',
        resourceId: device1.id,
      }),
      200,
    );
    expect(stepOf(sel.body.reasons, 'organization_access')).toMatchObject({ allowed: true, via: 'standing_selected' });
  });
});

describe('explain names the step that denies', () => {
  it('organisation access: a member with selected organisations asked about another one', async () => {
    const other = await createDevice(t, w.orgs[1], (await createSite(t, w.orgs[1].id)).id);
    const res = expectStatus(
      await explain({
        userId: w.selected.user.id,
        permission: 'devices:read',
        resourceType: 'device',
        resourceId: other.id,
      }),
      200,
    );
    expect(res.body).toMatchObject({ allowed: false, deniedBy: 'organization_access' });
  });

  it('site and device-group restrictions of an organisation member', async () => {
    const bySite = await signedInOrgMember(t, w.orgs[0], { roleId: ORG_TECH, siteIds: [site1.id] });
    expect(
      expectStatus(
        await explain({
          userId: bySite.user.id,
          permission: 'devices:read',
          resourceType: 'device',
          resourceId: device1.id,
        }),
        200,
      ).body.allowed,
    ).toBe(true);
    expect(
      expectStatus(
        await explain({
          userId: bySite.user.id,
          permission: 'devices:read',
          resourceType: 'device',
          resourceId: device2.id,
        }),
        200,
      ).body,
    ).toMatchObject({ allowed: false, deniedBy: 'site' });
    const byGroup = await signedInOrgMember(t, w.orgs[0], { roleId: ORG_TECH, deviceGroupIds: [group1.id] });
    expect(
      expectStatus(
        await explain({
          userId: byGroup.user.id,
          permission: 'devices:read',
          resourceType: 'device',
          resourceId: device2.id,
        }),
        200,
      ).body,
    ).toMatchObject({ allowed: false, deniedBy: 'device_group' });
    expect(
      expectStatus(
        await explain({
          userId: byGroup.user.id,
          permission: 'sites:read',
          resourceType: 'device_group',
          resourceId: group1.id,
        }),
        200,
      ).body.allowed,
    ).toBe(true);
  });

  it('MFA policy: a Force-MFA role without an enrolled factor is held at 428, and explain says so', async () => {
    const { leaf } = await createRoleChain(t, { kind: 'organization', orgId: w.orgs[0].id }, [
      { permissions: ['devices:read'], forceMfa: true },
      { permissions: [] },
    ]);
    const member = await signedInOrgMember(t, w.orgs[0], { roleId: leaf.id, mfaEnabled: false });
    expectError(await member.api.get(`/devices/${device1.id}`), 428, 'mfa_enrollment_required');
    expect(
      expectStatus(
        await explain({
          userId: member.user.id,
          permission: 'devices:read',
          resourceType: 'device',
          resourceId: device1.id,
        }),
        200,
      ).body,
    ).toMatchObject({ allowed: false, deniedBy: 'mfa' });
  });

  it('account: a disabled user is denied at the first step', async () => {
    const member = await signedInOrgMember(t, w.orgs[0], { roleId: ORG_TECH });
    await t.deps.db.execute(sql`update users set status = 'disabled' where id = ${member.user.id}`);
    expect(
      expectStatus(
        await explain({
          userId: member.user.id,
          permission: 'devices:read',
          resourceType: 'device',
          resourceId: device1.id,
        }),
        200,
      ).body,
    ).toMatchObject({ allowed: false, deniedBy: 'account' });
  });

  it('membership: a member of another organisation of the partner only', async () => {
    const res = expectStatus(
      await explain({
        userId: w.orgAdmins[1].user.id,
        permission: 'devices:read',
        resourceType: 'device',
        resourceId: device1.id,
      }),
      200,
    );
    expect(res.body).toMatchObject({ allowed: false, deniedBy: 'membership', memberships: [] });
  });

  it('each membership is decided: a partner member who is also an organisation member is allowed by the one that allows', async () => {
    const user = await createUser(t);
    await addPartnerMember(t, { partnerId: w.partner.id, userId: user.id, roleId: PARTNER_VIEWER, orgAccess: 'none' });
    await addOrgMember(t, { orgId: w.orgs[0].id, userId: user.id, roleId: ORG_VIEWER });
    const res = expectStatus(
      await explain({ userId: user.id, permission: 'devices:read', resourceType: 'device', resourceId: device1.id }),
      200,
    );
    expect(res.body.allowed).toBe(true);
    expect(
      res.body.memberships.map((m: { scope: string; allowed: boolean; deniedBy: string | null }) => [
        m.scope,
        m.allowed,
        m.deniedBy,
      ]),
    ).toEqual([
      ['partner', false, 'organization_access'],
      ['organization', true, null],
    ]);
  });
});

describe("explain and who-can stay inside the caller's scope", () => {
  it("a record outside the caller's scope is 404; a user with no membership there is 404; partner members without full access are refused", async () => {
    const otherPartner = await onboardingTenant(t);
    const foreign = await createDevice(t, otherPartner.orgs[0], (await createSite(t, otherPartner.orgs[0].id)).id);
    expectError(
      await explain({
        userId: w.tech.user.id,
        permission: 'devices:read',
        resourceType: 'device',
        resourceId: foreign.id,
      }),
      404,
      'not_found',
    );
    expectError(
      await explain({
        userId: otherPartner.admin.user.id,
        permission: 'devices:read',
        resourceType: 'device',
        resourceId: device1.id,
      }),
      404,
      'not_found',
    );
    expectError(
      await w.admin.api.get('/access/who-can', {
        query: { permission: 'devices:read', resourceType: 'device', resourceId: foreign.id },
      }),
      404,
      'not_found',
    );
    expectError(
      await w.selected.api.get('/access/who-can', {
        query: { permission: 'devices:read', resourceType: 'device', resourceId: device1.id },
      }),
      403,
      'full_org_access_required',
    );
    // An organisation admin asks about its own organisation (and sees the partner's members who reach it).
    const mine = expectStatus(
      await w.orgAdmins[0].api.get('/access/explain', {
        query: { userId: w.tech.user.id, permission: 'devices:read', resourceType: 'device', resourceId: device1.id },
      }),
      200,
    );
    expect(mine.body.allowed).toBe(true);
    expectError(
      await w.orgAdmins[1].api.get('/access/explain', {
        query: { userId: w.tech.user.id, permission: 'devices:read', resourceType: 'device', resourceId: device1.id },
      }),
      404,
      'not_found',
    );
    // An organisation viewer lacks users:read.
    expectError(
      await w.orgViewer.api.get('/access/explain', {
        query: { userId: w.tech.user.id, permission: 'devices:read', resourceType: 'device', resourceId: device1.id },
      }),
      403,
      'forbidden',
    );
  });

  it('the query is validated: one subject exactly, a catalogued permission, a known resource type', async () => {
    const base = { permission: 'devices:read', resourceType: 'device', resourceId: device1.id };
    expectError(await explain(base), 400, 'validation_failed');
    expectError(
      await explain({ ...base, userId: w.tech.user.id, serviceAccountId: w.tech.user.id }),
      400,
      'validation_failed',
    );
    expectError(
      await explain({ ...base, userId: w.tech.user.id, permission: 'devices:fly' }),
      400,
      'validation_failed',
    );
    expectError(await explain({ ...base, userId: w.tech.user.id, resourceType: 'galaxy' }), 400, 'validation_failed');
  });
});

describe('who-can lists every user and service account that can, with the reasons, page by page', () => {
  it('on a device of a site-restricted organisation: exactly the members and accounts explain allows', async () => {
    const org = await createOrg(t, w.partner.id);
    const s1 = await createSite(t, org.id);
    const s2 = await createSite(t, org.id);
    const dev = await createDevice(t, org, s1.id);
    const inSite = await signedInOrgMember(t, org, { roleId: ORG_TECH, siteIds: [s1.id] });
    const outSite = await signedInOrgMember(t, org, { roleId: ORG_TECH, siteIds: [s2.id] });
    const viewer = await signedInOrgMember(t, org, { roleId: ORG_VIEWER });
    const selectedElsewhere = await signedInPartnerMember(t, w.partner.id, {
      roleId: PARTNER_TECH,
      orgAccess: 'selected',
      orgIds: [w.orgs[0].id],
    });
    const orgAccount = await createServiceAccount(w.admin.api, { orgId: org.id, roleId: ORG_TECH });
    const viewerAccount = await createServiceAccount(w.admin.api, { orgId: org.id, roleId: ORG_VIEWER });

    const seen: { subjectType: string; id: string; reasons: { step: string; allowed: boolean }[] }[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = expectStatus(
        await w.admin.api.get('/access/who-can', {
          query: { permission: 'devices:write', resourceType: 'device', resourceId: dev.id, limit: 2, cursor },
        }),
        200,
      );
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.data);
      cursor = res.body.nextCursor ?? undefined;
      pages++;
    } while (cursor && pages < 50);
    const ids = seen.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toContain(inSite.user.id);
    expect(ids).toContain(orgAccount.id);
    for (const absent of [outSite.user.id, viewer.user.id, selectedElsewhere.user.id, viewerAccount.id])
      expect(ids).not.toContain(absent);
    // Every listed subject is one explain allows, and the reasons are explain's.
    for (const row of seen) {
      expect(row.reasons.every((r) => r.allowed)).toBe(true);
      const q = row.subjectType === 'user' ? { userId: row.id } : { serviceAccountId: row.id };
      const ex = expectStatus(
        await explain({ ...q, permission: 'devices:write', resourceType: 'device', resourceId: dev.id }),
        200,
      );
      expect(ex.body.allowed).toBe(true);
      expect(ex.body.reasons).toEqual(row.reasons);
    }
    // People come first, then accounts.
    const firstAccount = seen.findIndex((r) => r.subjectType === 'service_account');
    expect(seen.slice(firstAccount).every((r) => r.subjectType === 'service_account')).toBe(true);
  });
});

describe('who-can is bounded: an attacker-shaped tenant with 100k members answers one page', () => {
  it('100,000 organisation members holding the permission: a page of 50 and a cursor, the next page disjoint', async () => {
    const org = await createOrg(t, w.partner.id);
    const site = await createSite(t, org.id);
    const dev = await createDevice(t, org, site.id);
    // Set-based inserts (one statement each), as an attacker's bulk provisioning would leave the tables.
    await t.deps.db.execute(
      sql`insert into users (email, name, status) select 'bulk-' || ${org.id}::text || '-' || g || '@example.test', 'Bulk ' || g, 'active' from generate_series(1, 100000) g`,
    );
    await t.deps.db.execute(
      sql`insert into organization_users (org_id, user_id, role_id) select ${org.id}, u.id, ${ORG_TECH} from users u where u.email like ${`bulk-${org.id}-%`}`,
    );
    const first = expectStatus(
      await w.admin.api.get('/access/who-can', {
        query: { permission: 'devices:read', resourceType: 'device', resourceId: dev.id },
      }),
      200,
    );
    expect(first.body.data).toHaveLength(50);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = expectStatus(
      await w.admin.api.get('/access/who-can', {
        query: {
          permission: 'devices:read',
          resourceType: 'device',
          resourceId: dev.id,
          cursor: first.body.nextCursor ?? undefined,
          limit: 200,
        },
      }),
      200,
    );
    expect(second.body.data).toHaveLength(200);
    const a = new Set(first.body.data.map((r: { id: string }) => r.id));
    expect(second.body.data.some((r: { id: string }) => a.has(r.id))).toBe(false);
    // Ids ascend across the pages (keyset order), so no member is skipped or repeated.
    const all = [...first.body.data, ...second.body.data].map((r: { id: string }) => r.id);
    expect([...all].sort()).toEqual(all);
  }, 120_000);
});

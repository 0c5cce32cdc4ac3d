// Service accounts: CRUD through HTTP, the role under the creator's ceiling and never *:*, the one
// by-id rule (a partner caller reaches an organisation's account without ?orgId=), tenant isolation, audit.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { errorBody } from '../support/client.js';
import {
  auditRecords,
  createOrg,
  type OnboardingTenant,
  onboardingTenant,
  signedInOrgMember,
} from '../support/fixtures.js';
import { createServiceAccount, issueKey } from '../support/service-accounts.js';
import {
  expectError,
  ORG_ADMIN,
  ORG_TECH,
  ORG_VIEWER,
  PARTNER_ADMIN,
  PARTNER_TECH,
  PARTNER_VIEWER,
} from '../onboarding/helpers.js';

let t: TestApp;
let w: OnboardingTenant;
beforeAll(async () => {
  t = await startApp();
  w = await onboardingTenant(t);
});
afterAll(async () => t?.close());

describe('a service account is created in a scope with a role, and read back', () => {
  it('POST /service-accounts → 201 with clientId, tenant, role; GET, list and audit agree', async () => {
    const res = await w.admin.api.post('/service-accounts', {
      name: 'PSA sync',
      roleId: PARTNER_VIEWER,
      description: 'Ticketing',
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      id: expect.any(String),
      clientId: expect.stringMatching(/^sa_[0-9A-Za-z]{24}$/),
      partnerId: w.partner.id,
      orgId: null,
      name: 'PSA sync',
      roleId: PARTNER_VIEWER,
      roleName: 'Partner Viewer',
      description: 'Ticketing',
      disabled: false,
      activeKeyCount: 0,
    });
    const got = await w.admin.api.get(`/service-accounts/${res.body.id}`);
    expect(got.body).toEqual(res.body);
    const list = await w.admin.api.get('/service-accounts');
    expect(list.body.data.map((a: { id: string }) => a.id)).toContain(res.body.id);
    const [record] = await auditRecords(t, 'service_account.create', res.body.id);
    expect(record).toMatchObject({ actorUserId: w.admin.user.id, partnerId: w.partner.id, orgId: null });
  });

  it('a partner caller creates one in an organisation (orgId in the body) and reaches it by id without ?orgId=', async () => {
    const sa = await createServiceAccount(w.admin.api, { orgId: w.orgs[0].id, roleId: ORG_TECH });
    expect(sa).toMatchObject({ orgId: w.orgs[0].id, partnerId: w.partner.id });
    expect((await w.admin.api.get(`/service-accounts/${sa.id}`)).status).toBe(200);
    expect((await w.admin.api.get(`/service-accounts/${sa.id}`, { query: { orgId: w.orgs[0].id } })).status).toBe(200);
    // ?orgId= must agree with the record (the one by-id rule).
    expectError(
      await w.admin.api.get(`/service-accounts/${sa.id}`, { query: { orgId: w.orgs[1].id } }),
      404,
      'not_found',
    );
    // Listed with ?orgId=, not among the partner's own.
    expect(
      (await w.admin.api.get('/service-accounts', { query: { orgId: w.orgs[0].id } })).body.data.map(
        (a: { id: string }) => a.id,
      ),
    ).toContain(sa.id);
    expect((await w.admin.api.get('/service-accounts')).body.data.map((a: { id: string }) => a.id)).not.toContain(
      sa.id,
    );
    // The organisation's own admin sees it too (Organization Admin reads api_keys).
    expect((await w.orgAdmins[0].api.get(`/service-accounts/${sa.id}`)).status).toBe(200);
  });

  it('names are unique per scope, whatever the case (409 name_taken)', async () => {
    await createServiceAccount(w.admin.api, { name: 'Backup Agent', roleId: PARTNER_VIEWER });
    expectError(
      await w.admin.api.post('/service-accounts', { name: 'backup agent', roleId: PARTNER_VIEWER }),
      409,
      'name_taken',
    );
    // Another scope may use it.
    await createServiceAccount(w.admin.api, { name: 'Backup Agent', roleId: ORG_VIEWER, orgId: w.orgs[0].id });
  });

  it('keyset paging: pages of 2 cover every account once, newest first', async () => {
    const org = await createOrg(t, w.partner.id);
    const made = [];
    for (let i = 0; i < 5; i++)
      made.push((await createServiceAccount(w.admin.api, { orgId: org.id, roleId: ORG_VIEWER })).id);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await w.admin.api.get('/service-accounts', { query: { orgId: org.id, limit: 2, cursor } });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.data.map((a: { id: string }) => a.id));
      cursor = res.body.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual([...made].reverse());
  });
});

describe('the role of a service account is under the creator’s ceiling and never *:*', () => {
  // Only the system Partner Admin role holds *:* (a custom role can neither hold it nor inherit it: the roles module).
  it('nobody can give a service account *:* (Partner Admin), not even a Partner Admin', async () => {
    const res = await w.admin.api.post('/service-accounts', { name: 'root', roleId: PARTNER_ADMIN });
    expectError(res, 400, 'validation_failed');
    expect(res.body.details.fieldErrors.roleId[0]).toMatch(/\*:\*/);
    const sa = await createServiceAccount(w.admin.api, { roleId: PARTNER_VIEWER });
    expectError(
      await w.admin.api.patch(`/service-accounts/${sa.id}`, { roleId: PARTNER_ADMIN }),
      400,
      'validation_failed',
    );
  });

  it('a caller cannot create one with more than it holds (403 permission_ceiling)', async () => {
    // api_keys:write and read only: its holder cannot hand out Organization Technician's device permissions.
    const keyAdmin = await w.admin.api.post('/roles', {
      name: `Key admin ${randomUUID().slice(0, 6)}`,
      orgId: w.orgs[0].id,
      permissions: [
        { resource: 'api_keys', action: 'write' },
        { resource: 'api_keys', action: 'read' },
        { resource: 'devices', action: 'read' },
      ],
    });
    expect(keyAdmin.status, keyAdmin.text).toBe(201);
    const member = await signedInOrgMember(t, w.orgs[0], { roleId: keyAdmin.body.id });
    const refused = await member.api.post('/service-accounts', { name: 'too strong', roleId: ORG_TECH });
    expectError(refused, 403, 'permission_ceiling');
    expect(errorBody(refused).missing).toContain('devices:execute');
    // Within the ceiling: a role with devices:read only.
    const reader = await w.admin.api.post('/roles', {
      name: `Reader ${randomUUID().slice(0, 6)}`,
      orgId: w.orgs[0].id,
      permissions: [{ resource: 'devices', action: 'read' }],
    });
    const ok = await member.api.post('/service-accounts', { name: 'reader', roleId: reader.body.id });
    expect(ok.status, ok.text).toBe(201);
    // Raising it later is refused the same way.
    expectError(
      await member.api.patch(`/service-accounts/${ok.body.id}`, { roleId: ORG_TECH }),
      403,
      'permission_ceiling',
    );
    expect(
      (await member.api.patch(`/service-accounts/${ok.body.id}`, { name: 'renamed', description: null })).status,
    ).toBe(200);
  });

  it('a member cannot administer an account whose role exceeds its own (ceiling on the target too)', async () => {
    const strong = await createServiceAccount(w.admin.api, { orgId: w.orgs[0].id, roleId: ORG_ADMIN });
    const keyAdmin = await w.admin.api.post('/roles', {
      name: `Key admin2 ${randomUUID().slice(0, 6)}`,
      orgId: w.orgs[0].id,
      permissions: [
        { resource: 'api_keys', action: 'write' },
        { resource: 'api_keys', action: 'read' },
      ],
    });
    const member = await signedInOrgMember(t, w.orgs[0], { roleId: keyAdmin.body.id });
    expectError(await member.api.delete(`/service-accounts/${strong.id}`), 403, 'permission_ceiling');
    expectError(
      await member.api.post(`/service-accounts/${strong.id}/keys`, { name: 'mine now' }),
      403,
      'permission_ceiling',
    );
    expect((await member.api.get(`/service-accounts/${strong.id}`)).status).toBe(200);
  });

  it('a member restricted to sites cannot create an organisation-wide identity', async () => {
    const site = await w.admin.api.post('/orgs/sites', {
      orgId: w.orgs[0].id,
      name: `Site ${randomUUID().slice(0, 6)}`,
    });
    const perms = [
      { resource: 'api_keys', action: 'write' },
      { resource: 'api_keys', action: 'read' },
      { resource: 'organizations', action: 'read' },
    ];
    const keyAdmin = await w.admin.api.post('/roles', {
      name: `Site keys ${randomUUID().slice(0, 6)}`,
      orgId: w.orgs[0].id,
      permissions: perms,
    });
    const small = await w.admin.api.post('/roles', {
      name: `Org reader ${randomUUID().slice(0, 6)}`,
      orgId: w.orgs[0].id,
      permissions: [perms[2]!],
    });
    const restricted = await signedInOrgMember(t, w.orgs[0], { roleId: keyAdmin.body.id, siteIds: [site.body.id] });
    expectError(
      await restricted.api.post('/service-accounts', { name: 'site bot', roleId: small.body.id }),
      403,
      'permission_ceiling',
    );
    // The same role without the site restriction may (control).
    const unrestricted = await signedInOrgMember(t, w.orgs[0], { roleId: keyAdmin.body.id });
    expect((await unrestricted.api.post('/service-accounts', { name: 'org bot', roleId: small.body.id })).status).toBe(
      201,
    );
  });

  it('the role must be one of the scope’s roles: an organisation role for a partner account is refused', async () => {
    expectError(
      await w.admin.api.post('/service-accounts', { name: 'mismatch', roleId: ORG_VIEWER }),
      400,
      'validation_failed',
    );
    expectError(
      await w.admin.api.post('/service-accounts', { name: 'mismatch', roleId: PARTNER_TECH, orgId: w.orgs[0].id }),
      400,
      'validation_failed',
    );
  });
});

describe('permissions and tenant isolation of the management routes', () => {
  it('Partner Technician and Viewer hold neither api_keys:read nor write (403 forbidden)', async () => {
    expectError(await w.tech.api.get('/service-accounts'), 403, 'forbidden');
    expectError(await w.viewer.api.post('/service-accounts', { name: 'x', roleId: PARTNER_VIEWER }), 403, 'forbidden');
  });

  it('Organization Admin reads but cannot create (api_keys:write is not in the seed)', async () => {
    expect((await w.orgAdmins[0].api.get('/service-accounts')).status).toBe(200);
    expectError(
      await w.orgAdmins[0].api.post('/service-accounts', { name: 'x', roleId: ORG_VIEWER }),
      403,
      'forbidden',
    );
  });

  it("organisation B's admin cannot see or touch organisation A's account (404), nor a partner-owned one", async () => {
    const inA = await createServiceAccount(w.admin.api, { orgId: w.orgs[0].id, roleId: ORG_VIEWER });
    const partnerOwned = await createServiceAccount(w.admin.api, { roleId: PARTNER_VIEWER });
    const b = w.orgAdmins[1].api;
    for (const id of [inA.id, partnerOwned.id]) {
      expectError(await b.get(`/service-accounts/${id}`), 404, 'not_found');
      expectError(await b.get(`/service-accounts/${id}/keys`), 404, 'not_found');
    }
    expect((await b.get('/service-accounts')).body.data.map((a: { id: string }) => a.id)).not.toContain(inA.id);
    expectError(await b.get('/service-accounts', { query: { orgId: w.orgs[0].id } }), 404, 'not_found');
  });

  it('another partner reaches nothing (404), and a partner member with selected organisations is held at full_org_access_required', async () => {
    const inA = await createServiceAccount(w.admin.api, { orgId: w.orgs[0].id, roleId: ORG_VIEWER });
    const other = await onboardingTenant(t);
    expectError(await other.admin.api.get(`/service-accounts/${inA.id}`), 404, 'not_found');
    expectError(await w.selected.api.get('/service-accounts'), 403, 'full_org_access_required');
  });
});

describe('change and delete', () => {
  it('PATCH changes name, role, description and disabled; audited with what changed', async () => {
    const sa = await createServiceAccount(w.admin.api, { roleId: PARTNER_VIEWER });
    const res = await w.admin.api.patch(`/service-accounts/${sa.id}`, {
      name: 'Renamed',
      roleId: PARTNER_TECH,
      description: 'new',
      disabled: true,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      name: 'Renamed',
      roleId: PARTNER_TECH,
      roleName: 'Partner Technician',
      description: 'new',
      disabled: true,
    });
    const [record] = await auditRecords(t, 'service_account.update', sa.id);
    expect(record!.details).toMatchObject({
      changed: ['description', 'disabled', 'name', 'roleId'],
      roleId: PARTNER_TECH,
      disabled: true,
    });
    expectError(await w.admin.api.patch(`/service-accounts/${sa.id}`, {}), 400, 'validation_failed');
  });

  it('DELETE removes the account and its keys; a role held by an account cannot be deleted', async () => {
    const role = await w.admin.api.post('/roles', {
      name: `Held ${randomUUID().slice(0, 6)}`,
      permissions: [{ resource: 'devices', action: 'read' }],
    });
    const sa = await createServiceAccount(w.admin.api, { roleId: role.body.id });
    await issueKey(w.admin.api, sa.id);
    const refused = await w.admin.api.delete(`/roles/${role.body.id}`);
    expectError(refused, 400, 'role_has_users');
    expect(errorBody(refused).serviceAccountCount).toBe(1);
    expect((await w.admin.api.delete(`/service-accounts/${sa.id}`)).status).toBe(200);
    expectError(await w.admin.api.get(`/service-accounts/${sa.id}`), 404, 'not_found');
    expect((await auditRecords(t, 'service_account.delete', sa.id)).length).toBe(1);
    expect((await w.admin.api.delete(`/roles/${role.body.id}`)).status).toBe(200);
  });

  it('an unknown id is 404', async () => {
    expectError(await w.admin.api.get(`/service-accounts/${randomUUID()}`), 404, 'not_found');
    expectError(await w.admin.api.delete(`/service-accounts/${randomUUID()}/keys/${randomUUID()}`), 404, 'not_found');
  });
});

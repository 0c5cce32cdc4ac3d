// SCIM Groups: create, list, get, PATCH members in Entra ID's and Okta's shapes, delete; a group mapped
// to a role gives its members that role, within the token creator's permissions and never *:*.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { auditRecords, onboardingTenant, type OnboardingTenant } from '../support/fixtures.js';
import { expectScimError, GROUP_EXT, issueScimToken, PATCH_OP, ScimClient } from '../support/scim.js';
import { ORG_ADMIN, ORG_TECH, ORG_VIEWER } from '../onboarding/helpers.js';

let t: TestApp;
let w: OnboardingTenant;
let scim: ScimClient;
beforeAll(async () => {
  t = await startApp();
  w = await onboardingTenant(t);
  // Made by the organisation's own admin: its permissions are the ceiling.
  scim = new ScimClient(t.baseUrl, (await issueScimToken(w.orgAdmins[0].api, { defaultRoleId: ORG_VIEWER })).token);
}, 60_000);
afterAll(async () => t?.close());

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const tag = () => randomBytes(4).toString('hex');
async function newUser() {
  const res = await scim.post('/Users', { schemas: [USER], userName: `g.${tag()}@example.test` });
  expect(res.status, res.text).toBe(201);
  const [rec] = (await auditRecords(t, 'scim.user.create')).filter(
    (r) => (r.details as { scimId?: string }).scimId === res.body.id,
  );
  return { id: res.body.id as string, userId: rec!.resourceId! };
}
const roleOf = async (userId: string) => (await w.orgAdmins[0].api.get(`/users/${userId}`)).body.roleId as string;

describe('Entra ID group sequence: create, look up without members, add and remove members, rename, delete', () => {
  it('replays it', async () => {
    const [u1, u2] = [await newUser(), await newUser()];
    const name = `Entra Group ${tag()}`;
    const created = await scim.post('/Groups', {
      schemas: [GROUP],
      externalId: randomBytes(16).toString('hex'),
      displayName: name,
      meta: { resourceType: 'Group' },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      displayName: name,
      members: [],
      meta: { resourceType: 'Group', version: 'W/"1"' },
    });
    const id = created.body.id as string;
    const found = await scim.get(
      `/Groups?excludedAttributes=members&filter=${encodeURIComponent(`displayName eq "${name}"`)}`,
    );
    expect(found.body.totalResults).toBe(1);
    expect(found.body.Resources[0]).not.toHaveProperty('members');
    const added = await scim.patch(`/Groups/${id}`, {
      schemas: [PATCH_OP],
      Operations: [
        {
          op: 'Add',
          path: 'members',
          value: [
            { $ref: null, value: u1.id },
            { $ref: null, value: u2.id },
          ],
        },
      ],
    });
    expect(added.status, added.text).toBe(200);
    expect(added.body.members.map((m: { value: string }) => m.value).sort()).toEqual([u1.id, u2.id].sort());
    // Entra removes with a value list rather than a path filter.
    const removed = await scim.patch(`/Groups/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Remove', path: 'members', value: [{ $ref: null, value: u1.id }] }],
    });
    expect(removed.body.members.map((m: { value: string }) => m.value)).toEqual([u2.id]);
    expect((await scim.get(`/Users/${u2.id}`)).body.groups).toEqual([
      expect.objectContaining({ value: id, display: name }),
    ]);
    expect(
      (await scim.get(`/Groups?filter=${encodeURIComponent(`members[value eq "${u2.id}"]`)}`)).body.Resources.map(
        (g: { id: string }) => g.id,
      ),
    ).toEqual([id]);
    const renamed = await scim.patch(`/Groups/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Replace', path: 'displayName', value: `${name} renamed` }],
    });
    expect(renamed.body.displayName).toBe(`${name} renamed`);
    expect((await scim.delete(`/Groups/${id}`)).status).toBe(204);
    expectScimError(await scim.get(`/Groups/${id}`), 404);
  });
});

describe('Okta group sequence: create with members, rename without a path, remove a member by filter, page through', () => {
  it('replays it', async () => {
    const u = await newUser();
    const name = `Okta Group ${tag()}`;
    const created = await scim.post('/Groups', {
      schemas: [GROUP],
      displayName: name,
      members: [{ value: u.id, display: 'x' }],
    });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as string;
    const renamed = await scim.patch(`/Groups/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', value: { id, displayName: `${name} 2` } }],
    });
    expect(renamed.body.displayName).toBe(`${name} 2`);
    const out = await scim.patch(`/Groups/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'remove', path: `members[value eq "${u.id}"]` }],
    });
    expect(out.body.members).toEqual([]);
    const page = await scim.get('/Groups?startIndex=1&count=100');
    expect(page.body.Resources.map((g: { id: string }) => g.id)).toContain(id);
    expectScimError(
      await scim.post('/Groups', { schemas: [GROUP], displayName: `${name} 2`.toUpperCase() }),
      409,
      'uniqueness',
    );
  });
});

describe('group → role mapping under the ceiling', () => {
  it('members of a group mapped to Organization Technician hold it; leaving the group restores the default role', async () => {
    const u = await newUser();
    expect(await roleOf(u.userId)).toBe(ORG_VIEWER);
    const g = await scim.post('/Groups', {
      schemas: [GROUP, GROUP_EXT],
      displayName: `Techs ${tag()}`,
      [GROUP_EXT]: { roleId: ORG_TECH },
    });
    expect(g.status, g.text).toBe(201);
    expect(g.body[GROUP_EXT]).toEqual({ roleId: ORG_TECH });
    await scim.patch(`/Groups/${g.body.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'add', path: 'members', value: [{ value: u.id }] }],
    });
    expect(await roleOf(u.userId)).toBe(ORG_TECH);
    await scim.patch(`/Groups/${g.body.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'remove', path: `members[value eq "${u.id}"]` }],
    });
    expect(await roleOf(u.userId)).toBe(ORG_VIEWER);
    // Mapping set by PATCH on the extension attribute, then cleared.
    await scim.patch(`/Groups/${g.body.id}`, {
      schemas: [PATCH_OP],
      Operations: [
        { op: 'add', path: 'members', value: [{ value: u.id }] },
        { op: 'replace', path: `${GROUP_EXT}:roleId`, value: ORG_ADMIN },
      ],
    });
    expect(await roleOf(u.userId)).toBe(ORG_ADMIN);
    await scim.patch(`/Groups/${g.body.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', value: { [GROUP_EXT]: { roleId: null } } }],
    });
    expect(await roleOf(u.userId)).toBe(ORG_VIEWER);
  });

  it('a role beyond the token creator is refused (403 permission_ceiling) and changes nothing', async () => {
    const role = await w.admin.api.post(
      '/roles',
      { orgId: w.orgs[0].id, name: `Audit managers ${tag()}`, permissions: [{ resource: 'audit', action: 'manage' }] },
      { query: { orgId: w.orgs[0].id } },
    );
    expect(role.status, role.text).toBe(201);
    const u = await newUser();
    const refused = await scim.post('/Groups', {
      schemas: [GROUP, GROUP_EXT],
      displayName: `Too much ${tag()}`,
      members: [{ value: u.id }],
      [GROUP_EXT]: { roleId: role.body.id },
    });
    expectScimError(refused, 403);
    expect(refused.body.code).toBe('permission_ceiling');
    const g = await scim.post('/Groups', {
      schemas: [GROUP],
      displayName: `Plain ${tag()}`,
      members: [{ value: u.id }],
    });
    expectScimError(
      await scim.patch(`/Groups/${g.body.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'replace', path: `${GROUP_EXT}:roleId`, value: role.body.id }],
      }),
      403,
    );
    expect(await roleOf(u.userId)).toBe(ORG_VIEWER);
    expect((await scim.get(`/Groups/${g.body.id}`)).body[GROUP_EXT]).toEqual({ roleId: null });
    // A role of another organisation is not a role here.
    const other = await w.admin.api.post(
      '/roles',
      { orgId: w.orgs[1].id, name: `Other ${tag()}`, permissions: [{ resource: 'devices', action: 'read' }] },
      { query: { orgId: w.orgs[1].id } },
    );
    expectScimError(
      await scim.patch(`/Groups/${g.body.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'replace', path: `${GROUP_EXT}:roleId`, value: other.body.id }],
      }),
      400,
      'invalidValue',
    );
  });

  it('a creator who loses the permission no longer lends it: the next mapping is refused', async () => {
    const creator = w.orgAdmins[0];
    const tok = new ScimClient(t.baseUrl, (await issueScimToken(creator.api, { defaultRoleId: ORG_VIEWER })).token);
    await w.admin.api.post(
      `/users/${creator.user.id}/role`,
      { roleId: ORG_VIEWER },
      { query: { orgId: w.orgs[0].id } },
    );
    try {
      expectScimError(
        await tok.post('/Groups', {
          schemas: [GROUP, GROUP_EXT],
          displayName: `Late ${tag()}`,
          [GROUP_EXT]: { roleId: ORG_TECH },
        }),
        403,
      );
    } finally {
      await w.admin.api.post(
        `/users/${creator.user.id}/role`,
        { roleId: ORG_ADMIN },
        { query: { orgId: w.orgs[0].id } },
      );
    }
  });
});

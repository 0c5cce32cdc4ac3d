// SCIM Users: the request sequences Entra ID and Okta send when a user is assigned, updated, disabled
// and unassigned (from their public provisioning documentation), filters translated to SQL, paging, ETags,
// idempotent retries, and a disabled user's sessions revoked at once.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { auditRecords, onboardingTenant, sessionFor, type OnboardingTenant } from '../support/fixtures.js';
import { expectScimError, issueScimToken, PATCH_OP, ScimClient } from '../support/scim.js';
import { ORG_TECH, ORG_VIEWER } from '../onboarding/helpers.js';

let t: TestApp;
let w: OnboardingTenant;
let scim: ScimClient;
let tokenId: string;
beforeAll(async () => {
  t = await startApp();
  w = await onboardingTenant(t);
  const tok = await issueScimToken(w.admin.api, { orgId: w.orgs[0].id, defaultRoleId: ORG_VIEWER, name: 'Entra ID' });
  tokenId = tok.id;
  scim = new ScimClient(t.baseUrl, tok.token);
}, 60_000);
afterAll(async () => t?.close());

const tag = () => randomBytes(4).toString('hex');
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const member = async (userId: string) => await w.admin.api.get(`/users/${userId}`, { query: { orgId: w.orgs[0].id } });
const accountIdOf = async (scimId: string) =>
  (await auditRecords(t, 'scim.user.create')).find((r) => (r.details as { scimId?: string }).scimId === scimId)!
    .resourceId!;

describe('Entra ID: assign, update, disable, unassign (learn.microsoft.com, "Develop a SCIM endpoint": request and response examples)', () => {
  it('replays the sequence; the member follows each step', async () => {
    const upn = `Test_User_${tag()}@contoso.test`;
    const mail = `test.user.${tag()}@contoso.test`;
    // 1. Entra looks the user up by its matching attribute before creating it.
    const lookup = await scim.get(`/Users?filter=${encodeURIComponent(`userName eq "${upn}"`)}`);
    expect(lookup.status, lookup.text).toBe(200);
    expect(lookup.headers.get('content-type')).toMatch(/^application\/scim\+json/);
    expect(lookup.body).toMatchObject({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
      totalResults: 0,
      Resources: [],
    });
    // 2. Create, with the enterprise extension and an empty roles list Entra always sends.
    const created = await scim.post('/Users', {
      schemas: [USER, 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'],
      externalId: randomBytes(16).toString('hex'),
      userName: upn,
      active: true,
      emails: [{ primary: true, type: 'work', value: mail }],
      meta: { resourceType: 'User' },
      name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
      roles: [],
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { department: 'IT', employeeNumber: '42' },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      schemas: [USER],
      userName: upn,
      active: true,
      emails: [{ value: mail, type: 'work', primary: true }],
      meta: { resourceType: 'User', version: 'W/"1"' },
    });
    expect(created.headers.get('etag')).toBe('W/"1"');
    expect(created.headers.get('location')).toBe(`${t.baseUrl}/scim/v2/Users/${created.body.id}`);
    const id = created.body.id as string;
    const userId = await accountIdOf(id);
    expect((await member(userId)).body).toMatchObject({ email: mail, roleId: ORG_VIEWER, status: 'invited' });
    // 3. Read back, and by filter.
    expect((await scim.get(`/Users/${id}`)).body.userName).toBe(upn);
    const found = await scim.get(`/Users?filter=${encodeURIComponent(`userName eq "${upn.toUpperCase()}"`)}`);
    expect(found.body.totalResults).toBe(1);
    // 4. Update: capitalised ops, the work e-mail by value filter, a nested name attribute, a manager reference.
    const updated = await scim.patch(`/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [
        { op: 'Replace', path: 'emails[type eq "work"].value', value: `updated.${mail}` },
        { op: 'Replace', path: 'name.familyName', value: 'updatedFamilyName' },
        { op: 'Add', path: 'manager', value: [{ $ref: null, value: 'some-manager-id' }] },
      ],
    });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject({
      emails: [{ value: `updated.${mail}` }],
      name: { familyName: 'updatedFamilyName' },
      meta: { version: 'W/"2"' },
    });
    expect(updated.body).not.toHaveProperty('manager');
    // The account's login address moves only once the new address opens the link mailed to it.
    expect((await member(userId)).body.email).toBe(mail);
    // 5. Disable (soft delete on unassignment): a string boolean, capitalised op.
    const disabled = await scim.patch(`/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Replace', path: 'active', value: 'False' }],
    });
    expect(disabled.status, disabled.text).toBe(200);
    expect(disabled.body.active).toBe(false);
    expect((await member(userId)).status).toBe(404);
    // 6. Enable again: the membership comes back with its role.
    const enabled = await scim.patch(`/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Replace', path: 'active', value: 'True' }],
    });
    expect(enabled.body.active).toBe(true);
    expect((await member(userId)).body.roleId).toBe(ORG_VIEWER);
    // 7. Hard delete (the user deleted in Entra): 204, then 404; the account SCIM made is gone.
    const del = await scim.delete(`/Users/${id}`);
    expect(del.status, del.text).toBe(204);
    expectScimError(await scim.get(`/Users/${id}`), 404);
    expect((await member(userId)).status).toBe(404);
    const audit = await auditRecords(t, 'scim.user.delete', userId);
    expect(audit[0]!.details).toMatchObject({
      actorType: 'scim_token',
      via: 'scim',
      scimTokenId: tokenId,
      accountDeleted: true,
    });
  });
});

describe('Okta: assign, update, deactivate (developer.okta.com, "SCIM 2.0 protocol reference")', () => {
  it('replays the sequence; Okta’s password is never stored; deactivation is PATCH without a path', async () => {
    const login = `okta.${tag()}@example.test`;
    const lookup = await scim.get(
      `/Users?filter=${encodeURIComponent(`userName eq "${login}"`)}&startIndex=1&count=100`,
    );
    expect(lookup.body).toMatchObject({ totalResults: 0, startIndex: 1, itemsPerPage: 0 });
    const created = await scim.post('/Users', {
      schemas: [USER],
      userName: login,
      name: { givenName: 'Test', familyName: 'User' },
      emails: [{ primary: true, value: login, type: 'work' }],
      displayName: 'Test User',
      locale: 'en-US',
      externalId: `00u${tag()}`,
      groups: [],
      password: 'tempPassw0rd!x',
      active: true,
    });
    expect(created.status, created.text).toBe(201);
    expect(created.text).not.toContain('tempPassw0rd');
    const id = created.body.id as string;
    const userId = await accountIdOf(id);
    expect(
      (await t.deps.db.execute(`select password_hash from users where id = '${userId}'` as never)) as unknown as {
        rows: { password_hash: null }[];
      },
    ).toMatchObject({ rows: [{ password_hash: null }] });
    // Profile update: PUT with the whole resource, id included.
    const put = await scim.put(`/Users/${id}`, {
      schemas: [USER],
      id,
      userName: login,
      name: { givenName: 'Another', familyName: 'User' },
      emails: [{ primary: true, value: login, type: 'work' }],
      displayName: 'Another User',
      locale: 'en-US',
      externalId: created.body.externalId,
      groups: [],
      active: true,
    });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toMatchObject({
      displayName: 'Another User',
      name: { givenName: 'Another' },
      meta: { version: 'W/"2"' },
    });
    expect((await member(userId)).body.name).toBe('Another User');
    // Deactivate: Okta's PATCH carries no path, the attributes as the value.
    const off = await scim.patch(`/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', value: { active: false } }],
    });
    expect(off.status, off.text).toBe(200);
    expect(off.body.active).toBe(false);
    expect((await member(userId)).status).toBe(404);
    // Reactivate.
    const on = await scim.patch(`/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', value: { active: true } }],
    });
    expect(on.body.active).toBe(true);
    expect((await member(userId)).status).toBe(200);
    const [record] = await auditRecords(t, 'scim.user.deactivate', userId);
    expect(record!.details).toMatchObject({ actorType: 'scim_token', scimTokenId: tokenId });
  });
});

describe('a disabled user’s sessions are revoked at once', () => {
  it('active false: the session in this organisation fails on its next request; a session elsewhere survives', async () => {
    const login = `sess.${tag()}@example.test`;
    const created = await scim.post('/Users', {
      schemas: [USER],
      userName: login,
      emails: [{ value: login, type: 'work', primary: true }],
      active: true,
    });
    const userId = await accountIdOf(created.body.id);
    await t.deps.db.execute(`update users set status = 'active' where id = '${userId}'` as never);
    const here = await sessionFor(t, userId, {
      scope: 'organization',
      partnerId: w.partner.id,
      orgId: w.orgs[0].id,
      roleId: ORG_VIEWER,
    });
    const api = t.client().withToken(here.accessToken);
    expect((await api.get('/auth/me')).status).toBe(200);
    const off = await scim.patch(`/Users/${created.body.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Replace', path: 'active', value: false }],
    });
    expect(off.status, off.text).toBe(200);
    expect((await api.get('/auth/me')).status).toBe(401);
    const [record] = await auditRecords(t, 'scim.user.deactivate', userId);
    expect(record!.details).toMatchObject({ sessionsRevoked: 1 });
  });
});

describe('filters are translated to SQL (userName, externalId, emails[type eq "work"].value, and/or)', () => {
  const people: { id: string; userName: string; externalId: string; mail: string }[] = [];
  beforeAll(async () => {
    for (const n of ['ada', 'bob', 'cyd']) {
      const userName = `${n}.${tag()}@filter.test`;
      const mail = `${n}.${tag()}@work.test`;
      const externalId = `ext-${n}-${tag()}`;
      const res = await scim.post('/Users', {
        schemas: [USER],
        userName,
        externalId,
        emails: [
          { value: `${n}@home.test`, type: 'home' },
          { value: mail, type: 'work', primary: true },
        ],
      });
      expect(res.status, res.text).toBe(201);
      people.push({ id: res.body.id, userName, externalId, mail });
    }
  });
  const ids = async (filter: string) => {
    const res = await scim.get(`/Users?filter=${encodeURIComponent(filter)}`);
    expect(res.status, res.text).toBe(200);
    return (res.body.Resources as { id: string }[]).map((r) => r.id).sort();
  };

  it('eq on userName (case-insensitive), externalId (case-exact), the work e-mail', async () => {
    const [a, b, c] = people as [(typeof people)[0], (typeof people)[0], (typeof people)[0]];
    expect(await ids(`userName eq "${a.userName.toUpperCase()}"`)).toEqual([a.id]);
    expect(await ids(`externalId eq "${b.externalId}"`)).toEqual([b.id]);
    expect(await ids(`externalId eq "${b.externalId.toUpperCase()}"`)).toEqual([]);
    expect(await ids(`emails[type eq "work"].value eq "${c.mail}"`)).toEqual([c.id]);
    // The home address is not the work one.
    expect(await ids('emails[type eq "work"].value eq "cyd@home.test"')).toEqual([]);
    expect(await ids('emails.value eq "cyd@home.test"')).toEqual([c.id]);
  });

  it('and, or, not, sw, pr and a URN-qualified attribute', async () => {
    const [a, b, c] = people as [(typeof people)[0], (typeof people)[0], (typeof people)[0]];
    expect(await ids(`userName eq "${a.userName}" or externalId eq "${b.externalId}"`)).toEqual([a.id, b.id].sort());
    expect(await ids(`userName eq "${a.userName}" and externalId eq "${b.externalId}"`)).toEqual([]);
    expect(
      await ids(
        `(userName sw "ada." or userName sw "cyd.") and not (externalId eq "${a.externalId}") and userName ew "@filter.test"`,
      ),
    ).toEqual([c.id]);
    expect(await ids(`urn:ietf:params:scim:schemas:core:2.0:User:userName eq "${b.userName}"`)).toEqual([b.id]);
    expect((await ids('externalId pr and userName co "@filter.test"')).length).toBe(3);
  });

  it.each([
    ['unreadable', 'userName eq'],
    ['unknown attribute', 'password eq "x"'],
    ['a number for a string', 'userName eq 42'],
    ['a string for a boolean', 'active eq "yes"'],
    ['an unbalanced bracket', 'emails[type eq "work"'],
    ['a quoted injection attempt', `userName eq "x' or 1=1 --"`],
  ])('%s → 400 invalidFilter (or no match), never 500', async (_label, filter) => {
    const res = await scim.get(`/Users?filter=${encodeURIComponent(filter)}`);
    if (res.status === 200) expect(res.body.totalResults).toBe(0);
    else expectScimError(res, 400, 'invalidFilter');
  });
});

describe('paging: startIndex and count', () => {
  it('pages cover every user once; count is capped at 200; count=0 answers only the total', async () => {
    const all = await scim.get('/Users?count=1000');
    expect(all.body.itemsPerPage).toBeLessThanOrEqual(200);
    const total = all.body.totalResults as number;
    expect(total).toBeGreaterThanOrEqual(4);
    const seen: string[] = [];
    for (let start = 1; start <= total; start += 2) {
      const page = await scim.get(`/Users?startIndex=${start}&count=2`);
      expect(page.body).toMatchObject({ startIndex: start, totalResults: total });
      seen.push(...(page.body.Resources as { id: string }[]).map((r) => r.id));
    }
    expect(new Set(seen).size).toBe(total);
    expect((await scim.get('/Users?count=0')).body).toMatchObject({
      totalResults: total,
      itemsPerPage: 0,
      Resources: [],
    });
    expect((await scim.get('/Users?startIndex=-5&count=1')).body.startIndex).toBe(1);
  });
});

describe('ETags and If-Match', () => {
  it('a stale If-Match is 412 and changes nothing; the current one (or *) passes', async () => {
    const login = `etag.${tag()}@example.test`;
    const created = await scim.post('/Users', { schemas: [USER], userName: login, displayName: 'One' });
    const id = created.body.id as string;
    const v1 = created.headers.get('etag')!;
    const ok = await scim.patch(
      `/Users/${id}`,
      { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'displayName', value: 'Two' }] },
      { 'if-match': v1 },
    );
    expect(ok.status, ok.text).toBe(200);
    expect(ok.headers.get('etag')).toBe('W/"2"');
    expectScimError(
      await scim.patch(
        `/Users/${id}`,
        { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'displayName', value: 'Three' }] },
        { 'if-match': v1 },
      ),
      412,
    );
    expectScimError(await scim.delete(`/Users/${id}`, { 'if-match': v1 }), 412);
    expect((await scim.get(`/Users/${id}`)).body.displayName).toBe('Two');
    expect(
      (await scim.put(`/Users/${id}`, { schemas: [USER], userName: login, displayName: 'Four' }, { 'if-match': '*' }))
        .status,
    ).toBe(200);
    // An unchanged replace keeps the version.
    const same = await scim.put(`/Users/${id}`, { schemas: [USER], userName: login, displayName: 'Four' });
    expect(same.body.meta.version).toBe('W/"3"');
  });
});

describe('idempotent retries and refusals in the SCIM error schema', () => {
  it('a repeated create (same userName, or same externalId) is 409 uniqueness; the first user is untouched', async () => {
    const login = `retry.${tag()}@example.test`;
    const body = { schemas: [USER], userName: login, externalId: `ext-${tag()}` };
    const [a, b] = await Promise.all([scim.post('/Users', body), scim.post('/Users', body)]);
    expect([a.status, b.status].sort()).toEqual([201, 409]);
    expectScimError(a.status === 409 ? a : b, 409, 'uniqueness');
    expectScimError(await scim.post('/Users', { ...body, userName: `other.${login}` }), 409, 'uniqueness');
    expect((await scim.get(`/Users?filter=${encodeURIComponent(`userName eq "${login}"`)}`)).body.totalResults).toBe(1);
  });

  it('invalid bodies are 400 invalidValue; a changed id is 400 mutability; a bad path 400 invalidPath; unknown id 404', async () => {
    expectScimError(await scim.post('/Users', { schemas: [USER] }), 400, 'invalidValue');
    expectScimError(await scim.post('/Users', { schemas: [USER], userName: 'not-an-email' }), 400, 'invalidValue');
    expectScimError(await scim.post('/Users', '{"userName": '), 400, 'invalidSyntax');
    const created = await scim.post('/Users', { schemas: [USER], userName: `mut.${tag()}@example.test` });
    const id = created.body.id as string;
    expectScimError(
      await scim.patch(`/Users/${id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'replace', path: 'id', value: 'x' }],
      }),
      400,
      'mutability',
    );
    expectScimError(
      await scim.put(`/Users/${id}`, {
        schemas: [USER],
        id: '3f1c5e0e-0000-4000-8000-000000000000',
        userName: created.body.userName,
      }),
      400,
      'mutability',
    );
    expectScimError(
      await scim.patch(`/Users/${id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'replace', path: 'userName[', value: 'x' }],
      }),
      400,
      'invalidPath',
    );
    expectScimError(
      await scim.patch(`/Users/${id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'copy', path: 'userName', value: 'x' }],
      }),
      400,
      'invalidValue',
    );
    expectScimError(
      await scim.patch(`/Users/${id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'replace', path: 'active', value: 'maybe' }],
      }),
      400,
      'invalidValue',
    );
    expectScimError(await scim.get('/Users/not-a-uuid'), 404);
    expectScimError(await scim.get('/Users/3f1c5e0e-0000-4000-8000-000000000000'), 404);
    // plain JSON is accepted and answered as asked.
    const json = await fetch(`${t.baseUrl}/scim/v2/Users/${id}`, {
      headers: { authorization: `Bearer ${scim.token}`, accept: 'application/json' },
    });
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('a user already a member by other means is not taken over (409); an existing account elsewhere is offered the membership (pending)', async () => {
    expectScimError(
      await scim.post('/Users', { schemas: [USER], userName: w.orgAdmins[0].user.email }),
      409,
      'uniqueness',
    );
    const other = await scim.post('/Users', { schemas: [USER], userName: w.orgAdmins[1].user.email });
    expect(other.status, other.text).toBe(201);
    const [record] = (await auditRecords(t, 'scim.user.create')).filter(
      (r) => (r.details as { scimId?: string }).scimId === other.body.id,
    );
    expect(record!.details).toMatchObject({ existingAccount: true, mailed: 'offer' });
    // Changing the linked account's e-mail through SCIM leaves the account alone.
    await scim.patch(`/Users/${other.body.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', path: 'displayName', value: 'Renamed by IdP' }],
    });
    expect((await w.orgAdmins[1].api.get('/users/me')).body.name).toBe(w.orgAdmins[1].user.name);
    void ORG_TECH;
  });
});

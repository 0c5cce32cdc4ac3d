// SCIM tokens: issued once and kept as a hash, under users:write and the creator's ceiling, revoked on
// every instance at once, and confined to their tenant (organisation A's token cannot touch B).
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/platform/crypto.js';
import { startApp, startPeer, type PeerApp, type TestApp } from '../support/app.js';
import { auditRecords, onboardingTenant, type OnboardingTenant } from '../support/fixtures.js';
import { expectScimError, issueScimToken, PATCH_OP, ScimClient } from '../support/scim.js';
import { expectError, ORG_ADMIN, ORG_VIEWER, PARTNER_ADMIN, PARTNER_VIEWER } from '../onboarding/helpers.js';

let t: TestApp;
let peer: PeerApp;
let w: OnboardingTenant;
beforeAll(async () => {
  t = await startApp();
  peer = await startPeer(t);
  w = await onboardingTenant(t);
}, 60_000);
afterAll(async () => {
  await peer?.close();
  await t?.close();
});

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const rows = async (q: ReturnType<typeof sql>) =>
  ((await t.deps.db.execute(q)) as unknown as { rows: Record<string, unknown>[] }).rows;

describe('a SCIM token is shown once and only its hash is at rest', () => {
  it('201 with token ghscim_…; the row keeps its SHA-256 and a hint; the list, the audit trail and the logs never show it', async () => {
    const res = await w.admin.api.post('/scim-tokens', {
      orgId: w.orgs[0].id,
      name: 'Entra ID',
      defaultRoleId: ORG_VIEWER,
    });
    expect(res.status, res.text).toBe(201);
    const token = res.body.token as string;
    expect(token).toMatch(/^ghscim_[A-Za-z0-9_-]{43}$/);
    expect(res.body).toMatchObject({
      orgId: w.orgs[0].id,
      partnerId: w.partner.id,
      name: 'Entra ID',
      defaultRoleId: ORG_VIEWER,
      defaultRoleName: 'Organization Viewer',
      sendInvitations: true,
      revokedAt: null,
      hint: token.slice(0, 12),
    });
    const [row] = await rows(sql`select * from scim_tokens where id = ${res.body.id}`);
    expect(row!.token_hash).toBe(sha256(token));
    expect(JSON.stringify(row)).not.toContain(token.slice(12));
    const list = await w.admin.api.get('/scim-tokens', { query: { orgId: w.orgs[0].id } });
    expect(list.body.data.map((x: { id: string }) => x.id)).toContain(res.body.id);
    expect(list.text).not.toContain(token.slice(12));
    const [record] = await auditRecords(t, 'scim_token.create', res.body.id);
    expect(JSON.stringify(record)).not.toContain(token.slice(12));
    expect(t.logs()).not.toContain(token.slice(12));
    expect((await new ScimClient(t.baseUrl, token).get('/ServiceProviderConfig')).body).toMatchObject({
      patch: { supported: true },
      filter: { supported: true, maxResults: 200 },
      etag: { supported: true },
    });
  });
});

describe('who may issue one: users:write, the ceiling, never *:*', () => {
  it('a viewer is refused (403 forbidden); an organisation admin issues one for its organisation only', async () => {
    expectError(
      await w.viewer.api.post('/scim-tokens', { name: 'x', defaultRoleId: PARTNER_VIEWER }),
      403,
      'forbidden',
    );
    expectError(await w.orgViewer.api.post('/scim-tokens', { name: 'x', defaultRoleId: ORG_VIEWER }), 403, 'forbidden');
    const mine = await issueScimToken(w.orgAdmins[0].api, { defaultRoleId: ORG_VIEWER });
    expect(mine.orgId).toBe(w.orgs[0].id);
    expectError(
      await w.orgAdmins[0].api.post('/scim-tokens', { orgId: w.orgs[1].id, name: 'x', defaultRoleId: ORG_VIEWER }),
      404,
      'not_found',
    );
    // Another tenant's token is not found by id.
    expectError(await w.orgAdmins[1].api.delete(`/scim-tokens/${mine.id}`), 404, 'not_found');
  });

  it('a default role granting *:* is refused even to a partner admin (403 permission_ceiling); an unknown role is 400', async () => {
    expectError(
      await w.admin.api.post('/scim-tokens', { name: 'x', defaultRoleId: PARTNER_ADMIN }),
      403,
      'permission_ceiling',
    );
    expectError(
      await w.admin.api.post('/scim-tokens', { name: 'x', defaultRoleId: ORG_VIEWER }),
      400,
      'validation_failed',
    );
    expectError(
      await w.admin.api.raw.post('/scim-tokens', { name: 'x', defaultRoleId: PARTNER_VIEWER, extra: 1 }),
      400,
      'validation_failed',
    );
  });

  it('a role beyond the creator is refused (permission_ceiling): an org admin cannot hand out a custom role with audit:manage', async () => {
    const role = await w.admin.api.post(
      '/roles',
      { orgId: w.orgs[0].id, name: `Auditors ${Date.now()}`, permissions: [{ resource: 'audit', action: 'manage' }] },
      { query: { orgId: w.orgs[0].id } },
    );
    expect(role.status, role.text).toBe(201);
    expectError(
      await w.orgAdmins[0].api.post('/scim-tokens', { name: 'x', defaultRoleId: role.body.id }),
      403,
      'permission_ceiling',
    );
  });
});

describe('SCIM token of organisation A cannot touch B', () => {
  it('B’s users are invisible to A’s token: list, filter, get, replace, patch and delete are 404 or empty', async () => {
    const a = new ScimClient(
      t.baseUrl,
      (await issueScimToken(w.admin.api, { orgId: w.orgs[0].id, defaultRoleId: ORG_VIEWER })).token,
    );
    const b = new ScimClient(
      t.baseUrl,
      (await issueScimToken(w.admin.api, { orgId: w.orgs[1].id, defaultRoleId: ORG_VIEWER })).token,
    );
    const partner = new ScimClient(
      t.baseUrl,
      (await issueScimToken(w.admin.api, { defaultRoleId: PARTNER_VIEWER })).token,
    );
    const userName = `only-b.${Date.now()}@example.test`;
    const inB = await b.post('/Users', { schemas: [USER], userName });
    expect(inB.status, inB.text).toBe(201);
    const group = await b.post('/Groups', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
      displayName: `B group ${Date.now()}`,
    });
    for (const client of [a, partner]) {
      expect(
        (await client.get(`/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`)).body.totalResults,
      ).toBe(0);
      expect((await client.get('/Users')).body.Resources.map((r: { id: string }) => r.id)).not.toContain(inB.body.id);
      expectScimError(await client.get(`/Users/${inB.body.id}`), 404);
      expectScimError(await client.put(`/Users/${inB.body.id}`, { schemas: [USER], userName }), 404);
      expectScimError(
        await client.patch(`/Users/${inB.body.id}`, {
          schemas: [PATCH_OP],
          Operations: [{ op: 'replace', path: 'active', value: false }],
        }),
        404,
      );
      expectScimError(await client.delete(`/Users/${inB.body.id}`), 404);
      expectScimError(await client.get(`/Groups/${group.body.id}`), 404);
      expectScimError(
        await client.patch(`/Groups/${group.body.id}`, {
          schemas: [PATCH_OP],
          Operations: [{ op: 'add', path: 'members', value: [{ value: inB.body.id }] }],
        }),
        404,
      );
    }
    // A's group cannot take B's user as a member either.
    const aGroup = await a.post('/Groups', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
      displayName: `A group ${Date.now()}`,
      members: [{ value: inB.body.id }],
    });
    expectScimError(aGroup, 400, 'invalidValue');
    // The same userName may be provisioned in A independently.
    expect((await a.post('/Users', { schemas: [USER], userName })).status).toBe(201);
    expect((await b.get(`/Users/${inB.body.id}`)).body.active).toBe(true);
  });

  it('only a SCIM token opens /scim/v2: an access token or nothing is 401 in the SCIM error schema; a SCIM token opens nothing under /api/v1', async () => {
    const res = await fetch(`${t.baseUrl}/scim/v2/Users`, {
      headers: { authorization: `Bearer ${w.admin.session.accessToken}` },
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^application\/scim\+json/);
    expect(await res.json()).toMatchObject({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
      status: '401',
      code: 'unauthenticated',
    });
    expect((await fetch(`${t.baseUrl}/scim/v2/Users`)).status).toBe(401);
    const tok = await issueScimToken(w.admin.api, { orgId: w.orgs[0].id, defaultRoleId: ORG_VIEWER });
    expectError(await t.client().withToken(tok.token).get('/users'), 401, 'unauthenticated');
  });
});

describe('a revoked token is refused on another instance at once', () => {
  it('revoke on one instance; the next request on the peer is 401; revoking again answers it unchanged', async () => {
    const tok = await issueScimToken(w.admin.api, { orgId: w.orgs[0].id, defaultRoleId: ORG_VIEWER });
    const onPeer = new ScimClient(peer.baseUrl, tok.token);
    expect((await onPeer.get('/Users?count=1')).status).toBe(200);
    const revoked = await w.admin.api.delete(`/scim-tokens/${tok.id}`);
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body.revokedAt).not.toBeNull();
    expectScimError(await onPeer.get('/Users?count=1'), 401);
    expectScimError(await new ScimClient(t.baseUrl, tok.token).get('/Users?count=1'), 401);
    expect((await w.admin.api.delete(`/scim-tokens/${tok.id}`)).body.revokedAt).toBe(revoked.body.revokedAt);
    expect(await auditRecords(t, 'scim_token.revoke', tok.id)).toHaveLength(1);
    void ORG_ADMIN;
  });
});

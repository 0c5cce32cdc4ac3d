// Sessions you can see and end: GET/DELETE /auth/sessions, the admin's /users/:id/sessions, and last-seen
// written at most once a minute. Ending a session is seen on the next request by every instance.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessions } from '../../src/db/schema/index.js';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, startPeer, type PeerApp, type TestApp } from '../support/app.js';
import type { ApiClient } from '../support/client.js';
import {
  auditRecords,
  createOrg,
  createPartner,
  signedInOrgMember,
  signedInPartnerMember,
} from '../support/fixtures.js';
import { expectError } from '../mfa/helpers.js';
import { orgMember, PASSWORD } from './helpers.js';

const [, , , ORG_ADMIN, ORG_TECH, ORG_VIEWER] = SYSTEM_ROLES.map((r) => r.id as string) as [
  string,
  string,
  string,
  string,
  string,
  string,
];
const CHROME_LINUX =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const FIREFOX_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0';

let t: TestApp;
let peer: PeerApp;
beforeAll(async () => {
  t = await startApp();
  peer = await startPeer(t);
});
afterAll(async () => {
  await peer?.close();
  await t?.close();
});

/** POST /auth/login with a user agent; the client carries the access token. */
async function signInAs(email: string, userAgent = CHROME_LINUX, base: ApiClient = t.client()): Promise<ApiClient> {
  const api = base.fresh();
  const res = await api.post('/auth/login', { email, password: PASSWORD }, { headers: { 'user-agent': userAgent } });
  expect(res.status, res.text).toBe(200);
  api.token = res.body.accessToken;
  return api;
}

const sessionIdOf = (api: ApiClient) =>
  JSON.parse(Buffer.from(api.token!.split('.')[1]!, 'base64url').toString()).sid as string;

describe("GET /auth/sessions lists the caller's live sessions, parsed", () => {
  it('each sign-in with address, browser, OS, method, MFA and the calling one marked current; ended sessions drop out', async () => {
    const { user } = await orgMember(t);
    const a = await signInAs(user.email, CHROME_LINUX);
    const b = await signInAs(user.email, FIREFOX_WINDOWS);
    const list = await a.get('/auth/sessions');
    expect(list.status, list.text).toBe(200);
    expect(list.body.data).toHaveLength(2);
    const byId = new Map(list.body.data.map((s: { id: string }) => [s.id, s]));
    expect(byId.get(sessionIdOf(a))).toMatchObject({
      ip: '127.0.0.1',
      browser: 'Chrome 120',
      os: 'Linux',
      method: 'password',
      mfa: false,
      current: true,
    });
    expect(byId.get(sessionIdOf(b))).toMatchObject({
      browser: 'Firefox 121',
      os: 'Windows 10',
      method: 'password',
      mfa: false,
      current: false,
    });
    for (const s of list.body.data) {
      expect(Object.keys(s).sort()).toEqual([
        'browser',
        'createdAt',
        'current',
        'id',
        'ip',
        'lastSeenAt',
        'method',
        'mfa',
        'os',
      ]);
      expect(Date.parse(s.createdAt)).not.toBeNaN();
      expect(Date.parse(s.lastSeenAt)).not.toBeNaN();
    }
    expect((await b.delete(`/auth/sessions/${sessionIdOf(b)}`)).status).toBe(200);
    expect((await a.get('/auth/sessions')).body.data.map((s: { id: string }) => s.id)).toEqual([sessionIdOf(a)]);
  });
});

describe('a session ended from another session is refused on its next request, on every instance', () => {
  it('DELETE /auth/sessions/:id: the other session answers 401 here and on the peer; audited auth.session.revoke', async () => {
    const { user } = await orgMember(t);
    const laptop = await signInAs(user.email);
    const phone = await signInAs(user.email, FIREFOX_WINDOWS);
    const phoneOnPeer = peer.client().withToken(phone.token);
    expect((await phoneOnPeer.get('/auth/me')).status).toBe(200);
    const ended = await laptop.delete(`/auth/sessions/${sessionIdOf(phone)}`);
    expect(ended.status, ended.text).toBe(200);
    expectError(await phoneOnPeer.get('/auth/me'), 401, 'unauthenticated');
    expectError(await phone.get('/auth/me'), 401, 'unauthenticated');
    expect((await laptop.get('/auth/me')).status).toBe(200);
    const [audit] = await auditRecords(t, 'auth.session.revoke', sessionIdOf(phone));
    expect(audit).toMatchObject({ actorUserId: user.id, details: { by: 'self', current: false } });
  });

  it("another user's session id is 404 and that session lives on; a malformed id is 400", async () => {
    const one = await signInAs((await orgMember(t)).user.email);
    const other = await signInAs((await orgMember(t)).user.email);
    expectError(await one.delete(`/auth/sessions/${sessionIdOf(other)}`), 404, 'not_found');
    expect((await other.get('/auth/me')).status).toBe(200);
    expectError(await one.delete('/auth/sessions/not-a-uuid'), 400, 'validation_failed');
  });

  it('DELETE /auth/sessions ends every session but the calling one (on the peer too)', async () => {
    const { user } = await orgMember(t);
    const keep = await signInAs(user.email);
    const others = [await signInAs(user.email), await signInAs(user.email, FIREFOX_WINDOWS)];
    const res = await keep.delete('/auth/sessions');
    expect(res.body).toEqual({ success: true, revoked: 2 });
    for (const o of others) expectError(await peer.client().withToken(o.token).get('/auth/me'), 401, 'unauthenticated');
    expect((await keep.get('/auth/me')).status).toBe(200);
    expect((await keep.get('/auth/sessions')).body.data).toHaveLength(1);
  });
});

describe('last seen is coalesced: at most one write per minute per session', () => {
  it('requests within a minute leave last_seen alone; the first after a minute moves it, once, even when concurrent', async () => {
    const { user } = await orgMember(t);
    const api = await signInAs(user.email);
    const sid = sessionIdOf(api);
    const lastSeen = async () =>
      (
        await t.deps.db.select({ at: sessions.lastUsedAt }).from(sessions).where(eq(sessions.id, sid))
      )[0]!.at!.getTime();
    const signedInAt = await lastSeen();
    for (let i = 0; i < 5; i++) {
      t.clock.advance(10_000);
      expect((await api.get('/auth/me')).status).toBe(200);
    }
    expect(await lastSeen()).toBe(signedInAt);
    t.clock.advance(15_000);
    const before = t.clock.now().getTime();
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? peer.client().withToken(api.token) : api).get('/auth/me')),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(8).fill(200));
    const moved = await lastSeen();
    expect(moved).toBeGreaterThanOrEqual(before);
    expect(moved - signedInAt).toBeGreaterThanOrEqual(60_000);
    t.clock.advance(20_000);
    await api.get('/auth/me');
    expect(await lastSeen()).toBe(moved);
    const listed = (await api.get('/auth/sessions')).body.data[0]!;
    expect(Date.parse(listed.lastSeenAt)).toBe(moved);
  });
});

describe("admins list and end a member's sessions (users:write, within the ceiling and the scope)", () => {
  it("an org admin lists a member's sessions and ends one: refused on the peer at the next request, audited with the admin as actor", async () => {
    const partner = await createPartner(t);
    const org = await createOrg(t, partner.id);
    const admin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN });
    const member = await signedInOrgMember(t, org, { roleId: ORG_TECH, password: PASSWORD, mfaEnabled: false });
    const session = await signInAs(member.user.email);
    const list = await admin.api.get(`/users/${member.user.id}/sessions`);
    expect(list.status, list.text).toBe(200);
    const ids = list.body.data.map((s: { id: string; current: boolean }) => s.id);
    expect(ids).toContain(sessionIdOf(session));
    expect(list.body.data.every((s: { current: boolean }) => s.current === false)).toBe(true);
    const ended = await admin.api.delete(`/users/${member.user.id}/sessions/${sessionIdOf(session)}`);
    expect(ended.status, ended.text).toBe(200);
    expectError(await peer.client().withToken(session.token).get('/auth/me'), 401, 'unauthenticated');
    const [audit] = await auditRecords(t, 'auth.session.revoke', sessionIdOf(session));
    expect(audit).toMatchObject({
      actorUserId: admin.user.id,
      orgId: org.id,
      details: { by: 'admin', userId: member.user.id },
    });
    expectError(await admin.api.delete(`/users/${member.user.id}/sessions/${sessionIdOf(session)}`), 404, 'not_found');
  });

  it("another tenant's member is 404; a session of the member in another tenant is neither listed nor ended", async () => {
    const partner = await createPartner(t);
    const orgA = await createOrg(t, partner.id);
    const orgB = await createOrg(t, partner.id);
    const adminA = await signedInOrgMember(t, orgA, { roleId: ORG_ADMIN });
    const outsider = await signedInOrgMember(t, orgB, { roleId: ORG_TECH });
    expectError(await adminA.api.get(`/users/${outsider.user.id}/sessions`), 404, 'not_found');
    expectError(
      await adminA.api.delete(`/users/${outsider.user.id}/sessions/${outsider.session.sessionId}`),
      404,
      'not_found',
    );
    // The same account, also a member of A: its session acting in B is not A's business.
    const { addOrgMember } = await import('../support/fixtures.js');
    await addOrgMember(t, { orgId: orgA.id, userId: outsider.user.id, roleId: ORG_VIEWER });
    const listed = await adminA.api.get(`/users/${outsider.user.id}/sessions`);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data.map((s: { id: string }) => s.id)).not.toContain(outsider.session.sessionId);
    expectError(
      await adminA.api.delete(`/users/${outsider.user.id}/sessions/${outsider.session.sessionId}`),
      404,
      'not_found',
    );
    expect((await outsider.api.get('/auth/me')).status).toBe(200);
  });

  it("without users:write: 403 forbidden; above the caller's ceiling: 403 permission_ceiling", async () => {
    const partner = await createPartner(t);
    const org = await createOrg(t, partner.id);
    const viewer = await signedInOrgMember(t, org, { roleId: ORG_VIEWER });
    const member = await signedInOrgMember(t, org, { roleId: ORG_TECH });
    expectError(await viewer.api.get(`/users/${member.user.id}/sessions`), 403, 'forbidden');
    expectError(
      await viewer.api.delete(`/users/${member.user.id}/sessions/${member.session.sessionId}`),
      403,
      'forbidden',
    );
    const custom = await signedInPartnerMember(t, partner.id);
    const role = await custom.api.post('/roles', {
      name: 'Session admin',
      permissions: [
        { resource: 'users', action: 'write' },
        { resource: 'users', action: 'read' },
      ],
      orgId: org.id,
    });
    expect(role.status, role.text).toBe(201);
    const limited = await signedInOrgMember(t, org, { roleId: role.body.id });
    expectError(await limited.api.get(`/users/${member.user.id}/sessions`), 403, 'permission_ceiling');
    expectError(
      await limited.api.delete(`/users/${member.user.id}/sessions/${member.session.sessionId}`),
      403,
      'permission_ceiling',
    );
    expect((await member.api.get('/auth/me')).status).toBe(200);
  });
});

import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { organizationUsers, partnerUsers, sessions } from '../../src/db/schema/index.js';
import { createFlow } from '../../src/modules/identity/index.js';
import { ORG_ADMIN_ROLE_ID, SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, startPeer, type PeerApp, type TestApp } from '../support/app.js';
import { addOrgMember, addPartnerMember, createOrg, createPartner, createUser } from '../support/fixtures.js';
import {
  auditOf,
  claimsOf,
  clientWithRefreshToken,
  CSRF_COOKIE,
  orgMember,
  PASSWORD,
  refresh,
  REFRESH_COOKIE,
  signIn,
} from './helpers.js';

let t: TestApp;
let peer: PeerApp;
const PARTNER_TECH = SYSTEM_ROLES[1].id;
const ORG_TECH = SYSTEM_ROLES[4].id;

beforeAll(async () => {
  t = await startApp({ RATE_LIMIT_LOGIN: '1000/900' });
  peer = await startPeer(t);
});
afterAll(async () => {
  await peer?.close();
  await t?.close();
});

const isCleared = (setCookie: string[], name: string) =>
  setCookie.some((c) => c.startsWith(`${name}=`) && /max-age=0|expires=thu, 01 jan 1970/i.test(c));

describe('logout revokes every session of the user and clears both cookies', () => {
  it("answers 200 { success: true }, clears the cookies, and the user's other session dies on its next request", async () => {
    const { user, org, partner } = await orgMember(t);
    const a = await signIn(t, user.email);
    const b = await signIn(t, user.email);
    const bystander = await signIn(t, (await orgMember(t)).user.email);

    const res = await a.post('/auth/logout');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    const setCookie = res.headers.getSetCookie();
    expect(isCleared(setCookie, REFRESH_COOKIE)).toBe(true);
    expect(isCleared(setCookie, CSRF_COOKIE)).toBe(true);
    expect(setCookie.find((c) => c.startsWith(`${REFRESH_COOKIE}=`))).toMatch(/Path=\/api\/v1\/auth/);
    expect(a.cookies.has(REFRESH_COOKIE)).toBe(false);

    expect((await a.me()).status).toBe(401);
    expect((await b.me()).status).toBe(401);
    expect((await refresh(b)).status).toBe(401);
    expect((await refresh(clientWithRefreshToken(t, a.refreshToken))).status).toBe(401);
    expect((await bystander.me()).status).toBe(200);

    const live = await t.deps.db.select().from(sessions).where(eq(sessions.userId, user.id));
    expect(live.every((s) => s.revokedAt !== null && s.revokeReason === 'logout')).toBe(true);
    const [event] = await auditOf(t, 'user.logout', user.id);
    expect(event).toMatchObject({
      result: 'success',
      actorEmail: user.email,
      orgId: org.id,
      partnerId: partner.id,
      details: { sessionsRevoked: 2 },
    });
  });

  it('answers 401 without a live access token', async () => {
    expect((await t.client().post('/auth/logout')).status).toBe(401);
  });
});

describe('a revoked session dies on every instance at its next request', () => {
  it('a logout on one instance kills the access token on the other', async () => {
    const { user } = await orgMember(t);
    const here = await signIn(t, user.email);
    const there = peer.client().withToken(here.token);
    expect((await there.me()).status).toBe(200);
    expect((await peer.client().withToken(here.token).post('/auth/logout')).status).toBe(200);
    expect((await here.me()).status).toBe(401);
    expect((await there.me()).status).toBe(401);
  });

  it('a password change on one instance kills the other sessions on the other instance', async () => {
    const { user } = await orgMember(t);
    const caller = await signIn(t, user.email);
    const other = await signIn(t, user.email);
    const otherOnPeer = peer.client().withToken(other.token);
    expect((await otherOnPeer.me()).status).toBe(200);
    const changed = await peer
      .client()
      .withToken(caller.token)
      .post('/auth/change-password', { currentPassword: PASSWORD, newPassword: `Basalt-${Date.now()}-Heron!` });
    expect(changed.status).toBe(200);
    expect((await otherOnPeer.me()).status).toBe(401);
    expect((await other.me()).status).toBe(401);
    expect((await t.client().withToken(changed.body.accessToken).me()).status).toBe(200);
  });

  it('a password reset on one instance kills every session on the other', async () => {
    const { user } = await orgMember(t);
    const here = await signIn(t, user.email);
    const { token } = await t.deps.db.transaction((tx) =>
      createFlow(tx, { kind: 'password_reset', userId: user.id, ttlMs: 3600_000, now: t.clock.now() }),
    );
    expect(
      (await peer.client().post('/auth/reset-password', { token, newPassword: `Basalt-${Date.now()}-Egret!` })).status,
    ).toBe(200);
    expect((await here.me()).status).toBe(401);
    expect((await refresh(here)).status).toBe(401);
  });

  it('a refresh token rotated on one instance is dead on the other', async () => {
    const { user } = await orgMember(t);
    const api = await signIn(t, user.email);
    const old = api.refreshToken;
    expect((await refresh(api)).status).toBe(200);
    const onPeer = peer.client();
    onPeer.cookies.set(REFRESH_COOKIE, old);
    onPeer.cookies.set(CSRF_COOKIE, 'p'.repeat(32));
    expect((await refresh(onPeer)).status).toBe(401);
  });
});

describe('GET /auth/me answers the signed-in user with MFA and phone status, and no secret', () => {
  it("answers the profile of the session's membership", async () => {
    const { user, org, partner } = await orgMember(t);
    const api = await signIn(t, user.email);
    const res = await api.me();
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(
      [
        'avatarUrl',
        'createdAt',
        'email',
        'emailVerified',
        'id',
        'lastLoginAt',
        'mfaEnabled',
        'mfaMethod',
        'name',
        'orgId',
        'partnerId',
        'permissions',
        'phoneLast4',
        'phoneVerified',
        'roleId',
        'scope',
        'status',
      ].sort(),
    );
    expect(res.body).toMatchObject({
      id: user.id,
      email: user.email,
      mfaEnabled: false,
      mfaMethod: null,
      phoneVerified: false,
      phoneLast4: null,
      scope: 'organization',
      orgId: org.id,
      partnerId: partner.id,
      roleId: ORG_ADMIN_ROLE_ID,
    });
    expect(res.body.lastLoginAt).toEqual(expect.any(String));
    expect(res.body.permissions).toContain('users:invite');
    expect((await t.client().me()).status).toBe(401);
  });
});

describe('sign-in lands in the most recently used membership, partner first on a tie', () => {
  async function twoMemberships() {
    const partner = await createPartner(t);
    const org = await createOrg(t, partner.id);
    const user = await createUser(t, { password: PASSWORD });
    await addPartnerMember(t, { partnerId: partner.id, userId: user.id, roleId: PARTNER_TECH, orgAccess: 'all' });
    await addOrgMember(t, { orgId: org.id, userId: user.id, roleId: ORG_ADMIN_ROLE_ID });
    return { partner, org, user };
  }

  it('picks the partner membership when neither was used', async () => {
    const { user, partner } = await twoMemberships();
    const api = await signIn(t, user.email);
    expect((await api.me()).body).toMatchObject({
      scope: 'partner',
      partnerId: partner.id,
      orgId: null,
      roleId: PARTNER_TECH,
    });
  });

  it('picks the partner membership on a tie of last use', async () => {
    const { user, partner, org } = await twoMemberships();
    const at = new Date(Date.now() - 3600_000);
    await t.deps.db.update(partnerUsers).set({ lastUsedAt: at }).where(eq(partnerUsers.userId, user.id));
    await t.deps.db
      .update(organizationUsers)
      .set({ lastUsedAt: at })
      .where(and(eq(organizationUsers.userId, user.id), eq(organizationUsers.orgId, org.id)));
    const api = await signIn(t, user.email);
    expect(claimsOf(api.token!)).toMatchObject({ scope: 'partner', partnerId: partner.id });
  });

  it('picks the organisation membership after it was used more recently', async () => {
    const { user, org, partner } = await twoMemberships();
    const first = await signIn(t, user.email);
    expect(claimsOf(first.token!).scope).toBe('partner');
    const switched = await first.post('/auth/switch-context', { orgId: org.id });
    expect(switched.status).toBe(200);
    const again = await signIn(t, user.email);
    expect((await again.me()).body).toMatchObject({
      scope: 'organization',
      orgId: org.id,
      partnerId: partner.id,
      roleId: ORG_ADMIN_ROLE_ID,
    });
  });

  it('among two organisations picks the one used last', async () => {
    const partner = await createPartner(t);
    const older = await createOrg(t, partner.id);
    const newer = await createOrg(t, partner.id);
    const user = await createUser(t, { password: PASSWORD });
    await addOrgMember(t, { orgId: older.id, userId: user.id, roleId: ORG_ADMIN_ROLE_ID });
    await addOrgMember(t, { orgId: newer.id, userId: user.id, roleId: ORG_TECH });
    await t.deps.db
      .update(organizationUsers)
      .set({ lastUsedAt: new Date(Date.now() - 86_400_000) })
      .where(eq(organizationUsers.orgId, older.id));
    await t.deps.db
      .update(organizationUsers)
      .set({ lastUsedAt: new Date(Date.now() - 60_000) })
      .where(eq(organizationUsers.orgId, newer.id));
    const api = await signIn(t, user.email);
    expect((await api.me()).body).toMatchObject({ orgId: newer.id, roleId: ORG_TECH });
  });
});

describe("switch-context moves the session to another of the caller's memberships only", () => {
  it('answers the token response in the new membership, with a new refresh token; the old one is dead', async () => {
    const partner = await createPartner(t);
    const org = await createOrg(t, partner.id);
    const user = await createUser(t, { password: PASSWORD });
    await addPartnerMember(t, { partnerId: partner.id, userId: user.id, roleId: PARTNER_TECH, orgAccess: 'all' });
    await addOrgMember(t, { orgId: org.id, userId: user.id, roleId: ORG_TECH });
    const api = await signIn(t, user.email);
    const sid = claimsOf(api.token!).sid;
    const oldRefresh = api.refreshToken;

    const res = await api.post('/auth/switch-context', { orgId: org.id });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      tokenType: 'Bearer',
      user: { scope: 'organization', orgId: org.id, partnerId: partner.id, roleId: ORG_TECH },
    });
    expect(claimsOf(res.body.accessToken)).toMatchObject({
      sid,
      scope: 'organization',
      orgId: org.id,
      roleId: ORG_TECH,
    });
    expect(api.cookies.get(REFRESH_COOKIE)).not.toBe(oldRefresh);
    expect((await refresh(clientWithRefreshToken(t, oldRefresh))).status).toBe(401);
    const refreshed = await refresh(api);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.user).toMatchObject({ scope: 'organization', orgId: org.id });

    const back = await api
      .withToken(refreshed.body.accessToken)
      .post('/auth/switch-context', { partnerId: partner.id });
    expect(back.status).toBe(200);
    expect(back.body.user).toMatchObject({
      scope: 'partner',
      partnerId: partner.id,
      orgId: null,
      roleId: PARTNER_TECH,
    });
  });

  it('answers 404 for an organisation or partner the caller is not a member of, and keeps the session as it was', async () => {
    const { user, org } = await orgMember(t);
    const otherPartner = await createPartner(t);
    const otherOrg = await createOrg(t, otherPartner.id);
    const api = await signIn(t, user.email);
    for (const body of [
      { orgId: otherOrg.id },
      { partnerId: otherPartner.id },
      { orgId: '6f1c1a3e-5d55-4d0e-9a2b-1b1b1b1b1b1b' },
    ]) {
      const res = await api.post('/auth/switch-context', body);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    expect((await api.me()).body).toMatchObject({ scope: 'organization', orgId: org.id });
  });

  it('refuses a body naming both or neither with 400 validation_failed', async () => {
    const { user, org, partner } = await orgMember(t);
    const api = await signIn(t, user.email);
    expect((await api.post('/auth/switch-context', {})).body.code).toBe('validation_failed');
    expect((await api.post('/auth/switch-context', { orgId: org.id, partnerId: partner.id })).body.code).toBe(
      'validation_failed',
    );
  });
});

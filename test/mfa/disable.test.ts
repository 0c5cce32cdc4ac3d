// Disabling MFA: password and a current code; clears secret, phone, recovery codes (and
// passkeys); revokes every other session; replaces the calling one. 403 org_requires_mfa, 428 session_binding_required.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { passkeys, sessions, users } from '../../src/db/schema/index.js';
import { totpFor } from '../../src/modules/mfa/codes.js';
import { ORG_ADMIN_ROLE_ID, SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import type { ApiClient } from '../support/client.js';
import {
  auditOf,
  challenge,
  claimsOf,
  CSRF_COOKIE,
  expectError,
  freshTotp,
  PASSWORD,
  REFRESH_COOKIE,
  registerPasskey,
  signIn,
  signInWithTotp,
  totpMember,
  userRow,
} from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => t?.close());

const refresh = (api: ApiClient) =>
  api.post('/auth/refresh', undefined, {
    token: null,
    headers: { 'x-service-csrf': api.cookies.get(CSRF_COOKIE) ?? '' },
  });

describe('POST /auth/mfa/disable clears every factor and replaces the calling session', () => {
  it('password + current TOTP code: 200 with fresh tokens (mfa: false) and a new refresh cookie; factors cleared', async () => {
    const m = await totpMember(t);
    await registerPasskey(t, m.api);
    await t.deps.db
      .update(users)
      .set({ phoneNumber: '+12025550142', phoneVerified: true })
      .where(eq(users.id, m.user.id));
    const otherSession = await signInWithTotp(t, m.email, m.secret);
    const oldRefresh = m.api.cookies.get(REFRESH_COOKIE)!;
    const oldSid = claimsOf(m.api.token!).sid;

    const res = await m.api.post('/auth/mfa/disable', { currentPassword: PASSWORD, code: freshTotp(t, m.secret) });
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual([
      'accessToken',
      'expiresIn',
      'mfaEnrollmentRequired',
      'tokenType',
      'user',
    ]);
    expect(claimsOf(res.body.accessToken).mfa).toBe(false);
    expect(claimsOf(res.body.accessToken).sid).toBe(oldSid); // the same session, replaced in place
    expect(res.body.user).toMatchObject({ mfaEnabled: false, mfaMethod: null, phoneVerified: false, phoneLast4: null });
    const newRefresh = m.api.cookies.get(REFRESH_COOKIE);
    expect(newRefresh).toBeTruthy();
    expect(newRefresh).not.toBe(oldRefresh);

    const row = await userRow(t, m.user.id);
    expect(row).toMatchObject({
      mfaSecret: null,
      mfaEnabled: false,
      mfaMethod: null,
      mfaRecoveryCodes: null,
      phoneNumber: null,
      phoneVerified: false,
    });
    expect(await t.deps.db.select().from(passkeys).where(eq(passkeys.userId, m.user.id))).toHaveLength(0);

    // Every other session is gone; the caller's continues with the new credentials only.
    expectError(await otherSession.me(), 401, 'unauthenticated');
    expect((await refresh(otherSession)).status).toBe(401);
    m.api.token = res.body.accessToken;
    expect((await m.api.me()).status).toBe(200);
    const stale = t.client();
    stale.cookies.set(REFRESH_COOKIE, oldRefresh);
    stale.cookies.set(CSRF_COOKIE, 'x'.repeat(32));
    expect((await refresh(stale)).status).toBe(401);
    const rotated = await refresh(m.api);
    expect(rotated.status, rotated.text).toBe(200);
    expect(claimsOf(rotated.body.accessToken).mfa).toBe(false);

    const audit = await auditOf(t, 'auth.mfa.disable', m.user.id);
    expect(audit).toHaveLength(1);
    expect(audit[0]!.details).toMatchObject({ previousMethod: 'totp' });

    // The next sign-in asks for nothing more.
    const next = await t.client().post('/auth/login', { email: m.email, password: PASSWORD });
    expect(next.status).toBe(200);
    expect(next.body.accessToken).toBeTruthy();
    expect(next.body.mfaRequired).toBeUndefined();
  });

  it('a pending sign-in challenge dies with the factors', async () => {
    const m = await totpMember(t);
    const pending = await challenge(t, m.email);
    expect(
      (await m.api.post('/auth/mfa/disable', { currentPassword: PASSWORD, code: freshTotp(t, m.secret) })).status,
    ).toBe(200);
    expectError(
      await pending.api.post('/auth/mfa/verify', { tempToken: pending.body.tempToken, code: m.recoveryCodes[0]! }),
      401,
      'invalid_temp_token',
    );
  });

  it('a wrong password: 400 invalid_credentials; a wrong code: 401 invalid_mfa_code; nothing changes', async () => {
    const m = await totpMember(t);
    // The code of the sign-in's own time step has been used: it is not "current" any more.
    const usedStep = (await userRow(t, m.user.id)).mfaLastTotpStep!;
    const usedCode = totpFor(m.secret).generate({ timestamp: usedStep * 30_000 });
    expectError(
      await m.api.post('/auth/mfa/disable', { currentPassword: PASSWORD, code: usedCode }),
      401,
      'invalid_mfa_code',
    );
    expectError(
      await m.api.post('/auth/mfa/disable', {
        currentPassword: 'not my password at all',
        code: freshTotp(t, m.secret),
      }),
      400,
      'invalid_credentials',
    );
    const code = freshTotp(t, m.secret);
    expectError(
      await m.api.post('/auth/mfa/disable', {
        currentPassword: PASSWORD,
        code: code === '000000' ? '111111' : '000000',
      }),
      401,
      'invalid_mfa_code',
    );
    // An unknown recovery code.
    expectError(
      await m.api.post('/auth/mfa/disable', {
        currentPassword: PASSWORD,
        code: m.recoveryCodes[0]!.replace(/./g, 'z'),
      }),
      401,
      'invalid_mfa_code',
    );
    expect((await userRow(t, m.user.id)).mfaEnabled).toBe(true);
  });

  it('without MFA there is nothing to disable: 409 conflict', async () => {
    const m = await totpMember(t);
    expect(
      (await m.api.post('/auth/mfa/disable', { currentPassword: PASSWORD, code: freshTotp(t, m.secret) })).status,
    ).toBe(200);
    const fresh = await signIn(t, m.email);
    expectError(await fresh.post('/auth/mfa/disable', { currentPassword: PASSWORD, code: '123456' }), 409, 'conflict');
  });
});

describe('428 session_binding_required: no refresh cookie bound to the calling session', () => {
  it('a bearer-only client (no cookie) is refused and nothing changes', async () => {
    const m = await totpMember(t);
    const bearerOnly = t.client().withToken(m.api.token);
    const res = await bearerOnly.post('/auth/mfa/disable', { currentPassword: PASSWORD, code: freshTotp(t, m.secret) });
    expectError(res, 428, 'session_binding_required');
    expect((await userRow(t, m.user.id)).mfaEnabled).toBe(true);
  });

  it("the refresh cookie of another of the user's sessions does not count", async () => {
    const m = await totpMember(t);
    const other = await signInWithTotp(t, m.email, m.secret);
    const mixed = t.client().withToken(m.api.token);
    mixed.cookies.set(REFRESH_COOKIE, other.cookies.get(REFRESH_COOKIE)!);
    expectError(
      await mixed.post('/auth/mfa/disable', { currentPassword: PASSWORD, code: freshTotp(t, m.secret) }),
      428,
      'session_binding_required',
    );
  });

  it('a revoked session cookie does not count either (the session is dead: 401)', async () => {
    const m = await totpMember(t);
    await t.deps.db
      .update(sessions)
      .set({ revokedAt: new Date() })
      .where(eq(sessions.id, claimsOf(m.api.token!).sid!));
    expectError(
      await m.api.post('/auth/mfa/disable', { currentPassword: PASSWORD, code: freshTotp(t, m.secret) }),
      401,
      'unauthenticated',
    );
  });
});

describe('403 org_requires_mfa when a policy requires MFA', () => {
  it("the organisation's requireMfa", async () => {
    const m = await totpMember(t, { orgSettings: { security: { requireMfa: true } } });
    const res = await m.api.post('/auth/mfa/disable', { currentPassword: PASSWORD, code: freshTotp(t, m.secret) });
    expectError(res, 403, 'org_requires_mfa');
    expect(res.body.message).toMatch(/^Your organization requires MFA\.?$/);
    expect((await userRow(t, m.user.id)).mfaEnabled).toBe(true);
    expect(await auditOf(t, 'auth.mfa.disable', m.user.id)).toHaveLength(0);
  });

  it("the partner's requireMfa, for a user of one of its organisations", async () => {
    const m = await totpMember(t, { partnerSettings: { security: { requireMfa: true } }, roleId: ORG_ADMIN_ROLE_ID });
    expectError(
      await m.api.post('/auth/mfa/disable', { currentPassword: PASSWORD, code: freshTotp(t, m.secret) }),
      403,
      'org_requires_mfa',
    );
  });

  it("the role's Force MFA (Partner Admin)", async () => {
    const m = await totpMember(t, { kind: 'partner', roleId: SYSTEM_ROLES[0].id });
    expectError(
      await m.api.post('/auth/mfa/disable', { currentPassword: PASSWORD, code: freshTotp(t, m.secret) }),
      403,
      'org_requires_mfa',
    );
  });
});

// Admin MFA reset: users:write and an MFA-verified acting session, tenant-scoped, never one's own account, clears every
// factor (passkeys too), ends every session, works under an MFA-enforcing organisation, audited as user.mfa_reset with
// the cleared method. (ENABLE_2FA=false: disabled-2fa.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { passkeys, users } from '../../src/db/schema/index.js';
import { ORG_ADMIN_ROLE_ID, PARTNER_ADMIN_ROLE_ID, SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import type { ApiClient } from '../support/client.js';
import { sessionFor } from '../support/fixtures.js';
import {
  auditOf,
  challenge,
  CSRF_COOKIE,
  expectError,
  member,
  PASSWORD,
  PROTECTED_ROUTE,
  registerPasskey,
  signIn,
  totpMember,
  userRow,
} from './helpers.js';

const ORG_VIEWER = SYSTEM_ROLES[5].id;

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => t?.close());

const reset = (api: ApiClient, userId: string, orgId?: string) =>
  api.post(`/users/${userId}/mfa/reset`, undefined, orgId ? { query: { orgId } } : {});

/** An organisation with an admin (TOTP, signed in with it) and a member holding TOTP, a passkey and a phone. */
async function orgWithTarget(opts: { orgSettings?: object } = {}) {
  const admin = await totpMember(t, { orgSettings: opts.orgSettings });
  const target = await totpMember(t, { partnerId: admin.partnerId, orgId: admin.orgId! });
  await registerPasskey(t, target.api);
  await t.deps.db
    .update(users)
    .set({ phoneNumber: '+12025550155', phoneVerified: true })
    .where(eq(users.id, target.user.id));
  return { admin, target };
}

describe('a reset clears every factor and ends every session of the user', () => {
  it('TOTP, recovery codes, phone and passkeys are gone; sessions, refresh tokens and pending challenges die; audited', async () => {
    const { admin, target } = await orgWithTarget();
    const pending = await challenge(t, target.email);
    const res = await reset(admin.api, target.user.id);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true });

    expect(await userRow(t, target.user.id)).toMatchObject({
      mfaSecret: null,
      mfaEnabled: false,
      mfaMethod: null,
      mfaRecoveryCodes: null,
      mfaLastTotpStep: null,
      phoneNumber: null,
      phoneVerified: false,
    });
    expect(await t.deps.db.select().from(passkeys).where(eq(passkeys.userId, target.user.id))).toHaveLength(0);

    expectError(await target.api.me(), 401, 'unauthenticated');
    const csrf = target.api.cookies.get(CSRF_COOKIE)!;
    expect(
      (await target.api.post('/auth/refresh', undefined, { token: null, headers: { 'x-service-csrf': csrf } })).status,
    ).toBe(401);
    expectError(
      await pending.api.post('/auth/mfa/verify', { tempToken: pending.body.tempToken, code: target.recoveryCodes[0]! }),
      401,
      'invalid_temp_token',
    );

    const audit = await auditOf(t, 'user.mfa_reset', target.user.id);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actorUserId: admin.user.id, orgId: admin.orgId, resourceType: 'user' });
    expect(audit[0]!.details).toMatchObject({ clearedMethod: 'totp', wasEnabled: true });
    expect((audit[0]!.details as { sessionsRevoked: number }).sessionsRevoked).toBeGreaterThan(0);

    // Without a policy, the next sign-in needs only the password.
    const next = await t.client().post('/auth/login', { email: target.email, password: PASSWORD });
    expect(next.status).toBe(200);
    expect(next.body).toMatchObject({ accessToken: expect.any(String), mfaEnrollmentRequired: false });
  });

  it('the audit names the cleared method: sms', async () => {
    const admin = await totpMember(t);
    const target = await member(t, { partnerId: admin.partnerId, orgId: admin.orgId! });
    await t.deps.db
      .update(users)
      .set({ phoneNumber: '+12025550156', phoneVerified: true, mfaEnabled: true, mfaMethod: 'sms' })
      .where(eq(users.id, target.user.id));
    expect((await reset(admin.api, target.user.id)).status).toBe(200);
    expect((await auditOf(t, 'user.mfa_reset', target.user.id))[0]!.details).toMatchObject({ clearedMethod: 'sms' });
  });

  it('the audit names the cleared method: passkey (a passkey-only account)', async () => {
    const admin = await totpMember(t);
    const target = await member(t, { partnerId: admin.partnerId, orgId: admin.orgId! });
    await registerPasskey(t, await signIn(t, target.email));
    expect((await reset(admin.api, target.user.id)).status).toBe(200);
    expect((await auditOf(t, 'user.mfa_reset', target.user.id))[0]!.details).toMatchObject({
      clearedMethod: 'passkey',
    });
    expect(await t.deps.db.select().from(passkeys).where(eq(passkeys.userId, target.user.id))).toHaveLength(0);
  });
});

describe('fresh enrolment is forced at the next login when a policy requires MFA', () => {
  it("the organisation enforces MFA: the reset works, and the user's next session is held at 428", async () => {
    const { admin, target } = await orgWithTarget({ orgSettings: { security: { requireMfa: true } } });
    expect((await reset(admin.api, target.user.id)).status).toBe(200);
    const login = await t.client().post('/auth/login', { email: target.email, password: PASSWORD });
    expect(login.status).toBe(200);
    expect(login.body.mfaEnrollmentRequired).toBe(true);
    const api = t.client().withToken(login.body.accessToken);
    expectError(await api.get(PROTECTED_ROUTE), 428, 'mfa_enrollment_required');
  });

  it('the role enforces MFA (Partner Admin resets another Partner Admin)', async () => {
    const admin = await totpMember(t, { kind: 'partner' });
    const target = await totpMember(t, { kind: 'partner', partnerId: admin.partnerId });
    expect((await reset(admin.api, target.user.id)).status).toBe(200);
    const login = await t.client().post('/auth/login', { email: target.email, password: PASSWORD });
    expect(login.body.mfaEnrollmentRequired).toBe(true);
  });

  it('a partner admin resets a member of one of its organisations (?orgId=)', async () => {
    const admin = await totpMember(t, { kind: 'partner' });
    const target = await totpMember(t, { partnerId: admin.partnerId });
    expect((await reset(admin.api, target.user.id, target.orgId!)).status).toBe(200);
    expect((await userRow(t, target.user.id)).mfaEnabled).toBe(false);
  });
});

describe('who may reset', () => {
  it('403 mfa_required when the acting session has not passed MFA (even though the account has MFA)', async () => {
    const { admin, target } = await orgWithTarget();
    const s = await sessionFor(
      t,
      admin.user.id,
      { scope: 'organization', partnerId: admin.partnerId, orgId: admin.orgId, roleId: ORG_ADMIN_ROLE_ID },
      false,
    );
    expectError(await reset(t.client().withToken(s.accessToken), target.user.id), 403, 'mfa_required');
    expect((await userRow(t, target.user.id)).mfaEnabled).toBe(true);
  });

  it('403 mfa_required for an admin who signed in with a password only', async () => {
    const admin = await member(t);
    const target = await totpMember(t, { partnerId: admin.partnerId, orgId: admin.orgId! });
    expectError(await reset(await signIn(t, admin.email), target.user.id), 403, 'mfa_required');
  });

  it('403 forbidden_self_action on your own account', async () => {
    const admin = await totpMember(t);
    expectError(await reset(admin.api, admin.user.id), 403, 'forbidden_self_action');
    expect((await userRow(t, admin.user.id)).mfaEnabled).toBe(true);
  });

  it('403 forbidden without users:write', async () => {
    const viewer = await totpMember(t, { roleId: ORG_VIEWER });
    const target = await totpMember(t, { partnerId: viewer.partnerId, orgId: viewer.orgId! });
    expectError(await reset(viewer.api, target.user.id), 403, 'forbidden');
  });

  it('404 for a user of another organisation or partner, or an unknown id; 400 for a malformed id', async () => {
    const admin = await totpMember(t);
    const stranger = await totpMember(t);
    const sibling = await totpMember(t, { partnerId: admin.partnerId }); // another org of the same partner
    expectError(await reset(admin.api, stranger.user.id), 404, 'not_found');
    expectError(await reset(admin.api, sibling.user.id), 404, 'not_found');
    expectError(await reset(admin.api, '00000000-0000-4000-8000-0000000000ff'), 404, 'not_found');
    expectError(await reset(admin.api, 'not-a-uuid'), 400, 'validation_failed');
    expect((await userRow(t, stranger.user.id)).mfaEnabled).toBe(true);
    expect((await userRow(t, sibling.user.id)).mfaEnabled).toBe(true);
    expect(await auditOf(t, 'user.mfa_reset', stranger.user.id)).toHaveLength(0);
  });

  it('an organisation admin cannot reach a partner-level user', async () => {
    const admin = await totpMember(t);
    const partnerUser = await totpMember(t, {
      kind: 'partner',
      partnerId: admin.partnerId,
      roleId: PARTNER_ADMIN_ROLE_ID,
    });
    expectError(await reset(admin.api, partnerUser.user.id), 404, 'not_found');
  });
});

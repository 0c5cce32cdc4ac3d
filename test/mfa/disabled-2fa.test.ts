// ENABLE_2FA=false: sign-in never asks for a second factor, Force MFA holds nobody,
// every MFA, phone and passkey route answers 404, and the admin MFA reset still works.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { passkeys, users } from '../../src/db/schema/index.js';
import { sealTotp } from '../../src/modules/mfa/factors.js';
import { newTotpSecret } from '../../src/modules/mfa/codes.js';
import { startApp, type TestApp } from '../support/app.js';
import { auditOf, claimsOf, expectError, member, PASSWORD, PROTECTED_ROUTE, signIn, userRow } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp({ ENABLE_2FA: 'false' });
});
afterAll(async () => t?.close());

/** Gives an account an enrolled authenticator app and a passkey row directly (the enrolment routes are off). */
async function withFactors(userId: string) {
  const secret = newTotpSecret();
  await t.deps.db
    .update(users)
    .set({
      mfaSecret: sealTotp(t.deps.box, userId, secret),
      mfaEnabled: true,
      mfaMethod: 'totp',
      mfaRecoveryCodes: ['a'.repeat(64)],
      phoneNumber: '+12025550199',
      phoneVerified: true,
    })
    .where(eq(users.id, userId));
  await t.deps.db
    .insert(passkeys)
    .values({ userId, name: 'Key', credentialId: `cred-${userId}`, publicKey: 'AAAA', counter: 3 });
}

const MFA_ROUTES: [string, string, unknown?][] = [
  ['POST', '/auth/mfa/setup'],
  ['POST', '/auth/mfa/verify', { code: '123456' }],
  ['POST', '/auth/mfa/verify', { code: '123456', tempToken: 'x'.repeat(43) }],
  ['POST', '/auth/mfa/enable', { code: '123456' }],
  ['POST', '/auth/mfa/disable', { currentPassword: PASSWORD, code: '123456' }],
  ['POST', '/auth/mfa/recovery-codes'],
  ['POST', '/auth/phone/verify', { phoneNumber: '+12025550123' }],
  ['POST', '/auth/phone/confirm', { code: '123456' }],
  ['POST', '/auth/mfa/sms/enable'],
  ['POST', '/auth/mfa/sms/send', { tempToken: 'x'.repeat(43) }],
  ['POST', '/auth/passkeys/register/options', { currentPassword: PASSWORD, name: 'Key' }],
  ['POST', '/auth/passkeys/register/verify', { credential: {} }],
  ['GET', '/auth/passkeys'],
  ['PATCH', '/auth/passkeys/00000000-0000-4000-8000-000000000001', { name: 'New' }],
  ['DELETE', '/auth/passkeys/00000000-0000-4000-8000-000000000001', { currentPassword: PASSWORD }],
  ['POST', '/auth/mfa/passkey/options', { tempToken: 'x'.repeat(43) }],
  ['POST', '/auth/mfa/passkey/verify', { tempToken: 'x'.repeat(43), credential: {} }],
];

describe('sign-in never asks for a second factor', () => {
  it('an account with TOTP and a passkey enrolled gets tokens from the password alone (mfa: false)', async () => {
    const m = await member(t);
    await withFactors(m.user.id);
    const res = await t.client().post('/auth/login', { email: m.email, password: PASSWORD });
    expect(res.status, res.text).toBe(200);
    expect(res.body.mfaRequired).toBeUndefined();
    expect(res.body.tempToken).toBeUndefined();
    expect(claimsOf(res.body.accessToken).mfa).toBe(false);
    expect(res.body.mfaEnrollmentRequired).toBe(false);
  });

  it('Force MFA holds nobody: a Partner Admin without a factor is not at 428', async () => {
    const m = await member(t, { kind: 'partner' });
    const login = await t.client().post('/auth/login', { email: m.email, password: PASSWORD });
    expect(login.body.mfaEnrollmentRequired).toBe(false);
    expect((await t.client().withToken(login.body.accessToken).get(PROTECTED_ROUTE)).status).toBe(200);
  });

  it("nor does an organisation's requireMfa", async () => {
    const m = await member(t, { orgSettings: { security: { requireMfa: true } } });
    expect((await (await signIn(t, m.email)).get(PROTECTED_ROUTE)).status).toBe(200);
  });
});

describe('the enrolment and challenge routes answer 404', () => {
  it.each(MFA_ROUTES)('%s %s → 404 not_found, signed in or not', async (method, path, body) => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    expectError(await api.raw.request(method, path, { body }), 404, 'not_found');
    expectError(await t.client().raw.request(method, path, { body }), 404, 'not_found');
  });
});

describe('the admin MFA reset still works', () => {
  it('an admin signed in with a password (the only way here) resets a member: factors and passkeys cleared, sessions ended, audited', async () => {
    const admin = await member(t);
    const target = await member(t, { partnerId: admin.partnerId, orgId: admin.orgId! });
    await withFactors(target.user.id);
    const targetApi = await signIn(t, target.email);
    const adminApi = await signIn(t, admin.email);
    const res = await adminApi.post(`/users/${target.user.id}/mfa/reset`);
    expect(res.status, res.text).toBe(200);
    expect(await userRow(t, target.user.id)).toMatchObject({
      mfaSecret: null,
      mfaEnabled: false,
      mfaMethod: null,
      mfaRecoveryCodes: null,
      phoneNumber: null,
      phoneVerified: false,
    });
    expect(await t.deps.db.select().from(passkeys).where(eq(passkeys.userId, target.user.id))).toHaveLength(0);
    expectError(await targetApi.me(), 401, 'unauthenticated');
    expect((await auditOf(t, 'user.mfa_reset', target.user.id))[0]!.details).toMatchObject({ clearedMethod: 'totp' });
  });

  it('still refuses your own account and users outside your scope', async () => {
    const admin = await member(t);
    const stranger = await member(t);
    const adminApi = await signIn(t, admin.email);
    expectError(await adminApi.post(`/users/${admin.user.id}/mfa/reset`), 403, 'forbidden_self_action');
    expectError(await adminApi.post(`/users/${stranger.user.id}/mfa/reset`), 404, 'not_found');
  });
});

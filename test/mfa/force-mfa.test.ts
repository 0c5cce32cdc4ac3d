// Force MFA: the role's forceMfa, the organisation's or the partner's requireMfa hold
// a user without a factor at 428 mfa_enrollment_required on protected routes, offering the allowed methods.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roles } from '../../src/db/schema/index.js';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import type { ApiClient } from '../support/client.js';
import { createOrg, addOrgMember, createUser } from '../support/fixtures.js';
import {
  enrolTotp,
  expectError,
  member,
  PASSWORD,
  PROTECTED_ROUTE,
  registerPasskey,
  setOrgSettings,
  signIn,
} from './helpers.js';

const PARTNER_TECHNICIAN = SYSTEM_ROLES[1].id;

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => t?.close());

async function expectHeld(api: ApiClient, allowed = ['totp', 'sms', 'passkey']) {
  const res = await api.get(PROTECTED_ROUTE);
  expectError(res, 428, 'mfa_enrollment_required');
  expect(res.body.enrollUrl).toEqual(expect.stringMatching(/^http/));
  expect(res.body.allowedMethods).toEqual(allowed);
  return res;
}

/** The SMS body of the log provider (SMS_PROVIDER=log, non-production) for a number. */
function loggedSmsCode(phone: string): string {
  const lines = t
    .logs()
    .split('\n')
    .filter((l) => l.includes(phone) && l.includes('"sms"'));
  const m = /code is (\d{6})/.exec(lines.at(-1) ?? '');
  if (!m) throw new Error(`no SMS to ${phone} in the log`);
  return m[1]!;
}

describe("the role's Force MFA", () => {
  it('a Partner Admin without a factor: login says mfaEnrollmentRequired; protected routes answer 428 with enrollUrl and allowedMethods', async () => {
    const m = await member(t, { kind: 'partner' });
    const api = t.client();
    const login = await api.post('/auth/login', { email: m.email, password: PASSWORD });
    expect(login.status).toBe(200);
    expect(login.body.mfaEnrollmentRequired).toBe(true);
    api.token = login.body.accessToken;
    await expectHeld(api);
    // 428 comes before the permission check: a route the role may not even use still says 428.
    expectError(await api.get('/users'), 428, 'mfa_enrollment_required');
    expectError(
      await api.post('/auth/change-password', { currentPassword: PASSWORD, newPassword: 'Glacier-7f3a9-Saffron!' }),
      428,
      'mfa_enrollment_required',
    );
  });

  it('the enrolment routes and the own profile stay reachable while held', async () => {
    const m = await member(t, { kind: 'partner' });
    const api = await signIn(t, m.email);
    expect((await api.get('/auth/me')).status).toBe(200);
    expect((await api.get('/users/me')).status).toBe(200);
    expect((await api.post('/auth/mfa/setup')).status).toBe(200);
    expect((await api.post('/auth/phone/verify', { phoneNumber: '+12025550177' })).status).toBe(200);
    expect((await api.get('/auth/passkeys')).status).toBe(200);
    expect((await api.post('/auth/passkeys/register/options', { currentPassword: PASSWORD, name: 'Key' })).status).toBe(
      200,
    );
    // Not an enrolment route: turning MFA off or rotating codes needs a factor first.
    expectError(await api.post('/auth/mfa/recovery-codes'), 428, 'mfa_enrollment_required');
    expectError(
      await api.post('/auth/mfa/disable', { currentPassword: PASSWORD, code: '123456' }),
      428,
      'mfa_enrollment_required',
    );
    expect((await api.post('/auth/logout')).status).toBe(200);
  });

  it('enrolling TOTP lifts the hold; the next login asks for the code', async () => {
    const m = await member(t, { kind: 'partner' });
    const api = await signIn(t, m.email);
    await expectHeld(api);
    await enrolTotp(t, api);
    expect((await api.get(PROTECTED_ROUTE)).status).toBe(200);
    const login = await t.client().post('/auth/login', { email: m.email, password: PASSWORD });
    expect(login.body).toMatchObject({ mfaRequired: true, mfaMethod: 'totp' });
  });

  it('registering a passkey lifts the hold', async () => {
    const m = await member(t, { kind: 'partner' });
    const api = await signIn(t, m.email);
    await expectHeld(api);
    await registerPasskey(t, api);
    expect((await api.get(PROTECTED_ROUTE)).status).toBe(200);
  });

  it('enabling SMS lifts the hold (log provider)', async () => {
    const m = await member(t, { kind: 'partner' });
    const api = await signIn(t, m.email);
    const phone = '+12025550166';
    expect((await api.post('/auth/phone/verify', { phoneNumber: phone })).status).toBe(200);
    expect((await api.post('/auth/phone/confirm', { code: loggedSmsCode(phone) })).status).toBe(200);
    const enable = await api.post('/auth/mfa/sms/enable');
    expect(enable.status, enable.text).toBe(200);
    api.token = enable.body.accessToken;
    expect((await api.get(PROTECTED_ROUTE)).status).toBe(200);
  });

  it('a custom role with forceMfa holds its members too', async () => {
    const owner = await member(t); // an organisation to hold the custom role
    const [role] = await t.deps.db
      .insert(roles)
      .values({ scope: 'organization', appliesTo: 'organization', orgId: owner.orgId!, name: 'Forced', forceMfa: true })
      .returning();
    const user = await createUser(t, { password: PASSWORD });
    await addOrgMember(t, { orgId: owner.orgId!, userId: user.id, roleId: role!.id });
    const api = await signIn(t, user.email);
    await expectHeld(api);
  });

  it('a role without forceMfa in a policy-free organisation is not held', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    expect((await api.get(PROTECTED_ROUTE)).status).toBe(200);
  });
});

describe("the organisation's and the partner's requireMfa", () => {
  it("the organisation's requireMfa holds its users; allowedMethods follow allowedMfaMethods", async () => {
    const m = await member(t, { orgSettings: { security: { requireMfa: true, allowedMfaMethods: { sms: false } } } });
    const api = await signIn(t, m.email);
    await expectHeld(api, ['totp', 'passkey']);
    expectError(await api.post('/auth/mfa/sms/enable'), 403, 'sms_not_allowed');
  });

  it("the partner's requireMfa holds the partner's own users and its organisations' users", async () => {
    const settings = { security: { requireMfa: true } };
    const tech = await member(t, { kind: 'partner', roleId: PARTNER_TECHNICIAN, partnerSettings: settings });
    await expectHeld(await signIn(t, tech.email));
    const orgUser = await member(t, { partnerId: tech.partnerId });
    await expectHeld(await signIn(t, orgUser.email));
    // A sibling organisation of another partner is untouched.
    const free = await member(t);
    expect((await (await signIn(t, free.email)).get(PROTECTED_ROUTE)).status).toBe(200);
  });

  it("the partner's method restrictions apply to its organisations (the strictest wins)", async () => {
    const m = await member(t, {
      partnerSettings: { security: { allowedMfaMethods: { passkey: false } } },
      orgSettings: { security: { requireMfa: true, allowedMfaMethods: { sms: false } } },
    });
    await expectHeld(await signIn(t, m.email), ['totp']);
  });

  it('a policy switched on holds existing sessions from their next request', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    expect((await api.get(PROTECTED_ROUTE)).status).toBe(200);
    await setOrgSettings(t, m.orgId!, { security: { requireMfa: true } });
    await expectHeld(api);
    await setOrgSettings(t, m.orgId!, {});
    expect((await api.get(PROTECTED_ROUTE)).status).toBe(200);
  });

  it('the hold follows the membership the session acts in (switch-context)', async () => {
    const m = await member(t, { orgSettings: { security: { requireMfa: true } } });
    const free = await createOrg(t, m.partnerId);
    await addOrgMember(t, { orgId: free.id, userId: m.user.id });
    const api = await signIn(t, m.email);
    const toFree = await api.post('/auth/switch-context', { orgId: free.id });
    expect(toFree.status, toFree.text).toBe(200);
    expect(toFree.body.mfaEnrollmentRequired).toBe(false);
    api.token = toFree.body.accessToken;
    expect((await api.get(PROTECTED_ROUTE)).status).toBe(200);
    const toForced = await api.post('/auth/switch-context', { orgId: m.orgId! });
    expect(toForced.body.mfaEnrollmentRequired).toBe(true);
    api.token = toForced.body.accessToken;
    await expectHeld(api);
  });
});

// Passkey-first sign-in, going passwordless, passkey and TOTP step-up, phishing-resistant policy, all
// through HTTP with the software authenticator.
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roles, users } from '../../src/db/schema/index.js';
import { startApp, type TestApp } from '../support/app.js';
import { type ApiClient, errorBody } from '../support/client.js';
import { cloneCredential, getAssertion, type SoftCredential } from '../support/webauthn.js';
import {
  auditOf,
  claimsOf,
  enrolTotp,
  expectError,
  freshTotp,
  member,
  PASSWORD,
  registerPasskey,
  setOrgSettings,
  signIn,
  statuses,
} from '../mfa/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp({ RATE_LIMIT_LOGIN: '1000/900' });
});
afterAll(async () => {
  await t?.close();
});

/** A member with a password who registered one passkey (more with `count`); `api` is the signed-in client. */
async function passkeyMember(count = 1, opts: Parameters<typeof member>[1] = {}) {
  const m = await member(t, opts);
  const api = await signIn(t, m.email);
  const creds: SoftCredential[] = [];
  for (let i = 0; i < count; i++) creds.push((await registerPasskey(t, api, `Key ${i + 1}`)).credential);
  return { ...m, api, creds };
}

async function loginOptions(api: ApiClient = t.client()) {
  const res = await api.post('/auth/passkey/login/options');
  expect(res.status, res.text).toBe(200);
  return res.body.options;
}

/** The whole passwordless ceremony with a fresh cookie jar. */
async function passkeySignIn(credential: SoftCredential, opts: Parameters<typeof getAssertion>[3] = {}) {
  const api = t.client();
  const assertion = getAssertion(await loginOptions(api), t.deps.config.appUrl, credential, opts);
  const res = await api.post('/auth/passkey/login/verify', { credential: assertion });
  if (res.status === 200) api.token = res.body.accessToken;
  return { api, res, assertion };
}

async function reauth(api: ApiClient, credential: SoftCredential) {
  const res = await api.post('/auth/step-up/options');
  expect(res.status, res.text).toBe(200);
  return getAssertion(res.body.options, t.deps.config.appUrl, credential);
}

describe('passkey-first sign-in: the full ceremony', () => {
  it('options carry no e-mail and an empty allowCredentials, user verification required; verify answers the token response with mfa: true', async () => {
    const m = await passkeyMember();
    const api = t.client();
    const options = await loginOptions(api);
    expect(options.allowCredentials ?? []).toEqual([]);
    expect(options.userVerification).toBe('required');
    expect(options.rpId).toBe(new URL(t.deps.config.publicUrl).hostname);
    const res = await api.post('/auth/passkey/login/verify', {
      credential: getAssertion(options, t.deps.config.appUrl, m.creds[0]!),
    });
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual([
      'accessToken',
      'expiresIn',
      'mfaEnrollmentRequired',
      'tokenType',
      'user',
    ]);
    expect(res.body.user.id).toBe(m.user.id);
    expect(claimsOf(res.body.accessToken)).toMatchObject({ sub: m.user.id, mfa: true });
    expect(api.cookies.get('service_refresh_token')).toBeTruthy();
    api.token = res.body.accessToken;
    const me = (await api.get('/auth/sessions')).body.data.find((s: { current: boolean }) => s.current);
    expect(me).toMatchObject({ method: 'passkey', mfa: true });
    const audit = (await auditOf(t, 'user.login')).filter((a) => a.actorUserId === m.user.id).map((a) => a.details);
    expect(audit).toContainEqual({ method: 'passkey', mfa: true });
  });

  it('a credential stored without a resident key cannot answer an empty allow list (the authenticator refuses)', async () => {
    const m = await passkeyMember();
    const nonResident = { ...m.creds[0]!, discoverable: false };
    expect(() =>
      getAssertion(
        { challenge: 'x', rpId: new URL(t.deps.config.publicUrl).hostname, allowCredentials: [] } as never,
        t.deps.config.appUrl,
        nonResident,
      ),
    ).toThrow(/NotAllowedError/);
  });
});

describe('passkey-first sign-in: single-use challenges, counters, origin, user verification', () => {
  it('the same assertion twice: the second is 400 invalid_challenge', async () => {
    const m = await passkeyMember();
    const first = await passkeySignIn(m.creds[0]!);
    expect(first.res.status).toBe(200);
    expectError(
      await t.client().post('/auth/passkey/login/verify', { credential: first.assertion }),
      400,
      'invalid_challenge',
    );
  });

  it('the same assertion sent twice at once: exactly one 200', async () => {
    const m = await passkeyMember();
    const assertion = getAssertion(await loginOptions(), t.deps.config.appUrl, m.creds[0]!);
    const answers = await Promise.all(
      [0, 1, 2].map(() => t.client().post('/auth/passkey/login/verify', { credential: assertion })),
    );
    expect(statuses(answers)).toEqual([200, 400, 400]);
  });

  it('a challenge older than 5 minutes is void', async () => {
    const m = await passkeyMember();
    const options = await loginOptions();
    t.clock.advance(5 * 60_000 + 1000);
    expectError(
      await t
        .client()
        .post('/auth/passkey/login/verify', { credential: getAssertion(options, t.deps.config.appUrl, m.creds[0]!) }),
      400,
      'invalid_challenge',
    );
  });

  it('a clone reporting an old counter is refused; the real authenticator keeps working', async () => {
    const m = await passkeyMember();
    expect((await passkeySignIn(m.creds[0]!, { signCount: 5 })).res.status).toBe(200);
    const clone = cloneCredential(m.creds[0]!, 2);
    expectError((await passkeySignIn(clone)).res, 400, 'passkey_verification_failed');
    expect((await passkeySignIn(m.creds[0]!)).res.status).toBe(200);
  });

  it('no user verification, another origin, or a user handle naming another account: 400 passkey_verification_failed', async () => {
    const m = await passkeyMember();
    const other = await passkeyMember();
    expectError((await passkeySignIn(m.creds[0]!, { flags: 0x01 })).res, 400, 'passkey_verification_failed');
    const options = await loginOptions();
    const foreign = getAssertion(options, 'http://localhost:1', m.creds[0]!);
    expectError(
      await t.client().post('/auth/passkey/login/verify', { credential: foreign }),
      400,
      'passkey_verification_failed',
    );
    const lying = await passkeySignIn(m.creds[0]!, { userHandleOverride: other.creds[0]!.userHandle });
    expectError(lying.res, 400, 'passkey_verification_failed');
  });

  it('a disabled account cannot sign in with its passkey: 401 invalid_credentials, audited', async () => {
    const m = await passkeyMember();
    await t.deps.db.update(users).set({ status: 'disabled' }).where(eq(users.id, m.user.id));
    expectError((await passkeySignIn(m.creds[0]!)).res, 401, 'invalid_credentials');
    const failed = (await auditOf(t, 'auth.login.failed'))
      .filter((a) => a.actorUserId === m.user.id)
      .map((a) => a.details);
    expect(failed).toContainEqual({ method: 'passkey', reason: 'user_disabled' });
  });

  it('bad bodies are 400 validation_failed', async () => {
    expectError(await t.client().raw.post('/auth/passkey/login/verify', {}), 400, 'validation_failed');
    expectError(
      await t.client().raw.post('/auth/passkey/login/verify', { credential: { id: 'x' } }),
      400,
      'validation_failed',
    );
    expectError(
      await t.client().raw.post('/auth/passkey/login/verify', { credential: 'nope', email: 'a@b.c' }),
      400,
      'validation_failed',
    );
  });
});

describe('passkey-first sign-in: the login rate limit applies per address', () => {
  it('past RATE_LIMIT_LOGIN attempts from one address: 429 rate_limited with retryAfter', async () => {
    const limited = await startApp({ RATE_LIMIT_LOGIN: '3/900' });
    try {
      const bogus = {
        id: 'AAAA',
        rawId: 'AAAA',
        type: 'public-key' as const,
        response: { clientDataJSON: 'AAAA', authenticatorData: 'AAAA', signature: 'AAAA' },
      };
      const answers = [];
      for (let i = 0; i < 4; i++)
        answers.push(await limited.client().post('/auth/passkey/login/verify', { credential: bogus }));
      expect(answers.map((r) => r.status)).toEqual([400, 400, 400, 429]);
      expect(answers[3]!.body.retryAfter).toBeGreaterThan(0);
    } finally {
      await limited.close();
    }
  });
});

describe('going passwordless: DELETE /auth/password', () => {
  it('with two passkeys and a passkey proof: the password is gone, password login answers invalid_credentials, passkeys still sign in', async () => {
    const m = await passkeyMember(2);
    const res = await m.api.request('DELETE', '/auth/password', {
      body: { credential: await reauth(m.api, m.creds[1]!) },
    });
    expect(res.status, res.text).toBe(200);
    expect((await t.deps.db.select().from(users).where(eq(users.id, m.user.id)))[0]!.passwordHash).toBeNull();
    expectError(
      await t.client().post('/auth/login', { email: m.email, password: PASSWORD }),
      401,
      'invalid_credentials',
    );
    expect((await passkeySignIn(m.creds[0]!)).res.status).toBe(200);
    expect((await auditOf(t, 'auth.password.remove', m.user.id)).map((a) => a.details)).toEqual([
      { method: 'passkey' },
    ]);
  });

  it('with a passkey and TOTP, a TOTP code proves presence', async () => {
    const m = await passkeyMember(1);
    const { secret } = await enrolTotp(t, m.api);
    const res = await m.api.request('DELETE', '/auth/password', { body: { code: freshTotp(t, secret) } });
    expect(res.status, res.text).toBe(200);
  });

  it('refused with 403 last_sign_in_method when it would leave no way in: one passkey alone; a factor the organisation forbids does not count', async () => {
    const lone = await passkeyMember(1);
    expectError(
      await lone.api.request('DELETE', '/auth/password', {
        body: { credential: await reauth(lone.api, lone.creds[0]!) },
      }),
      403,
      'last_sign_in_method',
    );
    expect((await t.deps.db.select().from(users).where(eq(users.id, lone.user.id)))[0]!.passwordHash).not.toBeNull();

    const m = await passkeyMember(1);
    const { secret } = await enrolTotp(t, m.api);
    await setOrgSettings(t, m.orgId!, { security: { allowedMfaMethods: { totp: false } } });
    expectError(
      await m.api.request('DELETE', '/auth/password', { body: { credential: await reauth(m.api, m.creds[0]!) } }),
      403,
      'last_sign_in_method',
    );
    void secret;
  });

  it('the password is not a proof here, a wrong code is refused, and bodies are validated', async () => {
    const m = await passkeyMember(2);
    expectError(
      await m.api.raw.request('DELETE', '/auth/password', { body: { password: PASSWORD } }),
      400,
      'validation_failed',
    );
    expectError(await m.api.request('DELETE', '/auth/password', { body: {} }), 400, 'validation_failed');
    expectError(await m.api.request('DELETE', '/auth/password', { body: { code: '000000' } }), 401, 'invalid_mfa_code');
  });
});

describe('step-up with a passkey or a TOTP code; under required MFA the password is not enough', () => {
  it('a stale session steps up with a passkey assertion or a TOTP code; the password is refused when the policy requires MFA', async () => {
    const m = await passkeyMember(1, { orgSettings: { security: { requireMfa: true } } });
    const { secret } = await enrolTotp(t, m.api);
    t.clock.advance(11 * 60_000);
    const role = { name: `Role ${randomBytes(3).toString('hex')}`, permissions: [] };
    const refused = await m.api.post('/roles', role);
    expectError(refused, 403, 'step_up_required');
    expect(errorBody(refused).methods).toEqual(['totp', 'passkey']);
    expectError(await m.api.post('/auth/step-up', { password: PASSWORD }), 403, 'mfa_method_not_allowed');
    const byKey = await m.api.post('/auth/step-up', { credential: await reauth(m.api, m.creds[0]!) });
    expect(byKey.status, byKey.text).toBe(200);
    m.api.token = byKey.body.accessToken;
    expect((await m.api.post('/roles', role)).status).toBe(201);
    t.clock.advance(11 * 60_000);
    expectError(await m.api.post('/roles', { ...role, name: `${role.name} 2` }), 403, 'step_up_required');
    const byCode = await m.api.post('/auth/step-up', { code: freshTotp(t, secret) });
    expect(byCode.status, byCode.text).toBe(200);
  });
});

describe('phishing-resistant MFA (organisation setting and role flag): only passkeys satisfy MFA', () => {
  it('organisation: a TOTP sign-in is not MFA, TOTP enrolment is refused, step-up offers passkeys only; a passkey sign-in is MFA', async () => {
    const m = await passkeyMember(1);
    const { secret } = await enrolTotp(t, m.api);
    await setOrgSettings(t, m.orgId!, { security: { phishingResistantOnly: true } });
    const { api: totpApi } = await (async () => {
      const api = t.client();
      const login = await api.post('/auth/login', { email: m.email, password: PASSWORD });
      const res = await api.post('/auth/mfa/verify', { tempToken: login.body.tempToken, code: freshTotp(t, secret) });
      expect(res.status, res.text).toBe(200);
      api.token = res.body.accessToken;
      return { api };
    })();
    expectError(await totpApi.post('/auth/mfa/recovery-codes'), 403, 'mfa_required');
    t.clock.advance(11 * 60_000);
    const refused = await totpApi.post('/roles', { name: `R ${randomBytes(3).toString('hex')}`, permissions: [] });
    expectError(refused, 403, 'step_up_required');
    expect(errorBody(refused).methods).toEqual(['passkey']);
    const { api: keyApi } = await passkeySignIn(m.creds[0]!);
    expect((await keyApi.post('/auth/mfa/recovery-codes')).status).toBe(200);
    expectError(await keyApi.post('/auth/mfa/setup'), 403, 'mfa_method_not_allowed');
  });

  it('role flag: holders without a passkey must enrol one (428); holders of other roles are unaffected', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const created = await api.post('/roles', {
      name: `Phish-proof ${randomBytes(3).toString('hex')}`,
      permissions: [{ resource: 'devices', action: 'read' }],
      phishingResistantOnly: true,
    });
    expect(created.status, created.text).toBe(201);
    expect((await t.deps.db.select().from(roles).where(eq(roles.id, created.body.id)))[0]!.phishingResistantOnly).toBe(
      true,
    );
    const holder = await member(t, { partnerId: m.partnerId, orgId: m.orgId!, roleId: created.body.id });
    const held = await signIn(t, holder.email);
    const res = await held.get('/roles');
    expectError(res, 428, 'mfa_enrollment_required');
    expect(res.body.allowedMethods).toEqual(['passkey']);
    expect((await api.get('/auth/me')).status).toBe(200);
  });
});

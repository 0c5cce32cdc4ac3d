// Passkeys through the whole WebAuthn ceremony with a software authenticator:
// registration behind a password re-check, single-use 5-minute challenges, clone detection, list/rename/delete.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { passkeys } from '../../src/db/schema/index.js';
import { startApp, type TestApp } from '../support/app.js';
import { cloneCredential, createCredential, getAssertion } from '../support/webauthn.js';
import {
  auditOf,
  challenge,
  claimsOf,
  enrolTotp,
  expectError,
  member,
  passkeyAssertion,
  PASSWORD,
  registerPasskey,
  signIn,
  statuses,
  userRow,
} from './helpers.js';

let t: TestApp;
let origin: string;
beforeAll(async () => {
  t = await startApp();
  origin = t.deps.config.appUrl;
});
afterAll(async () => t?.close());

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64url');

describe('registration options re-check the password', () => {
  it('the options name this RP (host of PUBLIC_URL), the user, ES256 and attestation none', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const res = await api.post('/auth/passkeys/register/options', { currentPassword: PASSWORD, name: 'Laptop' });
    expect(res.status, res.text).toBe(200);
    const o = res.body.options;
    expect(o.rp).toMatchObject({ id: 'localhost', name: 'Gatehouse' });
    expect(o.user.name).toBe(m.email);
    expect(o.challenge).toMatch(/^[A-Za-z0-9_-]{32,}$/);
    expect(o.pubKeyCredParams.map((p: { alg: number }) => p.alg)).toContain(-7);
    expect(o.attestation).toBe('none');
    expect(o.timeout).toBe(300_000);
    expect(o.excludeCredentials).toEqual([]);
  });

  it('a wrong current password: 400 invalid_credentials, and no challenge is issued', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    expectError(
      await api.post('/auth/passkeys/register/options', { currentPassword: 'not the password at all', name: 'X' }),
      400,
      'invalid_credentials',
    );
  });

  it('the re-check has its own rate limit, separate from login: 429 with retryAfter while login still works', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const { limit } = t.deps.config.rateLimits.passwordRecheck;
    for (let i = 0; i < limit; i++) {
      expectError(
        await api.post('/auth/passkeys/register/options', { currentPassword: `wrong password ${i}`, name: 'X' }),
        400,
        'invalid_credentials',
      );
    }
    const limited = await api.post('/auth/passkeys/register/options', { currentPassword: PASSWORD, name: 'X' });
    expectError(limited, 429, 'rate_limited');
    expect(limited.body.retryAfter).toBeGreaterThan(0);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // Sign-in has its own budget.
    expect((await t.client().post('/auth/login', { email: m.email, password: PASSWORD })).status).toBe(200);
  });

  it('an organisation that does not allow passkeys: 403 mfa_method_not_allowed', async () => {
    const m = await member(t, { orgSettings: { security: { allowedMfaMethods: { passkey: false } } } });
    const api = await signIn(t, m.email);
    expectError(
      await api.post('/auth/passkeys/register/options', { currentPassword: PASSWORD, name: 'X' }),
      403,
      'mfa_method_not_allowed',
    );
  });
});

describe('the whole ceremony with a software authenticator', () => {
  it('register, list, then sign in with the passkey: tokens with mfa: true', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const { credential, passkey } = await registerPasskey(t, api, 'Work laptop');
    expect(Object.keys(passkey).sort()).toEqual(['backedUp', 'createdAt', 'id', 'lastUsedAt', 'name', 'transports']);
    expect(passkey).toMatchObject({ name: 'Work laptop', lastUsedAt: null, transports: ['internal'] });
    const row = await userRow(t, m.user.id);
    expect(row).toMatchObject({ mfaEnabled: true, mfaMethod: 'passkey' });
    const audit = await auditOf(t, 'auth.mfa.passkey.register', passkey.id);
    expect(audit).toHaveLength(1);
    expect(audit[0]!.actorUserId).toBe(m.user.id);

    const list = await api.get('/auth/passkeys');
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([passkey]);
    expect(list.text).not.toContain(credential.id); // no credential id or public key on the wire

    const { api: c, body } = await challenge(t, m.email);
    expect(body).toMatchObject({ mfaRequired: true, mfaMethod: 'passkey', passkeyAvailable: true });
    const { options, assertion } = await passkeyAssertion(t, c, body.tempToken, credential);
    expect(options.rpId).toBe('localhost');
    expect(options.allowCredentials.map((x: { id: string }) => x.id)).toEqual([credential.id]);
    const res = await c.post('/auth/mfa/passkey/verify', { tempToken: body.tempToken, credential: assertion });
    expect(res.status, res.text).toBe(200);
    expect(claimsOf(res.body.accessToken).mfa).toBe(true);
    expect(c.cookies.get('service_refresh_token')).toBeTruthy();
    const [stored] = await t.deps.db.select().from(passkeys).where(eq(passkeys.id, passkey.id));
    expect(stored!.counter).toBe(1);
    expect(stored!.lastUsedAt).not.toBeNull();
    // The tempToken is spent.
    expectError(await c.post('/auth/mfa/passkey/options', { tempToken: body.tempToken }), 401, 'invalid_temp_token');
  });

  it('the first passkey becomes primary only when no TOTP or SMS factor exists; the passkey may replace the TOTP step', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    await enrolTotp(t, api);
    const { credential } = await registerPasskey(t, api);
    expect((await userRow(t, m.user.id)).mfaMethod).toBe('totp');
    const { api: c, body } = await challenge(t, m.email);
    expect(body).toMatchObject({ mfaMethod: 'totp', passkeyAvailable: true });
    const { assertion } = await passkeyAssertion(t, c, body.tempToken, credential);
    const res = await c.post('/auth/mfa/passkey/verify', { tempToken: body.tempToken, credential: assertion });
    expect(res.status, res.text).toBe(200);
    expect(claimsOf(res.body.accessToken).mfa).toBe(true);
  });

  it('the passkey that turns MFA on ends the other password-only sessions; later passkeys do not', async () => {
    const m = await member(t);
    const other = await signIn(t, m.email);
    const api = await signIn(t, m.email);
    const { credential } = await registerPasskey(t, api, 'First');
    expectError(await other.me(), 401, 'unauthenticated');
    expect((await api.me()).status).toBe(200);
    const { api: second, body } = await challenge(t, m.email);
    const { assertion } = await passkeyAssertion(t, second, body.tempToken, credential);
    const signedIn = await second.post('/auth/mfa/passkey/verify', {
      tempToken: body.tempToken,
      credential: assertion,
    });
    second.token = signedIn.body.accessToken;
    await registerPasskey(t, api, 'Second');
    expect((await second.me()).status).toBe(200);
    expect((await api.me()).status).toBe(200);
  });

  it('a second registration lists the first passkey in excludeCredentials', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const { credential } = await registerPasskey(t, api, 'One');
    const res = await api.post('/auth/passkeys/register/options', { currentPassword: PASSWORD, name: 'Two' });
    expect(res.body.options.excludeCredentials.map((x: { id: string }) => x.id)).toEqual([credential.id]);
  });

  it('a credential already registered is refused: 409 conflict', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const first = await registerPasskey(t, api, 'One');
    const opts = await api.post('/auth/passkeys/register/options', { currentPassword: PASSWORD, name: 'Again' });
    // Attestation "none" carries no signature: the same attestation object under the new challenge.
    const replay = {
      ...first.response,
      response: {
        ...first.response.response,
        clientDataJSON: b64(
          JSON.stringify({
            type: 'webauthn.create',
            challenge: opts.body.options.challenge,
            origin,
            crossOrigin: false,
          }),
        ),
      },
    };
    expectError(await api.post('/auth/passkeys/register/verify', { credential: replay }), 409, 'conflict');
    expect(await t.deps.db.select().from(passkeys).where(eq(passkeys.userId, m.user.id))).toHaveLength(1);
  });
});

describe('registration challenges live 5 minutes and are single-use', () => {
  it('the same registration response twice: the second answers 400 invalid_challenge', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const { response } = await registerPasskey(t, api);
    expectError(await api.post('/auth/passkeys/register/verify', { credential: response }), 400, 'invalid_challenge');
  });

  it('two concurrent verifications of one registration: exactly one 201', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const opts = await api.post('/auth/passkeys/register/options', { currentPassword: PASSWORD, name: 'Race' });
    const { response } = createCredential(opts.body.options, origin);
    const results = await Promise.all(
      [1, 2, 3].map(() => api.post('/auth/passkeys/register/verify', { credential: response })),
    );
    expect(statuses(results)).toEqual([201, 400, 400]);
    for (const r of results.filter((x) => x.status === 400)) expect(r.body.code).toBe('invalid_challenge');
    expect(await t.deps.db.select().from(passkeys).where(eq(passkeys.userId, m.user.id))).toHaveLength(1);
  });

  it('after 5 minutes the registration challenge is void', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const opts = await api.post('/auth/passkeys/register/options', { currentPassword: PASSWORD, name: 'Late' });
    t.clock.advance(5 * 60_000 + 1000);
    const { response } = createCredential(opts.body.options, origin);
    expectError(await api.post('/auth/passkeys/register/verify', { credential: response }), 400, 'invalid_challenge');
    expect((await userRow(t, m.user.id)).mfaEnabled).toBe(false);
  });

  it('a newer options call voids the earlier challenge', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const first = await api.post('/auth/passkeys/register/options', { currentPassword: PASSWORD, name: 'A' });
    await api.post('/auth/passkeys/register/options', { currentPassword: PASSWORD, name: 'B' });
    const { response } = createCredential(first.body.options, origin);
    expectError(await api.post('/auth/passkeys/register/verify', { credential: response }), 400, 'invalid_challenge');
  });

  it("another account cannot complete someone's registration: 400 invalid_challenge", async () => {
    const a = await member(t);
    const b = await member(t);
    const apiA = await signIn(t, a.email);
    const apiB = await signIn(t, b.email);
    const opts = await apiA.post('/auth/passkeys/register/options', { currentPassword: PASSWORD, name: 'A' });
    const { response } = createCredential(opts.body.options, origin);
    expectError(await apiB.post('/auth/passkeys/register/verify', { credential: response }), 400, 'invalid_challenge');
    expect(await t.deps.db.select().from(passkeys).where(eq(passkeys.userId, b.user.id))).toHaveLength(0);
  });

  it('a response made for another origin is refused: 400 passkey_verification_failed', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const opts = await api.post('/auth/passkeys/register/options', { currentPassword: PASSWORD, name: 'Phished' });
    const port = new URL(origin).port;
    const { response } = createCredential(opts.body.options, `http://localhost:${Number(port) + 1}`);
    expectError(
      await api.post('/auth/passkeys/register/verify', { credential: response }),
      400,
      'passkey_verification_failed',
    );
  });

  it('a credential scoped to another RP id is refused', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const opts = await api.post('/auth/passkeys/register/options', { currentPassword: PASSWORD, name: 'Evil' });
    const { response } = createCredential(
      { ...opts.body.options, rp: { id: 'evil.test', name: 'Evil' } },
      'http://login.evil.test',
    );
    const res = await api.post('/auth/passkeys/register/verify', { credential: response });
    expectError(res, 400, 'passkey_verification_failed');
  });
});

describe('sign-in challenges are single-use and bound to their tempToken', () => {
  async function enrolled() {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const reg = await registerPasskey(t, api);
    return { ...m, api, ...reg };
  }

  it('an assertion replayed after a successful sign-in is refused: 400 invalid_challenge', async () => {
    const m = await enrolled();
    const first = await challenge(t, m.email);
    const { assertion } = await passkeyAssertion(t, first.api, first.body.tempToken, m.credential);
    expect(
      (await first.api.post('/auth/mfa/passkey/verify', { tempToken: first.body.tempToken, credential: assertion }))
        .status,
    ).toBe(200);
    const second = await challenge(t, m.email);
    expectError(
      await second.api.post('/auth/mfa/passkey/verify', { tempToken: second.body.tempToken, credential: assertion }),
      400,
      'invalid_challenge',
    );
  });

  it('the same assertion sent twice at once: exactly one 200', async () => {
    const m = await enrolled();
    const { api, body } = await challenge(t, m.email);
    const { assertion } = await passkeyAssertion(t, api, body.tempToken, m.credential);
    const results = await Promise.all(
      [1, 2, 3].map(() => api.post('/auth/mfa/passkey/verify', { tempToken: body.tempToken, credential: assertion })),
    );
    expect(statuses(results)).toEqual([200, 400, 400]);
    for (const r of results.filter((x) => x.status !== 200)) expect(r.body.code).toBe('invalid_challenge');
  });

  it('a challenge issued for one tempToken does not serve another: 400 invalid_challenge', async () => {
    const m = await enrolled();
    const a = await challenge(t, m.email);
    const b = await challenge(t, m.email);
    const { assertion } = await passkeyAssertion(t, a.api, a.body.tempToken, m.credential);
    expectError(
      await b.api.post('/auth/mfa/passkey/verify', { tempToken: b.body.tempToken, credential: assertion }),
      400,
      'invalid_challenge',
    );
  });

  it('a passkey of another account is refused: 400 passkey_verification_failed', async () => {
    const victim = await enrolled();
    const attacker = await enrolled();
    const { api, body } = await challenge(t, victim.email);
    const { assertion } = await passkeyAssertion(t, api, body.tempToken, attacker.credential, {
      ignoreAllowList: true,
    });
    expectError(
      await api.post('/auth/mfa/passkey/verify', { tempToken: body.tempToken, credential: assertion }),
      400,
      'passkey_verification_failed',
    );
  });

  it('a forged signature is refused: 400 passkey_verification_failed', async () => {
    const m = await enrolled();
    const { api, body } = await challenge(t, m.email);
    const { assertion } = await passkeyAssertion(t, api, body.tempToken, m.credential);
    const sig = Buffer.from(assertion.response.signature, 'base64url');
    sig.writeUInt8(sig.readUInt8(sig.length - 1) ^ 0x01, sig.length - 1);
    const forged = { ...assertion, response: { ...assertion.response, signature: sig.toString('base64url') } };
    expectError(
      await api.post('/auth/mfa/passkey/verify', { tempToken: body.tempToken, credential: forged }),
      400,
      'passkey_verification_failed',
    );
  });

  it('an assertion for another origin or without user presence is refused', async () => {
    const m = await enrolled();
    const { api, body } = await challenge(t, m.email);
    const o1 = await api.post('/auth/mfa/passkey/options', { tempToken: body.tempToken });
    const wrongOrigin = getAssertion(
      o1.body.options,
      `http://localhost:${Number(new URL(origin).port) + 1}`,
      m.credential,
    );
    expectError(
      await api.post('/auth/mfa/passkey/verify', { tempToken: body.tempToken, credential: wrongOrigin }),
      400,
      'passkey_verification_failed',
    );
    const o2 = await api.post('/auth/mfa/passkey/options', { tempToken: body.tempToken });
    const noPresence = getAssertion(o2.body.options, origin, m.credential, { flags: 0 });
    expectError(
      await api.post('/auth/mfa/passkey/verify', { tempToken: body.tempToken, credential: noPresence }),
      400,
      'passkey_verification_failed',
    );
    const o3 = await api.post('/auth/mfa/passkey/options', { tempToken: body.tempToken });
    const otherRp = getAssertion(o3.body.options, origin, m.credential, { rpIdOverride: 'evil.test' });
    expectError(
      await api.post('/auth/mfa/passkey/verify', { tempToken: body.tempToken, credential: otherRp }),
      400,
      'passkey_verification_failed',
    );
    // None of these spent the tempToken: the real assertion still works.
    const { assertion } = await passkeyAssertion(t, api, body.tempToken, m.credential);
    expect(
      (await api.post('/auth/mfa/passkey/verify', { tempToken: body.tempToken, credential: assertion })).status,
    ).toBe(200);
  });

  it('passkey options for an account without a passkey: 400 invalid_challenge', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    await enrolTotp(t, api);
    const { api: c, body } = await challenge(t, m.email);
    expect(body.passkeyAvailable).toBeUndefined();
    expectError(await c.post('/auth/mfa/passkey/options', { tempToken: body.tempToken }), 400, 'invalid_challenge');
  });
});

describe('a signature counter that goes backwards is refused (cloned authenticator)', () => {
  it('a clone reporting an old counter is refused; the real authenticator keeps working', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const { credential, passkey } = await registerPasskey(t, api);
    const clone = cloneCredential(credential);
    for (let i = 0; i < 2; i++) {
      const { api: c, body } = await challenge(t, m.email);
      const { assertion } = await passkeyAssertion(t, c, body.tempToken, credential);
      expect(
        (await c.post('/auth/mfa/passkey/verify', { tempToken: body.tempToken, credential: assertion })).status,
      ).toBe(200);
    }
    const { api: c, body } = await challenge(t, m.email);
    const { assertion: cloned } = await passkeyAssertion(t, c, body.tempToken, clone); // reports 1, stored is 2
    expectError(
      await c.post('/auth/mfa/passkey/verify', { tempToken: body.tempToken, credential: cloned }),
      400,
      'passkey_verification_failed',
    );
    const { assertion: equal } = await passkeyAssertion(t, c, body.tempToken, credential, { signCount: 2 }); // not greater
    expectError(
      await c.post('/auth/mfa/passkey/verify', { tempToken: body.tempToken, credential: equal }),
      400,
      'passkey_verification_failed',
    );
    const [stored] = await t.deps.db.select().from(passkeys).where(eq(passkeys.id, passkey.id));
    expect(stored!.counter).toBe(2);
    const { assertion } = await passkeyAssertion(t, c, body.tempToken, credential, { signCount: 3 });
    expect(
      (await c.post('/auth/mfa/passkey/verify', { tempToken: body.tempToken, credential: assertion })).status,
    ).toBe(200);
  });

  it('the real authenticator and its clone racing with the same counter: exactly one signs in', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const { credential } = await registerPasskey(t, api);
    const clone = cloneCredential(credential);
    const a = await challenge(t, m.email);
    const b = await challenge(t, m.email);
    const { assertion: real } = await passkeyAssertion(t, a.api, a.body.tempToken, credential);
    const { assertion: copy } = await passkeyAssertion(t, b.api, b.body.tempToken, clone);
    const results = await Promise.all([
      a.api.post('/auth/mfa/passkey/verify', { tempToken: a.body.tempToken, credential: real }),
      b.api.post('/auth/mfa/passkey/verify', { tempToken: b.body.tempToken, credential: copy }),
    ]);
    expect(statuses(results)).toEqual([200, 400]);
    expect(results.find((r) => r.status === 400)!.body.code).toBe('passkey_verification_failed');
  });
});

describe('list, rename and delete your own passkeys', () => {
  it('each user lists only their own passkeys', async () => {
    const a = await member(t);
    const b = await member(t);
    const apiA = await signIn(t, a.email);
    const apiB = await signIn(t, b.email);
    const pa = await registerPasskey(t, apiA, 'A1');
    await registerPasskey(t, apiB, 'B1');
    const list = await apiA.get('/auth/passkeys');
    expect(list.body.data.map((p: { id: string }) => p.id)).toEqual([pa.passkey.id]);
  });

  it('rename: 200 with the new name; a foreign or unknown id is 404; a bad id is 400', async () => {
    const a = await member(t);
    const b = await member(t);
    const apiA = await signIn(t, a.email);
    const apiB = await signIn(t, b.email);
    const { passkey } = await registerPasskey(t, apiA, 'Old');
    const ok = await apiA.patch(`/auth/passkeys/${passkey.id}`, { name: 'New name' });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.passkey).toMatchObject({ id: passkey.id, name: 'New name' });
    expectError(await apiB.patch(`/auth/passkeys/${passkey.id}`, { name: 'Stolen' }), 404, 'not_found');
    expectError(
      await apiA.patch('/auth/passkeys/00000000-0000-4000-8000-00000000abcd', { name: 'X' }),
      404,
      'not_found',
    );
    expectError(await apiA.patch('/auth/passkeys/not-a-uuid', { name: 'X' }), 400, 'validation_failed');
    expectError(await apiA.patch(`/auth/passkeys/${passkey.id}`, { name: '' }), 400, 'validation_failed');
    expectError(await apiA.patch(`/auth/passkeys/${passkey.id}`, { name: 'x'.repeat(101) }), 400, 'validation_failed');
    const [row] = await t.deps.db.select().from(passkeys).where(eq(passkeys.id, passkey.id));
    expect(row!.name).toBe('New name');
  });

  it('delete needs the current password; a foreign id is 404; success is audited and turns MFA off with the last factor', async () => {
    const a = await member(t);
    const b = await member(t);
    const apiA = await signIn(t, a.email);
    const apiB = await signIn(t, b.email);
    const { passkey } = await registerPasskey(t, apiA);
    expectError(
      await apiA.delete(`/auth/passkeys/${passkey.id}`, { body: { currentPassword: 'wrong password here' } }),
      400,
      'invalid_credentials',
    );
    expectError(
      await apiB.delete(`/auth/passkeys/${passkey.id}`, { body: { currentPassword: PASSWORD } }),
      404,
      'not_found',
    );
    expectError(await apiA.delete(`/auth/passkeys/${passkey.id}`), 400, 'validation_failed');
    const ok = await apiA.delete(`/auth/passkeys/${passkey.id}`, { body: { currentPassword: PASSWORD } });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toEqual({ success: true });
    expect(await t.deps.db.select().from(passkeys).where(eq(passkeys.userId, a.user.id))).toHaveLength(0);
    expect(await auditOf(t, 'auth.mfa.passkey.delete', passkey.id)).toHaveLength(1);
    expect(await userRow(t, a.user.id)).toMatchObject({ mfaEnabled: false, mfaMethod: null });
    expectError(
      await apiA.delete(`/auth/passkeys/${passkey.id}`, { body: { currentPassword: PASSWORD } }),
      404,
      'not_found',
    );
  });

  it('deleting the last factor under Force MFA (role): 403 last_factor_required and the passkey stays', async () => {
    const m = await member(t, { kind: 'partner' }); // Partner Admin: forceMfa
    const api = await signIn(t, m.email);
    const { passkey } = await registerPasskey(t, api);
    expectError(
      await api.delete(`/auth/passkeys/${passkey.id}`, { body: { currentPassword: PASSWORD } }),
      403,
      'last_factor_required',
    );
    expect(await t.deps.db.select().from(passkeys).where(eq(passkeys.userId, m.user.id))).toHaveLength(1);
    expect(await userRow(t, m.user.id)).toMatchObject({ mfaEnabled: true, mfaMethod: 'passkey' });
    expect(await auditOf(t, 'auth.mfa.passkey.delete', passkey.id)).toHaveLength(0);
  });

  it('deleting the last factor when the organisation requires MFA: 403 last_factor_required', async () => {
    const m = await member(t, { orgSettings: { security: { requireMfa: true } } });
    const api = await signIn(t, m.email);
    const { passkey } = await registerPasskey(t, api);
    expectError(
      await api.delete(`/auth/passkeys/${passkey.id}`, { body: { currentPassword: PASSWORD } }),
      403,
      'last_factor_required',
    );
  });

  it('under Force MFA a passkey can go when another factor remains', async () => {
    const m = await member(t, { kind: 'partner' });
    const api = await signIn(t, m.email);
    await enrolTotp(t, api);
    const { passkey } = await registerPasskey(t, api);
    const ok = await api.delete(`/auth/passkeys/${passkey.id}`, { body: { currentPassword: PASSWORD } });
    expect(ok.status, ok.text).toBe(200);
    expect(await userRow(t, m.user.id)).toMatchObject({ mfaEnabled: true, mfaMethod: 'totp' });
  });

  it('two passkeys, concurrently deleted under Force MFA: at most one goes', async () => {
    const m = await member(t, { kind: 'partner' });
    const api = await signIn(t, m.email);
    const one = await registerPasskey(t, api, 'One');
    const two = await registerPasskey(t, api, 'Two');
    const results = await Promise.all([
      api.delete(`/auth/passkeys/${one.passkey.id}`, { body: { currentPassword: PASSWORD } }),
      api.delete(`/auth/passkeys/${two.passkey.id}`, { body: { currentPassword: PASSWORD } }),
    ]);
    expect(statuses(results)).toEqual([200, 403]);
    expect(await t.deps.db.select().from(passkeys).where(eq(passkeys.userId, m.user.id))).toHaveLength(1);
  });

  it('registering or deleting a passkey voids a pending tempToken', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const first = await registerPasskey(t, api, 'One');
    const pending = await challenge(t, m.email);
    await registerPasskey(t, api, 'Two');
    expectError(
      await pending.api.post('/auth/mfa/passkey/options', { tempToken: pending.body.tempToken }),
      401,
      'invalid_temp_token',
    );
    const pending2 = await challenge(t, m.email);
    expect(
      (await api.delete(`/auth/passkeys/${first.passkey.id}`, { body: { currentPassword: PASSWORD } })).status,
    ).toBe(200);
    expectError(
      await pending2.api.post('/auth/mfa/passkey/options', { tempToken: pending2.body.tempToken }),
      401,
      'invalid_temp_token',
    );
  });
});

// TOTP: RFC 6238 parameters, setup valid 10 minutes, a code good once per step,
// the secret sealed at rest and never shown again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { Secret, TOTP } from 'otpauth';
import { authFlows } from '../../src/db/schema/index.js';
import { matchTotp, TOTP_PERIOD, totpFor } from '../../src/modules/mfa/codes.js';
import { startApp, type TestApp } from '../support/app.js';
import {
  auditOf,
  challenge,
  claimsOf,
  enrolTotp,
  expectError,
  freshTotp,
  member,
  signIn,
  statuses,
  totpCode,
  totpMember,
  userRow,
} from './helpers.js';

// RFC 6238 appendix B, SHA-1 rows: the seed is the ASCII string "12345678901234567890".
const RFC_SEED_BASE32 = new Secret({ buffer: new TextEncoder().encode('12345678901234567890').buffer as ArrayBuffer })
  .base32;
const RFC_SHA1_VECTORS: [number, string][] = [
  [59, '94287082'],
  [1111111109, '07081804'],
  [1111111111, '14050471'],
  [1234567890, '89005924'],
  [2000000000, '69279037'],
  [20000000000, '65353130'],
];

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => t?.close());

describe('TOTP codes follow RFC 6238 (SHA-1, 6 digits, 30 s)', () => {
  it('the seed of the RFC encodes as the usual base32 secret', () => {
    expect(RFC_SEED_BASE32).toBe('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
  });

  it.each(RFC_SHA1_VECTORS)('at T=%i the service generates the last six digits of %s', (seconds, eight) => {
    const totp = totpFor(RFC_SEED_BASE32);
    expect(totp.algorithm).toBe('SHA1');
    expect(totp.digits).toBe(6);
    expect(totp.period).toBe(30);
    expect(totp.generate({ timestamp: seconds * 1000 })).toBe(eight.slice(-6));
    // The same key with 8 digits gives the RFC's full value: the HOTP truncation is the RFC's.
    const eightDigit = new TOTP({
      algorithm: 'SHA1',
      digits: 8,
      period: 30,
      secret: Secret.fromBase32(RFC_SEED_BASE32),
    });
    expect(eightDigit.generate({ timestamp: seconds * 1000 })).toBe(eight);
  });

  it.each(RFC_SHA1_VECTORS)('at T=%i matchTotp accepts the vector and names its time step', (seconds, eight) => {
    const step = Math.floor(seconds / TOTP_PERIOD);
    expect(matchTotp(RFC_SEED_BASE32, eight.slice(-6), seconds * 1000)).toBe(step);
  });

  it('one step of drift either way is accepted, two are not', () => {
    const now = 1111111111 * 1000;
    const step = Math.floor(now / 1000 / TOTP_PERIOD);
    const at = (k: number) => totpFor(RFC_SEED_BASE32).generate({ timestamp: now + k * TOTP_PERIOD * 1000 });
    expect(matchTotp(RFC_SEED_BASE32, at(-1), now)).toBe(step - 1);
    expect(matchTotp(RFC_SEED_BASE32, at(1), now)).toBe(step + 1);
    expect(matchTotp(RFC_SEED_BASE32, at(-2), now)).toBeNull();
    expect(matchTotp(RFC_SEED_BASE32, at(2), now)).toBeNull();
    expect(matchTotp(RFC_SEED_BASE32, '000000', now) === null || at(0) === '000000').toBe(true);
  });
});

describe('TOTP setup through HTTP', () => {
  it('setup answers a base32 secret, an otpauth URL with the RFC parameters, a PNG data URL and ten recovery codes', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const res = await api.post('/auth/mfa/setup');
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['otpAuthUrl', 'qrCodeDataUrl', 'recoveryCodes', 'secret']);
    expect(res.body.secret).toMatch(/^[A-Z2-7]{32}$/); // 20 random bytes
    const url = new URL(res.body.otpAuthUrl);
    expect(url.protocol).toBe('otpauth:');
    expect(url.host).toBe('totp');
    expect(decodeURIComponent(url.pathname)).toContain(m.email);
    expect(url.searchParams.get('secret')).toBe(res.body.secret);
    expect(url.searchParams.get('algorithm')).toBe('SHA1');
    expect(url.searchParams.get('digits')).toBe('6');
    expect(url.searchParams.get('period')).toBe('30');
    expect(url.searchParams.get('issuer')).toBe('Gatehouse');
    expect(res.body.qrCodeDataUrl).toMatch(/^data:image\/png;base64,/);
    const png = Buffer.from(res.body.qrCodeDataUrl.split(',')[1]!, 'base64');
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(res.body.recoveryCodes).toHaveLength(10);
    expect(new Set(res.body.recoveryCodes).size).toBe(10);
    // Nothing is on until confirmed.
    expect((await api.me()).body.mfaEnabled).toBe(false);
  });

  it('confirming with POST /auth/mfa/enable turns MFA on, answers the same codes, mfa: true tokens and a refresh cookie', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const before = api.cookies.get('service_refresh_token');
    const setup = await api.post('/auth/mfa/setup');
    const res = await api.post('/auth/mfa/enable', { code: totpCode(t, setup.body.secret) });
    expect(res.status, res.text).toBe(200);
    expect(res.body.recoveryCodes).toEqual(setup.body.recoveryCodes);
    expect(claimsOf(res.body.accessToken).mfa).toBe(true);
    expect(res.body.user).toMatchObject({ mfaEnabled: true, mfaMethod: 'totp' });
    expect(api.cookies.get('service_refresh_token')).toBeTruthy();
    expect(api.cookies.get('service_refresh_token')).not.toBe(before);
    const audit = await auditOf(t, 'auth.mfa.setup', m.user.id);
    expect(audit).toHaveLength(1);
    expect(audit[0]!.details).toMatchObject({ method: 'totp' });
  });

  it('confirming with POST /auth/mfa/verify (bearer, no tempToken) works the same', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const setup = await api.post('/auth/mfa/setup');
    const res = await api.post('/auth/mfa/verify', { code: totpCode(t, setup.body.secret) });
    expect(res.status, res.text).toBe(200);
    expect(claimsOf(res.body.accessToken).mfa).toBe(true);
    expect(res.body.recoveryCodes).toEqual(setup.body.recoveryCodes);
    expect((await userRow(t, m.user.id)).mfaEnabled).toBe(true);
  });

  it('a wrong code does not confirm: 401 invalid_mfa_code, MFA still off', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const setup = await api.post('/auth/mfa/setup');
    const wrong = totpCode(t, setup.body.secret) === '123456' ? '654321' : '123456';
    expectError(await api.post('/auth/mfa/enable', { code: wrong }), 401, 'invalid_mfa_code');
    expect((await userRow(t, m.user.id)).mfaEnabled).toBe(false);
  });

  it('confirming revokes every other session of the user', async () => {
    const m = await member(t);
    const other = await signIn(t, m.email);
    const api = await signIn(t, m.email);
    await enrolTotp(t, api);
    expectError(await other.me(), 401, 'unauthenticated');
    expect((await api.me()).status).toBe(200);
  });

  it('the pending setup lives 10 minutes: after that, confirming answers 400 invalid_mfa_setup', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const setup = await api.post('/auth/mfa/setup');
    t.clock.advance(10 * 60_000 + 1000);
    const res = await api.post('/auth/mfa/enable', { code: totpCode(t, setup.body.secret) });
    // The access token outlives 10 minutes (15-minute TTL), so the refusal is the setup's own.
    expectError(res, 400, 'invalid_mfa_setup');
    expect((await userRow(t, m.user.id)).mfaEnabled).toBe(false);
  });

  it('a pending setup is still good just before 10 minutes', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const setup = await api.post('/auth/mfa/setup');
    t.clock.advance(10 * 60_000 - 5000);
    const res = await api.post('/auth/mfa/enable', { code: totpCode(t, setup.body.secret) });
    expect(res.status, res.text).toBe(200);
  });

  it('a second setup replaces the first: the first secret no longer confirms', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const first = await api.post('/auth/mfa/setup');
    const second = await api.post('/auth/mfa/setup');
    expect(second.body.secret).not.toBe(first.body.secret);
    const firstCode = totpCode(t, first.body.secret);
    if (firstCode !== totpCode(t, second.body.secret))
      expectError(await api.post('/auth/mfa/enable', { code: firstCode }), 401, 'invalid_mfa_code');
    const ok = await api.post('/auth/mfa/enable', { code: totpCode(t, second.body.secret) });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.recoveryCodes).toEqual(second.body.recoveryCodes);
  });

  it('setup while an authenticator is enrolled answers 409 mfa_already_enabled', async () => {
    const m = await totpMember(t);
    expectError(await m.api.post('/auth/mfa/setup'), 409, 'mfa_already_enabled');
  });

  it('two concurrent confirmations of one setup: exactly one succeeds', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const setup = await api.post('/auth/mfa/setup');
    const code = totpCode(t, setup.body.secret);
    const results = await Promise.all([api.post('/auth/mfa/enable', { code }), api.post('/auth/mfa/enable', { code })]);
    expect(statuses(results)).toEqual([400, 200].sort());
  });
});

describe('a TOTP code is accepted once per time step', () => {
  it('the code that confirmed setup does not also complete a sign-in', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const setup = await api.post('/auth/mfa/setup');
    const code = totpCode(t, setup.body.secret);
    expect((await api.post('/auth/mfa/enable', { code })).status).toBe(200);
    const { api: c, body } = await challenge(t, m.email);
    expectError(await c.post('/auth/mfa/verify', { tempToken: body.tempToken, code }), 401, 'invalid_mfa_code');
  });

  it('a code from an earlier step than the last accepted one is refused (no replay inside the drift window)', async () => {
    const m = await totpMember(t);
    const previous = totpCode(t, m.secret, -1); // within drift, but older than the step just used
    const { api, body } = await challenge(t, m.email);
    expectError(
      await api.post('/auth/mfa/verify', { tempToken: body.tempToken, code: previous }),
      401,
      'invalid_mfa_code',
    );
    const next = await api.post('/auth/mfa/verify', { tempToken: body.tempToken, code: freshTotp(t, m.secret) });
    expect(next.status, next.text).toBe(200);
  });

  it('a code one step ahead (drift) is accepted at sign-in', async () => {
    const m = await totpMember(t);
    t.clock.advance(30_000);
    const { api, body } = await challenge(t, m.email);
    const res = await api.post('/auth/mfa/verify', { tempToken: body.tempToken, code: totpCode(t, m.secret, 1) });
    expect(res.status, res.text).toBe(200);
  });

  it('two sign-ins racing with the same code: exactly one gets tokens', async () => {
    const m = await totpMember(t);
    const a = await challenge(t, m.email);
    const b = await challenge(t, m.email);
    const code = freshTotp(t, m.secret);
    const results = await Promise.all([
      a.api.post('/auth/mfa/verify', { tempToken: a.body.tempToken, code }),
      b.api.post('/auth/mfa/verify', { tempToken: b.body.tempToken, code }),
    ]);
    expect(statuses(results)).toEqual([200, 401]);
    expect(results.find((r) => r.status === 401)!.body.code).toBe('invalid_mfa_code');
  });

  it('a sign-in completed with TOTP carries mfa: true and names the method in the login audit', async () => {
    const m = await totpMember(t);
    expect(claimsOf(m.api.token!).mfa).toBe(true);
    const logins = (await auditOf(t, 'user.login')).filter((r) => r.actorUserId === m.user.id);
    expect(logins.at(-1)!.details).toMatchObject({ method: 'password+totp', mfa: true });
  });
});

describe('the TOTP secret is sealed at rest and never shown again', () => {
  it('users.mfa_secret holds an AES-GCM sealed value, not the base32 secret', async () => {
    const m = await totpMember(t);
    const row = await userRow(t, m.user.id);
    expect(row.mfaSecret).toMatch(/^gh1\.[0-9a-f]{8}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(row.mfaSecret).not.toContain(m.secret);
    expect(row.mfaSecret!.toUpperCase()).not.toContain(m.secret.slice(0, 12));
    // And it opens only under the key and the user it belongs to.
    expect(t.deps.box.open(row.mfaSecret!, `totp:${m.user.id}`)).toBe(m.secret);
    expect(() => t.deps.box.open(row.mfaSecret!, `totp:00000000-0000-0000-0000-000000000000`)).toThrow();
  });

  it('the pending setup stores the secret and the codes sealed too', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const setup = await api.post('/auth/mfa/setup');
    const flows = await t.deps.db
      .select()
      .from(authFlows)
      .where(and(eq(authFlows.userId, m.user.id), eq(authFlows.kind, 'mfa_setup')));
    expect(flows).toHaveLength(1);
    const stored = JSON.stringify(flows[0]!.data);
    expect(stored).not.toContain(setup.body.secret);
    for (const code of setup.body.recoveryCodes) expect(stored).not.toContain(code);
  });

  it('no later response carries the secret: enable, me, login, verify, refresh', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const setup = await api.post('/auth/mfa/setup');
    const secret: string = setup.body.secret;
    const texts: string[] = [];
    const enable = await api.post('/auth/mfa/enable', { code: totpCode(t, secret) });
    texts.push(enable.text);
    api.token = enable.body.accessToken;
    texts.push((await api.me()).text, (await api.usersMe()).text);
    const { api: c, body } = await challenge(t, m.email);
    texts.push(JSON.stringify(body));
    const verify = await c.post('/auth/mfa/verify', { tempToken: body.tempToken, code: freshTotp(t, secret) });
    texts.push(verify.text);
    const csrf = c.cookies.get('service_csrf_token')!;
    texts.push((await c.post('/auth/refresh', undefined, { token: null, headers: { 'x-service-csrf': csrf } })).text);
    for (const text of texts) {
      expect(text).not.toContain(secret);
      expect(text).not.toMatch(/mfaSecret|mfa_secret/);
    }
  });

  it('neither the secret nor the recovery codes reach the logs', async () => {
    const m = await totpMember(t);
    const logs = t.logs();
    expect(logs).not.toContain(m.secret);
    for (const code of m.recoveryCodes) expect(logs).not.toContain(code);
  });

  it('recovery codes are stored only as SHA-256 hashes', async () => {
    const m = await totpMember(t);
    const stored = (await userRow(t, m.user.id)).mfaRecoveryCodes!;
    expect(stored).toHaveLength(10);
    for (const h of stored) expect(h).toMatch(/^[0-9a-f]{64}$/);
    const text = JSON.stringify(stored);
    for (const code of m.recoveryCodes) {
      expect(text).not.toContain(code);
      expect(text).not.toContain(code.replace(/-/g, ''));
    }
  });
});

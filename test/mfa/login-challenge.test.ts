// The sign-in challenge: a tempToken valid 5 minutes, useless after success, void when the password or the factors
// change meanwhile, verification limited per user, tokens with mfa: true.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { users } from '../../src/db/schema/index.js';
import { startApp, type TestApp } from '../support/app.js';
import { linkToken, startMailCatcher, type MailCatcher } from '../support/smtp.js';
import {
  challenge,
  claimsOf,
  CSRF_COOKIE,
  expectError,
  freshTotp,
  PASSWORD,
  passkeyAssertion,
  registerPasskey,
  statuses,
  totpCode,
  totpMember,
  userRow,
  auditOf,
} from './helpers.js';

let t: TestApp;
let mail: MailCatcher;
beforeAll(async () => {
  mail = await startMailCatcher();
  t = await startApp({ SMTP_URL: mail.url });
});
afterAll(async () => {
  await t?.close();
  await mail?.close();
});

const NEW_PASSWORD = 'Glacier-4c1e-Saffron-Lantern!';
const wrongCode = (good: string) => (good === '000000' ? '111111' : '000000');

describe('the challenge answer', () => {
  it('mfaRequired, mfaMethod, tempToken and no tokens or cookies; passkeyAvailable only with a passkey', async () => {
    const m = await totpMember(t);
    const plain = await t.client().post('/auth/login', { email: m.email, password: PASSWORD });
    expect(plain.status).toBe(200);
    expect(Object.keys(plain.body).sort()).toEqual(['mfaMethod', 'mfaRequired', 'tempToken']);
    expect(plain.body.tempToken.length).toBeGreaterThanOrEqual(32);
    expect(plain.headers.getSetCookie()).toEqual([]);
    await registerPasskey(t, m.api);
    const withKey = await t.client().post('/auth/login', { email: m.email, password: PASSWORD });
    expect(withKey.body).toMatchObject({ mfaRequired: true, mfaMethod: 'totp', passkeyAvailable: true });
  });

  it('tokens issued by the second step carry mfa: true, and refresh keeps it', async () => {
    const m = await totpMember(t);
    expect(claimsOf(m.api.token!).mfa).toBe(true);
    const csrf = m.api.cookies.get(CSRF_COOKIE)!;
    const refreshed = await m.api.post('/auth/refresh', undefined, {
      token: null,
      headers: { 'x-service-csrf': csrf },
    });
    expect(refreshed.status, refreshed.text).toBe(200);
    expect(claimsOf(refreshed.body.accessToken).mfa).toBe(true);
  });
});

describe('a refused second factor at sign-in is on the audit trail', () => {
  it('a wrong code records auth.login.failed for the user, in its tenant, with step second_factor', async () => {
    const m = await totpMember(t);
    const { api, body } = await challenge(t, m.email);
    expectError(
      await api.post('/auth/mfa/verify', { tempToken: body.tempToken, code: wrongCode(totpCode(t, m.secret)) }),
      401,
      'invalid_mfa_code',
    );
    const rows = (await auditOf(t, 'auth.login.failed', m.user.id)).filter(
      (r) => (r.details as { step?: string }).step === 'second_factor',
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      result: 'failure',
      actorUserId: m.user.id,
      partnerId: m.partnerId,
      orgId: m.orgId,
      details: { method: 'code', reason: 'invalid_code' },
    });
  });
});

describe('a tempToken lives 5 minutes', () => {
  it('still good just before 5 minutes', async () => {
    const m = await totpMember(t);
    const { api, body } = await challenge(t, m.email);
    t.clock.advance(5 * 60_000 - 2000);
    const res = await api.post('/auth/mfa/verify', { tempToken: body.tempToken, code: totpCode(t, m.secret) });
    expect(res.status, res.text).toBe(200);
  });

  it('void after 5 minutes on every route that takes it: 401 invalid_temp_token', async () => {
    const m = await totpMember(t);
    await registerPasskey(t, m.api);
    const { api, body } = await challenge(t, m.email);
    t.clock.advance(5 * 60_000 + 1000);
    expectError(
      await api.post('/auth/mfa/verify', { tempToken: body.tempToken, code: totpCode(t, m.secret) }),
      401,
      'invalid_temp_token',
    );
    expectError(await api.post('/auth/mfa/sms/send', { tempToken: body.tempToken }), 401, 'invalid_temp_token');
    expectError(await api.post('/auth/mfa/passkey/options', { tempToken: body.tempToken }), 401, 'invalid_temp_token');
  });
});

describe('a tempToken is useless after success', () => {
  it('a second verify after a successful one: 401 invalid_temp_token', async () => {
    const m = await totpMember(t);
    const { api, body } = await challenge(t, m.email);
    expect(
      (await api.post('/auth/mfa/verify', { tempToken: body.tempToken, code: freshTotp(t, m.secret) })).status,
    ).toBe(200);
    expectError(
      await api.post('/auth/mfa/verify', { tempToken: body.tempToken, code: m.recoveryCodes[0]! }),
      401,
      'invalid_temp_token',
    );
    expectError(await api.post('/auth/mfa/passkey/options', { tempToken: body.tempToken }), 401, 'invalid_temp_token');
  });

  it('the same tempToken and code sent three times at once: exactly one 200', async () => {
    const m = await totpMember(t);
    const { api, body } = await challenge(t, m.email);
    const code = freshTotp(t, m.secret);
    const results = await Promise.all(
      [1, 2, 3].map(() => api.post('/auth/mfa/verify', { tempToken: body.tempToken, code })),
    );
    expect(statuses(results).filter((s) => s === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 200)) expect([401]).toContain(r.status);
  });

  it('one tempToken raced with a TOTP code and a recovery code: one sign-in; the recovery code is spent only if it won', async () => {
    const m = await totpMember(t);
    const { api, body } = await challenge(t, m.email);
    const [viaTotp, viaRecovery] = await Promise.all([
      api.post('/auth/mfa/verify', { tempToken: body.tempToken, code: freshTotp(t, m.secret) }),
      api.post('/auth/mfa/verify', { tempToken: body.tempToken, code: m.recoveryCodes[0]! }),
    ]);
    expect(statuses([viaTotp, viaRecovery])).toEqual([200, 401]);
    const left = (await userRow(t, m.user.id)).mfaRecoveryCodes!.length;
    expect(left).toBe(viaRecovery.status === 200 ? 9 : 10);
  });

  it('one tempToken raced with a TOTP code and a passkey assertion: exactly one 200', async () => {
    const m = await totpMember(t);
    const { credential } = await registerPasskey(t, m.api);
    const { api, body } = await challenge(t, m.email);
    const { assertion } = await passkeyAssertion(t, api, body.tempToken, credential);
    const results = await Promise.all([
      api.post('/auth/mfa/verify', { tempToken: body.tempToken, code: freshTotp(t, m.secret) }),
      api.post('/auth/mfa/passkey/verify', { tempToken: body.tempToken, credential: assertion }),
    ]);
    expect(statuses(results).filter((s) => s === 200)).toHaveLength(1);
  });
});

describe('a tempToken dies when the credentials change meanwhile', () => {
  it('the password is changed in another session: 401 invalid_temp_token', async () => {
    const m = await totpMember(t);
    const pending = await challenge(t, m.email);
    const changed = await m.api.post('/auth/change-password', { currentPassword: PASSWORD, newPassword: NEW_PASSWORD });
    expect(changed.status, changed.text).toBe(200);
    expectError(
      await pending.api.post('/auth/mfa/verify', { tempToken: pending.body.tempToken, code: freshTotp(t, m.secret) }),
      401,
      'invalid_temp_token',
    );
  });

  it('the password is reset by link: 401 invalid_temp_token', async () => {
    const m = await totpMember(t);
    const pending = await challenge(t, m.email);
    expect((await t.client().post('/auth/forgot-password', { email: m.email })).status).toBe(200);
    const token = linkToken(await mail.waitFor(m.email, (x) => /reset-password\?token=/.test(x.text)));
    const reset = await t.client().post('/auth/reset-password', { token, newPassword: NEW_PASSWORD });
    expect(reset.status, reset.text).toBe(200);
    expectError(
      await pending.api.post('/auth/mfa/verify', { tempToken: pending.body.tempToken, code: m.recoveryCodes[0]! }),
      401,
      'invalid_temp_token',
    );
  });

  it('MFA is disabled and enabled again in another session: the old tempToken stays dead', async () => {
    const m = await totpMember(t);
    const pending = await challenge(t, m.email);
    const disabled = await m.api.post('/auth/mfa/disable', { currentPassword: PASSWORD, code: freshTotp(t, m.secret) });
    expect(disabled.status, disabled.text).toBe(200);
    m.api.token = disabled.body.accessToken;
    const setup = await m.api.post('/auth/mfa/setup');
    const enabled = await m.api.post('/auth/mfa/enable', { code: totpCode(t, setup.body.secret) });
    expect(enabled.status, enabled.text).toBe(200);
    expectError(
      await pending.api.post('/auth/mfa/verify', {
        tempToken: pending.body.tempToken,
        code: freshTotp(t, setup.body.secret),
      }),
      401,
      'invalid_temp_token',
    );
  });

  it('the account is disabled meanwhile: 401 invalid_temp_token', async () => {
    const m = await totpMember(t);
    const pending = await challenge(t, m.email);
    await t.deps.db.update(users).set({ status: 'disabled' }).where(eq(users.id, m.user.id));
    expectError(
      await pending.api.post('/auth/mfa/verify', { tempToken: pending.body.tempToken, code: freshTotp(t, m.secret) }),
      401,
      'invalid_temp_token',
    );
  });

  it('a tempToken issued after the change works', async () => {
    const m = await totpMember(t);
    await m.api.post('/auth/change-password', { currentPassword: PASSWORD, newPassword: NEW_PASSWORD });
    const { api, body } = await challenge(t, m.email, NEW_PASSWORD);
    expect(
      (await api.post('/auth/mfa/verify', { tempToken: body.tempToken, code: freshTotp(t, m.secret) })).status,
    ).toBe(200);
  });
});

describe('wrong codes', () => {
  it('five wrong codes void the tempToken: the right code then answers 401 invalid_temp_token', async () => {
    const m = await totpMember(t);
    const { api, body } = await challenge(t, m.email);
    const good = freshTotp(t, m.secret);
    for (let i = 0; i < 5; i++)
      expectError(
        await api.post('/auth/mfa/verify', { tempToken: body.tempToken, code: wrongCode(good) }),
        401,
        'invalid_mfa_code',
      );
    expectError(
      await api.post('/auth/mfa/verify', { tempToken: body.tempToken, code: good }),
      401,
      'invalid_temp_token',
    );
  });

  it("another account's code does not open this account", async () => {
    const a = await totpMember(t);
    const b = await totpMember(t);
    const { api, body } = await challenge(t, a.email);
    expectError(
      await api.post('/auth/mfa/verify', { tempToken: body.tempToken, code: freshTotp(t, b.secret) }),
      401,
      'invalid_mfa_code',
    );
  });
});

describe('MFA verification is limited per user, separately from login', () => {
  it('after the limit, even the right code answers 429 rate_limited with retryAfter; login still answers; the window passes', async () => {
    t.clock.advance(t.deps.config.rateLimits.mfaVerify.windowSeconds * 1000);
    const m = await totpMember(t);
    const other = await totpMember(t);
    const { limit, windowSeconds } = t.deps.config.rateLimits.mfaVerify;
    let spent = 2; // confirming the setup and the sign-in of totpMember count too
    let tempToken = '';
    const good = () => totpCode(t, m.secret);
    while (spent < limit) {
      // At most four wrong codes per tempToken, so the per-token void never hides the per-user limit.
      const c = await challenge(t, m.email);
      tempToken = c.body.tempToken;
      for (let i = 0; i < 4 && spent < limit; i++, spent++) {
        expectError(
          await c.api.post('/auth/mfa/verify', { tempToken, code: wrongCode(good()) }),
          401,
          'invalid_mfa_code',
        );
      }
    }
    const fresh = await challenge(t, m.email); // login is not limited by the MFA budget
    const limited = await fresh.api.post('/auth/mfa/verify', {
      tempToken: fresh.body.tempToken,
      code: freshTotp(t, m.secret),
    });
    expectError(limited, 429, 'rate_limited');
    expect(limited.body.retryAfter).toBeGreaterThan(0);
    expect(limited.body.retryAfter).toBeLessThanOrEqual(windowSeconds);
    expect(limited.headers.get('retry-after')).toBe(String(limited.body.retryAfter));
    // Another user is not affected.
    const o = await challenge(t, other.email);
    expect(
      (await o.api.post('/auth/mfa/verify', { tempToken: o.body.tempToken, code: freshTotp(t, other.secret) })).status,
    ).toBe(200);
    // After the window, a new challenge goes through.
    t.clock.advance(windowSeconds * 1000 + 1000);
    const later = await challenge(t, m.email);
    const ok = await later.api.post('/auth/mfa/verify', {
      tempToken: later.body.tempToken,
      code: freshTotp(t, m.secret),
    });
    expect(ok.status, ok.text).toBe(200);
  });
});

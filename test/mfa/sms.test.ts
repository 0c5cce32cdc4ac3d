// SMS: E.164 numbers, phone verification, the SMS factor and sign-in codes, sent through a Twilio-compatible Messages
// API run by the test, with limits per phone, per user and per tempToken.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { startSmsSink, type SmsSink } from '../support/sms-sink.js';
import {
  setOrgSettings,
  auditOf,
  challenge,
  claimsOf,
  enrolTotp,
  expectError,
  freshTotp,
  member,
  PASSWORD,
  registerPasskey,
  signIn,
  userRow,
} from './helpers.js';
import type { ApiClient } from '../support/client.js';

let t: TestApp;
let sink: SmsSink;
beforeAll(async () => {
  sink = await startSmsSink();
  t = await startApp(sink.env());
});
afterAll(async () => {
  await t?.close();
  await sink?.close();
});

let phoneSeq = 0;
/** A distinct valid US number per call (NANP 202-555-01xx style numbers pass libphonenumber's checks). */
const newPhone = () => `+1202555${String(1000 + ((process.pid + phoneSeq++ * 7) % 9000)).padStart(4, '0')}`;

async function verifyPhone(api: ApiClient, phone: string) {
  const sent = await api.post('/auth/phone/verify', { phoneNumber: phone });
  expect(sent.status, sent.text).toBe(200);
  const res = await api.post('/auth/phone/confirm', { code: sink.lastCode(phone) });
  expect(res.status, res.text).toBe(200);
  return res;
}

/** A member with a verified phone and SMS as the second factor; the client carries the mfa: true tokens. */
async function smsMember(opts: Parameters<typeof member>[1] = {}) {
  const m = await member(t, opts);
  const api = await signIn(t, m.email);
  const phone = newPhone();
  await verifyPhone(api, phone);
  const enable = await api.post('/auth/mfa/sms/enable');
  expect(enable.status, enable.text).toBe(200);
  api.token = enable.body.accessToken;
  return { ...m, api, phone, recoveryCodes: enable.body.recoveryCodes as string[] };
}

describe('the Twilio-compatible sink speaks the Messages API', () => {
  it('refuses a request without the account credentials (401), takes a good one (201 JSON with a message sid)', async () => {
    const url = `${sink.url}/2010-04-01/Accounts/${sink.accountSid}/Messages.json`;
    const form = new URLSearchParams({ To: '+12025550100', From: sink.from, Body: 'hello 123456' });
    const anon = await fetch(url, { method: 'POST', body: form });
    expect(anon.status).toBe(401);
    const auth = `Basic ${Buffer.from(`${sink.accountSid}:${sink.authToken}`).toString('base64')}`;
    const wrongSid = await fetch(`${sink.url}/2010-04-01/Accounts/ACother/Messages.json`, {
      method: 'POST',
      headers: { authorization: auth },
      body: form,
    });
    expect(wrongSid.status).toBe(401);
    const ok = await fetch(url, { method: 'POST', headers: { authorization: auth }, body: form });
    expect(ok.status).toBe(201);
    expect(await ok.json()).toMatchObject({ sid: expect.stringMatching(/^SM/), to: '+12025550100', status: 'queued' });
    expect(sink.lastCode('+12025550100')).toBe('123456');
    const noBody = await fetch(url, {
      method: 'POST',
      headers: { authorization: auth },
      body: new URLSearchParams({ To: '+12025550100', From: sink.from }),
    });
    expect(noBody.status).toBe(400);
  });
});

describe('phone numbers must be E.164 with a real numbering plan', () => {
  it.each([
    ['2025550123', 'no leading +'],
    ['+1202555012', 'too short for its plan'],
    ['+99912345678', 'no such country code'],
    ['+1202555CALL', 'letters'],
    ['+44 7700 900123', 'a drama number, not assigned'],
    ['0044 20 7946 0958', 'international prefix instead of +'],
    ['+1 (202) 555-01234', 'one digit too many'],
  ])('%s (%s): 400 validation_failed naming phoneNumber, nothing sent', async (phone) => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const before = sink.messages.length;
    const res = await api.post('/auth/phone/verify', { phoneNumber: phone });
    expectError(res, 400, 'validation_failed');
    expect(res.body.details.fieldErrors.phoneNumber).toEqual([expect.stringMatching(/E\.164/)]);
    expect(sink.messages.length).toBe(before);
  });

  it.each([
    ['+1', 'too short for the schema'],
    ['+1'.padEnd(40, '2'), 'too long for the schema'],
  ])('%s (%s): 400 validation_failed', async (phone) => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    expectError(await api.post('/auth/phone/verify', { phoneNumber: phone }), 400, 'validation_failed');
  });

  it('spaces, dashes and parentheses around a valid number are accepted and stored as E.164', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const res = await api.post('/auth/phone/verify', { phoneNumber: '+1 (202) 555-0188' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true, phoneLast4: '0188' });
    expect(sink.countTo('+12025550188')).toBeGreaterThan(0);
  });
});

describe('phone verification and confirmation', () => {
  it('the code goes out through the provider (form To/From/Body, basic auth) and confirms the phone', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const phone = newPhone();
    const refusedBefore = sink.refused.length;
    const sent = await api.post('/auth/phone/verify', { phoneNumber: phone });
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body).toEqual({ success: true, phoneLast4: phone.slice(-4) });
    const msg = await sink.waitFor(phone);
    expect(msg.from).toBe(sink.from);
    expect(msg.accountSid).toBe(sink.accountSid);
    expect(msg.body).toMatch(/\b\d{6}\b/);
    expect(sink.refused.length).toBe(refusedBefore);

    expectError(
      await api.post('/auth/phone/confirm', { code: sink.lastCode(phone) === '000000' ? '111111' : '000000' }),
      401,
      'invalid_mfa_code',
    );
    const ok = await api.post('/auth/phone/confirm', { code: sink.lastCode(phone) });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toEqual({ success: true, phoneVerified: true, phoneLast4: phone.slice(-4) });
    expect((await api.me()).body).toMatchObject({
      phoneVerified: true,
      phoneLast4: phone.slice(-4),
      mfaEnabled: false,
    });
    expect((await userRow(t, m.user.id)).phoneNumber).toBe(phone);
    // The code is single-use.
    expectError(await api.post('/auth/phone/confirm', { code: sink.lastCode(phone) }), 401, 'invalid_mfa_code');
  });

  it('confirming with nothing pending: 401 invalid_mfa_code', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    expectError(await api.post('/auth/phone/confirm', { code: '123456' }), 401, 'invalid_mfa_code');
  });

  it('a phone code survives at most five wrong guesses', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const phone = newPhone();
    await api.post('/auth/phone/verify', { phoneNumber: phone });
    const code = sink.lastCode(phone);
    const wrong = code === '999999' ? '888888' : '999999';
    for (let i = 0; i < 5; i++)
      expectError(await api.post('/auth/phone/confirm', { code: wrong }), 401, 'invalid_mfa_code');
    expectError(await api.post('/auth/phone/confirm', { code }), 401, 'invalid_mfa_code');
    expect((await userRow(t, m.user.id)).phoneVerified).toBe(false);
  });

  it('a phone code expires after 10 minutes', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const phone = newPhone();
    await api.post('/auth/phone/verify', { phoneNumber: phone });
    t.clock.advance(10 * 60_000 + 1000);
    expectError(await api.post('/auth/phone/confirm', { code: sink.lastCode(phone) }), 401, 'invalid_mfa_code');
  });

  it('a new verification replaces the earlier code', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const phone = newPhone();
    await api.post('/auth/phone/verify', { phoneNumber: phone });
    const first = sink.lastCode(phone);
    await api.post('/auth/phone/verify', { phoneNumber: phone });
    const second = sink.lastCode(phone);
    if (first !== second) expectError(await api.post('/auth/phone/confirm', { code: first }), 401, 'invalid_mfa_code');
    expect((await api.post('/auth/phone/confirm', { code: second })).status).toBe(200);
  });

  it('the codes never reach the logs, and the full number does not either', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const phone = newPhone();
    await verifyPhone(api, phone);
    const logs = t.logs();
    expect(logs).not.toContain(sink.lastCode(phone));
    expect(logs).not.toContain(phone);
  });

  it('a provider failure is a server error in the envelope; the code is not leaked; a retry works', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const phone = newPhone();
    sink.failNext(500);
    const res = await api.post('/auth/phone/verify', { phoneNumber: phone });
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect(res.body).toMatchObject({ code: expect.any(String), errorId: expect.any(String) });
    expect(res.text).not.toMatch(/\b\d{6}\b(?![\w-])/);
    await verifyPhone(api, phone);
  });
});

describe('the SMS factor', () => {
  it('needs a verified phone: 400 phone_not_verified', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    expectError(await api.post('/auth/mfa/sms/enable'), 400, 'phone_not_verified');
    await api.post('/auth/phone/verify', { phoneNumber: newPhone() }); // sent but not confirmed
    expectError(await api.post('/auth/mfa/sms/enable'), 400, 'phone_not_verified');
  });

  it('enabling answers ten recovery codes and mfa: true tokens, ends other sessions, and is audited', async () => {
    const m = await member(t);
    const other = await signIn(t, m.email);
    const api = await signIn(t, m.email);
    await verifyPhone(api, newPhone());
    const res = await api.post('/auth/mfa/sms/enable');
    expect(res.status, res.text).toBe(200);
    expect(res.body.recoveryCodes).toHaveLength(10);
    expect(claimsOf(res.body.accessToken).mfa).toBe(true);
    expect(res.body.user).toMatchObject({ mfaEnabled: true, mfaMethod: 'sms' });
    expectError(await other.me(), 401, 'unauthenticated');
    const audit = await auditOf(t, 'auth.mfa.setup', m.user.id);
    expect(audit.map((a) => a.details)).toEqual([expect.objectContaining({ method: 'sms' })]);
  });

  it("403 sms_not_allowed when the organisation's allowedMfaMethods.sms is false", async () => {
    const m = await member(t, { orgSettings: { security: { allowedMfaMethods: { sms: false } } } });
    const api = await signIn(t, m.email);
    await verifyPhone(api, newPhone());
    const res = await api.post('/auth/mfa/sms/enable');
    expectError(res, 403, 'sms_not_allowed');
    expect(res.body.message).toBe('Your organization does not allow SMS MFA.');
    expect((await userRow(t, m.user.id)).mfaEnabled).toBe(false);
  });

  it("the partner's allowedMfaMethods.sms = false applies to its organisations' users", async () => {
    const m = await member(t, { partnerSettings: { security: { allowedMfaMethods: { sms: false } } } });
    const api = await signIn(t, m.email);
    await verifyPhone(api, newPhone());
    expectError(await api.post('/auth/mfa/sms/enable'), 403, 'sms_not_allowed');
  });

  it('an organisation that bans SMS after enrolment gets no sign-in code sent: 403 sms_not_allowed', async () => {
    const m = await smsMember();
    await setOrgSettings(t, m.orgId!, { security: { allowedMfaMethods: { sms: false } } });
    const { api, body } = await challenge(t, m.email);
    const before = sink.countTo(m.phone);
    expectError(await api.post('/auth/mfa/sms/send', { tempToken: body.tempToken }), 403, 'sms_not_allowed');
    expect(sink.countTo(m.phone)).toBe(before);
  });

  it('sign-in: mfaMethod sms with phoneLast4, a code by SMS, tokens with mfa: true', async () => {
    const m = await smsMember();
    const { api, body } = await challenge(t, m.email);
    expect(body).toMatchObject({ mfaRequired: true, mfaMethod: 'sms', phoneLast4: m.phone.slice(-4) });
    const sent = await api.post('/auth/mfa/sms/send', { tempToken: body.tempToken });
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body).toEqual({ success: true, phoneLast4: m.phone.slice(-4) });
    const code = sink.lastCode(m.phone);
    const ok = await api.post('/auth/mfa/verify', { tempToken: body.tempToken, code });
    expect(ok.status, ok.text).toBe(200);
    expect(claimsOf(ok.body.accessToken).mfa).toBe(true);
    const logins = (await auditOf(t, 'user.login')).filter((r) => r.actorUserId === m.user.id);
    expect(logins.at(-1)!.details).toMatchObject({ method: 'password+sms', mfa: true });
    // The same code does not open a second sign-in.
    const again = await challenge(t, m.email);
    expectError(
      await again.api.post('/auth/mfa/verify', { tempToken: again.body.tempToken, code }),
      401,
      'invalid_mfa_code',
    );
  });

  it('a code sent for one tempToken does not complete another', async () => {
    const m = await smsMember();
    const a = await challenge(t, m.email);
    const b = await challenge(t, m.email);
    await a.api.post('/auth/mfa/sms/send', { tempToken: a.body.tempToken });
    const codeA = sink.lastCode(m.phone);
    expectError(
      await b.api.post('/auth/mfa/verify', { tempToken: b.body.tempToken, code: codeA }),
      401,
      'invalid_mfa_code',
    );
    expect((await a.api.post('/auth/mfa/verify', { tempToken: a.body.tempToken, code: codeA })).status).toBe(200);
  });

  it('sms/send for an account whose factor is not SMS: 400 phone_not_verified', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    await enrolTotp(t, api);
    const { api: c, body } = await challenge(t, m.email);
    expectError(await c.post('/auth/mfa/sms/send', { tempToken: body.tempToken }), 400, 'phone_not_verified');
  });

  it('with an authenticator app enrolled as well, its codes still work at an SMS sign-in', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const { secret } = await enrolTotp(t, api);
    await verifyPhone(api, newPhone());
    expect((await api.post('/auth/mfa/sms/enable')).status).toBe(200);
    const { api: c, body } = await challenge(t, m.email);
    expect(body.mfaMethod).toBe('sms');
    expect((await c.post('/auth/mfa/verify', { tempToken: body.tempToken, code: freshTotp(t, secret) })).status).toBe(
      200,
    );
  });

  it('deleting an unrelated passkey keeps SMS as the primary method', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    await enrolTotp(t, api);
    await verifyPhone(api, newPhone());
    const enable = await api.post('/auth/mfa/sms/enable');
    api.token = enable.body.accessToken;
    const { passkey } = await registerPasskey(t, api);
    expect((await userRow(t, m.user.id)).mfaMethod).toBe('sms');
    expect((await api.delete(`/auth/passkeys/${passkey.id}`, { body: { currentPassword: PASSWORD } })).status).toBe(
      200,
    );
    expect(await userRow(t, m.user.id)).toMatchObject({ mfaEnabled: true, mfaMethod: 'sms' });
    const { body } = await challenge(t, m.email);
    expect(body.mfaMethod).toBe('sms');
  });
});

describe('SMS limits: per phone, per user, per tempToken', () => {
  it('sign-in sends are limited per tempToken: 429 rate_limited with retryAfter', async () => {
    t.clock.advance(t.deps.config.rateLimits.smsSend.windowSeconds * 1000);
    const m = await smsMember();
    const { limit } = t.deps.config.rateLimits.smsSend;
    const { api, body } = await challenge(t, m.email);
    for (let i = 0; i < limit; i++)
      expect((await api.post('/auth/mfa/sms/send', { tempToken: body.tempToken })).status).toBe(200);
    const sent = sink.countTo(m.phone);
    const limited = await api.post('/auth/mfa/sms/send', { tempToken: body.tempToken });
    expectError(limited, 429, 'rate_limited');
    expect(limited.body.retryAfter).toBeGreaterThan(0);
    expect(sink.countTo(m.phone)).toBe(sent);
  });

  it('and globally per phone number, whichever tempToken asks', async () => {
    const m = await smsMember();
    const { limit } = t.deps.config.rateLimits.smsSend;
    let ok = 0;
    let refused: Awaited<ReturnType<ApiClient['post']>> | null = null;
    // A fresh tempToken for each send: the per-token limit never trips, the per-phone one must.
    for (let i = 0; i <= limit; i++) {
      const { api, body } = await challenge(t, m.email);
      const res = await api.post('/auth/mfa/sms/send', { tempToken: body.tempToken });
      if (res.status === 200) ok++;
      else refused = res;
    }
    expect(ok).toBe(limit);
    expectError(refused!, 429, 'rate_limited');
  });

  it('phone verification is limited per phone number across users', async () => {
    const phone = newPhone();
    const { limit } = t.deps.config.rateLimits.phoneVerify;
    const results: number[] = [];
    for (let i = 0; i <= limit; i++) {
      const m = await member(t);
      const api = await signIn(t, m.email);
      results.push((await api.post('/auth/phone/verify', { phoneNumber: phone })).status);
    }
    expect(results.slice(0, limit).every((s) => s === 200)).toBe(true);
    expect(results.at(-1)).toBe(429);
    expect(sink.countTo(phone)).toBe(limit);
  });

  it('phone verification is limited per user across numbers', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const { limit } = t.deps.config.rateLimits.phoneVerify;
    for (let i = 0; i < limit; i++)
      expect((await api.post('/auth/phone/verify', { phoneNumber: newPhone() })).status).toBe(200);
    const phone = newPhone();
    expectError(await api.post('/auth/phone/verify', { phoneNumber: phone }), 429, 'rate_limited');
    expect(sink.countTo(phone)).toBe(0);
  });
});

describe('step-up by SMS (a risky route after STEP_UP_MAX_AGE)', () => {
  const stale = () => t.clock.advance(t.deps.config.stepUpMaxAge * 1000 + 1_000);
  // Inviting an administrator is a risky route (STEP_UP_ROUTES); the member is an Organization Admin.
  const inviteAdmin = (m: { api: ApiClient; orgId: string | null }) =>
    m.api.post('/users/invite', {
      email: `admin-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.test`,
      name: 'New Admin',
      roleId: '00000000-0000-4000-8000-000000000004',
      orgId: m.orgId!,
    });

  it('step_up_required lists sms; a code sent to the phone renews auth_time and the risky route passes; the code works once', async () => {
    const m = await smsMember();
    stale();
    const refused = await inviteAdmin(m);
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body).toMatchObject({ code: 'step_up_required', methods: expect.arrayContaining(['sms']) });

    const sent = await m.api.post('/auth/step-up/sms');
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body).toEqual({ success: true, phoneLast4: m.phone.slice(-4) });
    const code = sink.lastCode(m.phone)!;
    const stepped = await m.api.post('/auth/step-up', { code });
    expect(stepped.status, stepped.text).toBe(200);
    m.api.token = stepped.body.accessToken;
    const again = await inviteAdmin(m);
    expect(again.status, again.text).toBe(201);
    expect((await m.api.post('/auth/step-up', { code })).body.code).toBe('invalid_mfa_code');
    expect(await auditOf(t, 'auth.step_up')).toEqual(
      expect.arrayContaining([expect.objectContaining({ details: { method: 'sms' } })]),
    );
  });

  it('a wrong code is 401 invalid_mfa_code; five wrong codes void the sent one', async () => {
    const m = await smsMember();
    expect((await m.api.post('/auth/step-up/sms')).status).toBe(200);
    const code = sink.lastCode(m.phone)!;
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++)
      expectError(await m.api.post('/auth/step-up', { code: wrong }), 401, 'invalid_mfa_code');
    expectError(await m.api.post('/auth/step-up', { code }), 401, 'invalid_mfa_code');
  });

  it('an account without the SMS factor is refused (400 phone_not_verified); an organisation that bans SMS gets no code (403 sms_not_allowed)', async () => {
    const plain = await member(t);
    const api = await signIn(t, plain.email);
    expectError(await api.post('/auth/step-up/sms'), 400, 'phone_not_verified');
    const m = await smsMember();
    await setOrgSettings(t, m.orgId!, { security: { allowedMfaMethods: { sms: false } } });
    const before = sink.messages.length;
    expectError(await m.api.post('/auth/step-up/sms'), 403, 'sms_not_allowed');
    expect(sink.messages.length).toBe(before);
  });
});

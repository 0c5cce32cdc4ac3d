// New-device mail: a device cookie marks known browsers; a sign-in from a new one mails the user once with a
// "this was not me" link that ends that session and starts a password reset. Real SMTP capture.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { knownDevices } from '../../src/db/schema/index.js';
import { sha256 } from '../../src/platform/crypto.js';
import { startApp, type TestApp } from '../support/app.js';
import type { ApiClient } from '../support/client.js';
import { linkToken, startMailCatcher, type MailCatcher } from '../support/smtp.js';
import { expectError } from '../mfa/helpers.js';
import { orgMember, PASSWORD, strongPassword } from './helpers.js';

const DEVICE_COOKIE = 'service_device';
let t: TestApp;
let mail: MailCatcher;
beforeAll(async () => {
  mail = await startMailCatcher();
  t = await startApp({ SMTP_URL: mail.url, RATE_LIMIT_LOGIN: '1000/900' });
});
afterAll(async () => {
  await t?.close();
  await mail?.close();
});

async function signInWith(
  api: ApiClient,
  email: string,
  userAgent = 'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0',
) {
  const res = await api.post('/auth/login', { email, password: PASSWORD }, { headers: { 'user-agent': userAgent } });
  expect(res.status, res.text).toBe(200);
  api.token = res.body.accessToken;
  return res;
}

const newDeviceMails = (to: string) =>
  mail.messages.filter((m) => m.to.includes(to) && m.subject === 'New sign-in to your account');
const settle = () => new Promise((r) => setTimeout(r, 300));

describe('the device cookie: long-lived, HttpOnly, random, stored only as its hash', () => {
  it('the first sign-in sets it and records the device silently; the stored value is its SHA-256', async () => {
    const { user } = await orgMember(t);
    const api = t.client();
    const res = await signInWith(api, user.email);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith(`${DEVICE_COOKIE}=`))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(Number(/Max-Age=(\d+)/i.exec(cookie)![1])).toBeGreaterThanOrEqual(365 * 24 * 3600);
    const value = api.cookies.get(DEVICE_COOKIE)!;
    expect(value).toMatch(/^[A-Za-z0-9_-]{32,64}$/);
    // Recorded once the answer went out (a failed answer records nothing).
    const rows = await vi.waitFor(
      async () => {
        const found = await t.deps.db.select().from(knownDevices).where(eq(knownDevices.userId, user.id));
        expect(found.map((r) => r.tokenHash)).toEqual([sha256(value)]);
        return found;
      },
      { timeout: 15_000 },
    );
    expect(JSON.stringify(rows)).not.toContain(value);
    await settle();
    expect(newDeviceMails(user.email)).toHaveLength(0);
  });
});

describe('a sign-in from a new device mails the user once; a known device does not', () => {
  it('same browser again: no mail; a new browser: one mail naming it, with a "this was not me" link', async () => {
    const { user } = await orgMember(t);
    const laptop = t.client();
    await signInWith(laptop, user.email);
    await signInWith(laptop, user.email);
    await settle();
    expect(newDeviceMails(user.email)).toHaveLength(0);
    const stranger = t.client();
    await signInWith(
      stranger,
      user.email,
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
    );
    const m = await mail.waitFor(user.email, (x) => x.subject === 'New sign-in to your account');
    expect(m.text).toContain('Chrome 120 on Windows 10');
    expect(m.text).toContain(`${t.deps.config.appUrl}/account/not-me?token=`);
    await signInWith(stranger, user.email);
    await settle();
    expect(newDeviceMails(user.email)).toHaveLength(1);
  });
});

describe('"this was not me": ends that session and starts a password reset, once', () => {
  it('the link ends the reported session (not the others), mails a reset link that works, and is single-use', async () => {
    const { user } = await orgMember(t);
    const laptop = t.client();
    await signInWith(laptop, user.email);
    const stranger = t.client();
    await signInWith(stranger, user.email);
    const token = linkToken(await mail.waitFor(user.email, (x) => x.subject === 'New sign-in to your account'));
    const report = await t.client().post('/auth/sessions/report', { token });
    expect(report.status, report.text).toBe(200);
    expectError(await stranger.get('/auth/me'), 401, 'unauthenticated');
    expect((await laptop.get('/auth/me')).status).toBe(200);
    const reset = await mail.waitFor(user.email, (x) => x.subject === 'Reset your password');
    const newPassword = strongPassword();
    const done = await t.client().post('/auth/reset-password', { token: linkToken(reset), newPassword });
    expect(done.status, done.text).toBe(200);
    expectError(await t.client().post('/auth/sessions/report', { token }), 400, 'invalid_report_token');
    expectError(await t.client().post('/auth/sessions/report', { token: 'x'.repeat(43) }), 400, 'invalid_report_token');
    expectError(await t.client().raw.post('/auth/sessions/report', {}), 400, 'validation_failed');
  });

  it('the same link used twice at once: exactly one succeeds', async () => {
    const { user } = await orgMember(t);
    await signInWith(t.client(), user.email);
    await signInWith(t.client(), user.email);
    const token = linkToken(await mail.waitFor(user.email, (x) => x.subject === 'New sign-in to your account'));
    const answers = await Promise.all([0, 1, 2].map(() => t.client().post('/auth/sessions/report', { token })));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400, 400]);
  });
});

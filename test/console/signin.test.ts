// Sign-in journeys in a real Chromium against the real server: registration with forced TOTP enrolment, the
// token kept in memory only, a reload restored by the refresh cookie, TOTP and recovery-code sign-in, reset from
// the mailed link, passkeys with a CDP virtual authenticator.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpFor } from '../../src/modules/mfa/codes.js';
import { startApp, type TestApp } from '../support/app.js';
import { startMailCatcher, type MailCatcher } from '../support/smtp.js';
import { checkPage, ensureConsoleBuilt, launch, newTab, type Tab } from './browser.js';

let t: TestApp;
let mail: MailCatcher;
let browser: Browser;
beforeAll(async () => {
  ensureConsoleBuilt();
  mail = await startMailCatcher();
  t = await startApp({ ENABLE_REGISTRATION: 'true', SMTP_URL: mail.url, MAIL_FROM: 'gatehouse@example.test' });
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await mail?.close();
});

const PASSWORD = 'Correct horse battery staple 42';
const account = { email: 'ada@lovelace-msp.example', name: 'Ada Lovelace', company: 'Lovelace MSP' };
let totpSecret = '';
let recoveryCodes: string[] = [];

/** A TOTP code of a later time step than the last one used (a code is accepted once per step). */
function nextTotp(secret: string) {
  t.clock.advance(30_000);
  return totpFor(secret).generate({ timestamp: t.clock.now().getTime() });
}

async function typeCode(page: Page, code: string) {
  await page.locator('.mantine-PinInput-input').first().click();
  await page.keyboard.type(code);
}

async function signIn(tab: Tab, email: string, password: string) {
  const { page } = tab;
  await page.goto(`${t.baseUrl}/login`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel(/^Password/).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

describe('journey: register a partner, forced TOTP enrolment, then signed in', () => {
  it('registers, enrols an authenticator app (QR code, recovery codes shown once), lands in the console', async () => {
    const tab = await newTab(browser);
    const { page } = tab;
    await page.goto(`${t.baseUrl}/login`);
    await checkPage(tab, 'login');
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByRole('heading', { name: 'Create your partner account' }).waitFor();
    await page.getByLabel('Company name').fill(account.company);
    await page.getByLabel('Your name').fill(account.name);
    await page.getByLabel('E-mail').fill(account.email);
    await page.getByLabel(/^Password/).fill(PASSWORD);
    await page.getByLabel('Repeat it').fill(PASSWORD);
    await checkPage(tab, 'register');
    await page.getByRole('button', { name: 'Create account' }).click();

    // Partner Admin carries Force MFA: the console goes to enrolment.
    await page.waitForURL('**/enroll-mfa');
    await page.getByRole('img', { name: 'QR code for your authenticator app' }).waitFor();
    await checkPage(tab, 'enroll-mfa');
    totpSecret = (await page.getByTestId('totp-secret').textContent())!.trim();
    await typeCode(page, nextTotp(totpSecret));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByTestId('recovery-codes').waitFor();
    recoveryCodes = (await page.getByTestId('recovery-codes').locator('p').allTextContents()).map((s) => s.trim());
    expect(recoveryCodes).toHaveLength(10);
    await checkPage(tab, 'enroll-mfa-codes');
    await page.getByRole('button', { name: 'I have saved my codes' }).click();
    await expect.poll(() => page.getByTestId('whoami').textContent(), { timeout: 30_000 }).toBe(account.email);
    await tab.context.close();
  });
});

describe('the access token lives in memory only', () => {
  it('after sign-in no token is in localStorage, sessionStorage or a readable cookie besides the CSRF one; the CSP header is on /', async () => {
    const tab = await newTab(browser);
    const { page } = tab;
    await signIn(tab, account.email, PASSWORD);
    await typeCode(page, nextTotp(totpSecret));
    await page.getByRole('button', { name: 'Verify' }).click();
    await expect.poll(() => page.getByTestId('whoami').textContent(), { timeout: 30_000 }).toBe(account.email);

    const storage = await page.evaluate(() => ({
      local: Object.keys(localStorage).map((k) => `${k}=${localStorage.getItem(k)}`),
      session: Object.keys(sessionStorage).map((k) => `${k}=${sessionStorage.getItem(k)}`),
      cookies: document.cookie,
    }));
    const jwt = /eyJ[\w-]+\.[\w-]+\.[\w-]+/;
    for (const entry of [...storage.local, ...storage.session]) expect(entry).not.toMatch(jwt);
    expect(storage.local.filter((e) => /token|refresh|access/i.test(e))).toEqual([]);
    expect(storage.session).toEqual([]);
    const readable = storage.cookies
      .split(/;\s*/)
      .filter(Boolean)
      .map((c) => c.split('=')[0]);
    expect(readable).toEqual(['service_csrf_token']);
    // The refresh cookie exists, but only the server can read it.
    const all = await tab.context.cookies();
    expect(all.find((c) => c.name === 'service_refresh_token')).toMatchObject({ httpOnly: true, path: '/api/v1/auth' });

    const res = await page.request.get(`${t.baseUrl}/`);
    expect(res.headers()['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers()['content-security-policy']).toContain("frame-ancestors 'none'");

    // A reload forgets the in-memory token; the refresh cookie + x-service-csrf bring the session back.
    await page.reload();
    await expect.poll(() => page.getByTestId('whoami').textContent(), { timeout: 30_000 }).toBe(account.email);
    await tab.context.close();
  });
});

describe('journey: sign in with a recovery code', () => {
  it('a recovery code completes the second step once', async () => {
    const tab = await newTab(browser);
    const { page } = tab;
    await signIn(tab, account.email, PASSWORD);
    await page.getByRole('button', { name: 'Use a recovery code' }).click();
    await checkPage(tab, 'login-recovery-code');
    await page.getByLabel('Recovery code').fill(recoveryCodes[0]!);
    await page.getByRole('button', { name: 'Verify' }).click();
    await expect.poll(() => page.getByTestId('whoami').textContent(), { timeout: 30_000 }).toBe(account.email);
    await tab.context.close();
  });

  it('a wrong code is explained in words', async () => {
    const tab = await newTab(browser);
    const { page } = tab;
    await signIn(tab, account.email, PASSWORD);
    await typeCode(page, '000000');
    await page.getByRole('button', { name: 'Verify' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent(), { timeout: 30_000 })
      .toContain('That code is not valid');
    await checkPage(tab, 'login-wrong-code');
    await tab.context.close();
  });
});

describe('journey: reset the password from the mailed link', () => {
  it('forgot password → mail → /reset-password?token= → sign in with the new password', async () => {
    const tab = await newTab(browser);
    const { page } = tab;
    await page.goto(`${t.baseUrl}/login`);
    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
    await page.getByLabel('E-mail').fill(account.email);
    await checkPage(tab, 'forgot-password');
    await page.getByRole('button', { name: 'Send the reset link' }).click();
    await page.getByText('Check your e-mail').waitFor();
    const m = await mail.waitFor(account.email, (x) => /reset-password\?token=/.test(x.text));
    const link = /(http:\/\/localhost:\d+\/reset-password\?token=[^\s"<>]+)/.exec(m.text)![1]!;
    await page.goto(link);
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    const next = `${PASSWORD} renewed`;
    await page.getByLabel('New password').fill(next);
    await page.getByLabel('Repeat it').fill(next);
    await checkPage(tab, 'reset-password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Password changed').waitFor();
    await signIn(tab, account.email, next);
    await typeCode(page, nextTotp(totpSecret));
    await page.getByRole('button', { name: 'Verify' }).click();
    await expect.poll(() => page.getByTestId('whoami').textContent(), { timeout: 30_000 }).toBe(account.email);
    await tab.context.close();
  });
});

describe('/login?error= is shown in words', () => {
  it('an SSO failure code becomes a sentence', async () => {
    const tab = await newTab(browser);
    await tab.page.goto(`${t.baseUrl}/login?error=session_expired`);
    await expect.poll(() => tab.page.getByRole('alert').textContent(), { timeout: 30_000 }).toContain('took too long');
    await checkPage(tab, 'login-sso-error');
    await tab.context.close();
  });
});

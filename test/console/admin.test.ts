// Account journeys in a real Chromium against the real server: an MFA-signed-in partner admin adds a passkey on
// My account through a CDP virtual authenticator, then signs in with it alone ("use a passkey instead").
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpFor } from '../../src/modules/mfa/codes.js';
import { startApp, type TestApp } from '../support/app.js';
import { startMailCatcher, type MailCatcher } from '../support/smtp.js';
import { checkPage, ensureConsoleBuilt, launch, newTab, type Tab } from './browser.js';

let t: TestApp;
let mail: MailCatcher;
let browser: Browser;
const PASSWORD = 'Correct horse battery staple 42';
const admin = { email: 'grace@hopper-msp.example', name: 'Grace Hopper', companyName: 'Hopper MSP' };
let secret = '';

function nextTotp() {
  t.clock.advance(30_000);
  return totpFor(secret).generate({ timestamp: t.clock.now().getTime() });
}

async function post(path: string, body: unknown, token?: string) {
  const res = await fetch(`${t.baseUrl}/api/v1${path}`, {
    method: 'POST',
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, any>;
  if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

beforeAll(async () => {
  ensureConsoleBuilt();
  mail = await startMailCatcher();
  t = await startApp({ ENABLE_REGISTRATION: 'true', SMTP_URL: mail.url, MAIL_FROM: 'gatehouse@example.test' });
  browser = await launch();
  // The partner admin exists with TOTP enrolled (the enrolment itself is the journey of signin.test.ts).
  const reg = await post('/auth/register-partner', { ...admin, password: PASSWORD });
  const setup = await post('/auth/mfa/setup', undefined, reg.accessToken);
  secret = setup.secret;
  await post('/auth/mfa/enable', { code: nextTotp() }, reg.accessToken);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await mail?.close();
});

async function signInWithTotp(tab: Tab) {
  const { page } = tab;
  await page.goto(`${t.baseUrl}/login`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await page.getByLabel('E-mail').fill(admin.email);
  await page.getByLabel(/^Password/).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.locator('.mantine-PinInput-input').first().click();
  await page.keyboard.type(nextTotp());
  await page.getByRole('button', { name: 'Verify' }).click();
  await whoami(page, admin.email);
}

async function whoami(page: Page, email: string) {
  await expect.poll(() => page.getByTestId('whoami').textContent(), { timeout: 60_000 }).toBe(email);
}

async function dialog(page: Page, title: string) {
  const d = page.getByRole('dialog', { name: title });
  await d.waitFor();
  return d;
}

describe('journey: passkey registration and passkey sign-in (CDP virtual authenticator)', () => {
  it('adds a passkey on My account, then signs in with it alone', async () => {
    const tab = await newTab(browser);
    const { page } = tab;
    const cdp = await tab.context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    await signInWithTotp(tab);
    await page.getByRole('link', { name: 'My account' }).click();
    await page.getByRole('heading', { name: 'My account' }).waitFor();
    await checkPage(tab, 'account');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    const d = await dialog(page, 'Add a passkey');
    await d.getByLabel(/^Name/).fill('Work laptop');
    await d.getByLabel(/^Current password/).fill(PASSWORD);
    await d.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('cell', { name: 'Work laptop', exact: true }).waitFor();
    await checkPage(tab, 'account-passkey');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByRole('button', { name: 'Use a passkey instead' }).click();
    await whoami(page, admin.email);
    await tab.context.close();
  });
});

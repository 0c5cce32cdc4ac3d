// Administration journeys in a real Chromium against the real server: an MFA-signed-in partner admin creates an
// organisation and a site, invites a user who accepts from the mailed link; passkeys added on My account through
// a CDP virtual authenticator, then used to sign in ("use a passkey instead").
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
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}) },
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

describe('journey: organisation and site, invitation, acceptance from the mailed link', () => {
  it('the admin creates an organisation and a site, invites a user; the user accepts and is signed in', async () => {
    const tab = await newTab(browser);
    const { page } = tab;
    await signInWithTotp(tab);

    await page.getByRole('link', { name: 'Tenants' }).click();
    await page.getByRole('heading', { name: 'Tenants' }).waitFor();
    await checkPage(tab, 'tenants-empty');
    await page.getByRole('button', { name: 'New organisation' }).click();
    let d = await dialog(page, 'New organisation');
    await d.getByLabel(/^Name/).fill('Acme Dental');
    await d.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { name: 'Acme Dental' }).waitFor();
    await page.getByRole('button', { name: 'New site' }).click();
    d = await dialog(page, 'New site');
    await d.getByLabel(/^Name/).fill('Main Street clinic');
    await d.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('cell', { name: 'Main Street clinic', exact: true }).waitFor();
    await checkPage(tab, 'tenants');

    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('heading', { name: 'Users' }).waitFor();
    await page.getByTestId('users-table').waitFor();
    await checkPage(tab, 'users');
    await page.getByLabel('Members of').click();
    await page.getByRole('option', { name: 'Acme Dental' }).click();
    await page.getByText('No members yet. Invite someone.').waitFor();
    await page.getByRole('button', { name: 'Invite a user' }).click();
    d = await dialog(page, 'Invite a user');
    await d.getByLabel(/^E-mail/).fill('bob@acme-dental.example');
    await d.getByLabel(/^Name/).fill('Bob Builder');
    await d.getByLabel(/^Role/).click();
    await page.getByRole('option', { name: 'Organization Admin' }).click();
    await checkPage(tab, 'users-invite');
    await d.getByRole('button', { name: 'Send invitation' }).click();
    await page.getByRole('cell', { name: 'bob@acme-dental.example', exact: true }).waitFor();
    await expect.poll(() => page.getByTestId('users-table').textContent()).toContain('invited');

    const m = await mail.waitFor('bob@acme-dental.example', (x) => /accept-invite\?token=/.test(x.text), 15_000);
    const link = /(http:\/\/localhost:\d+\/accept-invite\?token=[^\s"<>]+)/.exec(m.text)![1]!;
    const bob = await newTab(browser);
    await bob.page.goto(link);
    await bob.page.getByRole('heading', { name: 'Accept your invitation' }).waitFor();
    await bob.page.getByText('Acme Dental').waitFor();
    await bob.page.getByLabel('Choose a password').fill('Sturdy scaffolding 1999 ladder');
    await bob.page.getByLabel('Repeat it').fill('Sturdy scaffolding 1999 ladder');
    await checkPage(bob, 'accept-invite');
    await bob.page.getByRole('button', { name: 'Accept and sign in' }).click();
    await whoami(bob.page, 'bob@acme-dental.example');
    await bob.context.close();

    await page.reload();
    await page.getByLabel('Members of').click();
    await page.getByRole('option', { name: 'Acme Dental' }).click();
    await expect.poll(() => page.getByTestId('users-table').textContent(), { timeout: 30_000 }).toContain('active');
    await tab.context.close();
  });
});

describe('journey: passkey registration and passkey sign-in (CDP virtual authenticator)', () => {
  it('adds a passkey on My account, then signs in with it alone', async () => {
    const tab = await newTab(browser);
    const { page } = tab;
    const cdp = await tab.context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
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

// A newcomer's first minutes with `npm start`, in a real Chromium against the built server: the printed setup link
// opened and submitted, the first administrator enrols the forced authenticator app and sees the console signed in;
// then a password + TOTP sign-in, a reload that the refresh cookie restores, and "Sign out" that ends the session.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch, newTab } from '../console/browser.js';
import { strongPassword, totp } from './flows.js';
import { startBuiltServer, type BuiltServer } from './server.js';

let server: BuiltServer;
let browser: Browser;
beforeAll(async () => {
  server = await startBuiltServer();
  browser = await launch();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const admin = { company: 'Newcomer MSP', name: 'Grace Hopper', email: 'grace@newcomer-msp.example' };
const password = strongPassword();
let secret = '';

async function typeCode(page: Page, code: string) {
  await page.locator('.mantine-PinInput-input').first().click();
  await page.keyboard.type(code);
}

const whoami = (page: Page) => expect.poll(() => page.getByTestId('whoami').textContent(), { timeout: 60_000 });

describe('the setup link in a browser signs the first administrator in', () => {
  it('opens the printed link, submits the form, enrols TOTP and lands in the console as the administrator', async () => {
    const { page, context, problems } = await newTab(browser);
    await page.goto(server.setupLink()!);
    await page.getByRole('heading', { name: 'Set up Gatehouse' }).waitFor();
    await page.getByLabel('Company name').fill(admin.company);
    await page.getByLabel('Your name').fill(admin.name);
    await page.getByLabel('E-mail').fill(admin.email);
    await page.getByLabel(/^Password/).fill(password);
    await page.getByLabel('Repeat it').fill(password);
    await page.getByRole('button', { name: 'Create the administrator' }).click();
    // A Partner Admin must have a second factor: the console goes to enrolment first.
    await page.waitForURL('**/enroll-mfa', { timeout: 60_000 });
    await page.getByRole('img', { name: 'QR code for your authenticator app' }).waitFor();
    secret = (await page.getByTestId('totp-secret').textContent())!.trim();
    await typeCode(page, totp(secret));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByTestId('recovery-codes').waitFor();
    await page.getByRole('button', { name: 'I have saved my codes' }).click();
    await whoami(page).toBe(admin.email);
    expect(problems).toEqual([]);
    await context.close();
  });
});

describe('password sign-in, refresh and sign-out in the browser', () => {
  it('signs in with password + TOTP, survives a reload through the refresh cookie, and signs out', async () => {
    const { page, context, problems } = await newTab(browser);
    await page.goto(`${server.baseUrl}/login`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('E-mail').fill(admin.email);
    await page.getByLabel(/^Password/).fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await typeCode(page, totp(secret, 30_000)); // the next time step: enrolment used the current one
    await page.getByRole('button', { name: 'Verify' }).click();
    await whoami(page).toBe(admin.email);

    // A reload forgets the in-memory token; POST /auth/refresh with the cookie brings the session back.
    const refreshed = page.waitForResponse((r) => r.url().endsWith('/api/v1/auth/refresh'));
    await page.reload();
    expect((await refreshed).status()).toBe(200);
    await whoami(page).toBe(admin.email);

    const loggedOut = page.waitForResponse((r) => r.url().endsWith('/api/v1/auth/logout'));
    await page.getByRole('button', { name: 'Sign out' }).click();
    expect((await loggedOut).status()).toBe(200);
    await page.waitForURL('**/login');
    expect((await context.cookies()).find((c) => c.name === 'service_refresh_token')).toBeUndefined();
    // The session is over on the server too: a reload finds nobody signed in.
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });
});

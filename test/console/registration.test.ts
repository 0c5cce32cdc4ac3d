// The sign-in page offers "Create an account" only while self-service registration is open (signin.test.ts follows
// the link with ENABLE_REGISTRATION=true). Closed, the console asks the public setup status and shows no link.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { checkPage, ensureConsoleBuilt, launch, newTab } from './browser.js';

let t: TestApp;
let browser: Browser;
beforeAll(async () => {
  ensureConsoleBuilt();
  t = await startApp();
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('registration closed: the sign-in page does not offer it', () => {
  it('shows the sign-in form without "Create an account" once the status said registration is closed', async () => {
    const tab = await newTab(browser);
    const { page } = tab;
    const status = page.waitForResponse((r) => r.url().endsWith('/api/v1/setup/status'));
    await page.goto(`${t.baseUrl}/login`);
    expect(await (await status).json()).toMatchObject({ registrationOpen: false });
    await checkPage(tab, 'login-registration-closed');
    await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
    expect(await page.getByRole('link', { name: 'Create an account' }).count()).toBe(0);
    expect(await page.getByText('New partner?').count()).toBe(0);
    await tab.context.close();
  });
});

// My account's e-mail address in a real Chromium against the real server: an unverified address says so, "Send
// verification link" mails a link (real SMTP capture) whose page confirms it, and a change of address stays pending,
// shown as such, until the link mailed to the new address is opened.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import { passwordStep, whoami } from '../support/console-session.js';
import { accountOf, addPartnerMember, createPartner, createUser } from '../support/fixtures.js';
import { type MailCatcher, startMailCatcher } from '../support/smtp.js';
import { checkPage, ensureConsoleBuilt, launch, newTab } from './browser.js';

let t: TestApp;
let mail: MailCatcher;
let browser: Browser;
const PASSWORD = 'Correct horse battery staple 42';
const PARTNER_TECH: string = SYSTEM_ROLES[1].id;

beforeAll(async () => {
  ensureConsoleBuilt();
  mail = await startMailCatcher();
  t = await startApp({ SMTP_URL: mail.url, RATE_LIMIT_LOGIN: '1000/900' });
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await mail?.close();
});

const linkIn = (text: string) => /(https?:\/\/\S+\/verify-email\?token=[^\s"<>]+)/.exec(text)![1]!;

describe('My account: verify the address, and change it only through the new address', () => {
  it('shows "Not verified", sends the link, the link page confirms; a change is shown pending until its link', async () => {
    const partner = await createPartner(t, 'Northwind MSP');
    const user = await createUser(t, {
      email: 'riley@northwind.example',
      name: 'Riley Tech',
      password: PASSWORD,
      emailVerified: false,
    });
    await addPartnerMember(t, { partnerId: partner.id, userId: user.id, roleId: PARTNER_TECH });
    const tab = await newTab(browser);
    const { page } = tab;
    await passwordStep(page, t, user.email, PASSWORD);
    await whoami(page, user.email);
    await page.getByRole('link', { name: 'My account' }).click();
    const section = page.getByRole('region', { name: 'E-mail address' });
    await section.getByText('Not verified').waitFor();
    await checkPage(tab, 'account-email-unverified');

    await section.getByRole('button', { name: 'Send verification link' }).click();
    const proof = await mail.waitFor(user.email, (m) => m.text.includes('/verify-email?token='));
    await page.goto(linkIn(proof.text));
    await page.getByText(`${user.email} is verified for your account.`).waitFor();
    await checkPage(tab, 'verify-email-done');
    expect((await accountOf(t, user.id))?.emailVerified).toBe(true);

    await page.goto(`${t.baseUrl}/account`);
    await page.getByRole('heading', { name: 'My account' }).waitFor();
    await section.getByText('Verified', { exact: true }).waitFor();
    await section.getByLabel('New e-mail address').fill('riley@mail.northwind.example');
    await section.getByRole('button', { name: 'Change address' }).click();
    await section.getByText('Change of address pending').waitFor();
    expect(await section.textContent()).toContain('riley@mail.northwind.example');
    expect((await accountOf(t, user.id))?.email).toBe(user.email);

    const change = await mail.waitFor('riley@mail.northwind.example');
    await page.goto(linkIn(change.text));
    await page.getByText('You now sign in with riley@mail.northwind.example.').waitFor();
    expect((await accountOf(t, user.id))?.email).toBe('riley@mail.northwind.example');
  });
});

// Pending invitations in a real Chromium against the real server: the mailed link of an invitation to an existing
// account asks for sign-in first, then accepts on a click; My account lists the other offers with Accept / Decline.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import { whoami } from '../support/console-session.js';
import { addPartnerMember, createPartner, createUser, partnerAdmin } from '../support/fixtures.js';
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

describe('an invitation to an existing account is answered in the console', () => {
  it('the mailed link signs in first, then accepts on a click; My account declines another offer', async () => {
    const home = await createPartner(t, 'Northwind MSP');
    const user = await createUser(t, { email: 'robin@northwind.example', name: 'Robin', password: PASSWORD });
    await addPartnerMember(t, { partnerId: home.id, userId: user.id, roleId: PARTNER_TECH });
    const b = await partnerAdmin(t);
    const c = await partnerAdmin(t);
    expect((await b.api.post('/users/invite', { email: user.email, name: 'Robin', roleId: PARTNER_TECH })).status).toBe(
      201,
    );
    const link = /(\/invitations\?token=[^\s"<>]+)/.exec((await mail.waitFor(user.email)).text)![1]!;
    expect((await c.api.post('/users/invite', { email: user.email, name: 'Robin', roleId: PARTNER_TECH })).status).toBe(
      201,
    );

    const tab = await newTab(browser);
    const { page } = tab;
    await page.goto(`${t.baseUrl}${link}`);
    // Not signed in: the sign-in page first, then back to the link.
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('E-mail').fill(user.email);
    await page.getByLabel(/^Password/).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await whoami(page, user.email);
    await page.getByRole('heading', { name: 'Pending invitations', level: 1 }).waitFor();
    await page.getByTestId('invitations').getByText(b.partner.name).waitFor();
    await checkPage(tab, 'invitations-link');
    await page.getByRole('button', { name: 'Accept the invitation' }).click();
    await page.getByText('Invitation accepted').first().waitFor();
    await expect
      .poll(() => page.getByTestId('invitations').textContent(), { timeout: 30_000 })
      .not.toContain(b.partner.name);

    // My account: the accepted partner is a place to act; the other offer waits for an answer.
    await page.getByRole('link', { name: 'My account' }).click();
    await page.getByRole('heading', { name: 'My account' }).waitFor();
    await page.getByTestId('memberships').getByText(b.partner.name).waitFor();
    const offers = page.getByTestId('invitations');
    await offers.getByText(c.partner.name).waitFor();
    await checkPage(tab, 'account-invitations');
    await page.getByRole('button', { name: `Decline ${c.partner.name} (partner)` }).click();
    await page.getByText(`Declined ${c.partner.name}`).waitFor();
    await page.getByText('No invitation is waiting for your answer.').waitFor();
    expect((await c.api.get(`/users/${user.id}`)).status).toBe(404);
    await tab.context.close();
  });
});

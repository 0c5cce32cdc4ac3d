// My account in a real Chromium against the real server: switching between memberships, text-message codes with
// phone verification (the real SMS sink catches the code), the session list with "sign out", and passkey autofill
// on the sign-in page (conditional mediation, CDP virtual authenticator).
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORG_ADMIN_ROLE_ID, SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import { dialog, passwordStep, typeCode, whoami } from '../support/console-session.js';
import { addOrgMember, addPartnerMember, createOrg, createPartner, createUser } from '../support/fixtures.js';
import { startSmsSink, type SmsSink } from '../support/sms-sink.js';
import { checkPage, ensureConsoleBuilt, launch, newTab, type Tab } from './browser.js';

let t: TestApp;
let sms: SmsSink;
let browser: Browser;
const PASSWORD = 'Correct horse battery staple 42';
const PARTNER_TECH: string = SYSTEM_ROLES[1].id;

beforeAll(async () => {
  ensureConsoleBuilt();
  sms = await startSmsSink();
  t = await startApp({ ...sms.env(), RATE_LIMIT_LOGIN: '1000/900' });
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await sms?.close();
});

/** A partner technician who is also an organisation's admin, with a password and no second factor. */
async function twoMemberships(email: string) {
  const partner = await createPartner(t, `Fabrikam MSP ${email.split('@')[0]}`);
  const org = await createOrg(t, partner.id, `Contoso Dental ${email.split('@')[0]}`);
  const user = await createUser(t, { email, name: 'Sam Tech', password: PASSWORD });
  await addPartnerMember(t, { partnerId: partner.id, userId: user.id, roleId: PARTNER_TECH });
  await addOrgMember(t, { orgId: org.id, userId: user.id, roleId: ORG_ADMIN_ROLE_ID });
  return { partner, org, user };
}

async function signedIn(email: string): Promise<Tab> {
  const tab = await newTab(browser);
  await passwordStep(tab.page, t, email, PASSWORD);
  await whoami(tab.page, email);
  return tab;
}

async function myAccount(tab: Tab) {
  await tab.page.getByRole('link', { name: 'My account' }).click();
  await tab.page.getByRole('heading', { name: 'My account' }).waitFor();
}

describe('switch context between memberships', () => {
  it('lists the partner and the organisation, marks the current one, and moves the session on “Switch”', async () => {
    const { org, partner, user } = await twoMemberships('sam@fabrikam.example');
    const tab = await signedIn(user.email);
    const { page } = tab;
    await myAccount(tab);
    const table = page.getByTestId('memberships');
    await table.waitFor();
    await checkPage(tab, 'account-memberships');
    const partnerRow = table.getByRole('row', { name: new RegExp(partner.name) }).first();
    expect(await partnerRow.textContent()).toContain('Current');
    expect(await partnerRow.textContent()).toContain('Partner Technician');

    await page.getByRole('button', { name: `Switch to ${org.name} (${partner.name})` }).click();
    await page.getByText(`You now act in ${org.name}`).waitFor();
    const orgRow = page.getByTestId('memberships').getByRole('row', { name: new RegExp(org.name) });
    await expect.poll(() => orgRow.textContent(), { timeout: 30_000 }).toContain('Current');
    // The console now acts as the organisation's admin: its Users page lists the organisation's members.
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByTestId('users-table').getByText(user.email).waitFor();
    // A reload keeps the new context (the refresh token was rotated with it).
    await page.reload();
    await myAccount(tab);
    await expect
      .poll(
        () =>
          page
            .getByTestId('memberships')
            .getByRole('row', { name: new RegExp(org.name) })
            .textContent(),
        { timeout: 30_000 },
      )
      .toContain('Current');
    await tab.context.close();
  });
});

describe('text-message codes with phone verification', () => {
  it('verifies the phone with the texted code, turns SMS on and shows the recovery codes once', async () => {
    const { user } = await twoMemberships('pat@fabrikam.example');
    const phone = '+12025550177';
    const tab = await signedIn(user.email);
    const { page } = tab;
    await myAccount(tab);
    await page.getByTestId('sms-status').getByText('No verified phone').waitFor();
    await page.getByRole('button', { name: 'Add a phone' }).click();
    await page.getByLabel(/^Mobile number/).fill('+1 (202) 555-0177');
    await checkPage(tab, 'account-sms-number');
    await page.getByRole('button', { name: 'Text me a code' }).click();
    await page.getByText('We texted a code to the phone ending 0177').waitFor();
    const text = await sms.waitFor(phone);
    await checkPage(tab, 'account-sms-code');

    await typeCode(page, '000000');
    await page.getByRole('button', { name: 'Verify the phone' }).click();
    await expect
      .poll(() => page.getByRole('alert').first().textContent(), { timeout: 30_000 })
      .toContain('That code is not valid');

    await typeCode(page, /\b(\d{6})\b/.exec(text.body)![1]!);
    await page.getByRole('button', { name: 'Verify the phone' }).click();
    await page.getByTestId('sms-status').getByText('The phone ending 0177 is verified').waitFor();

    await page.getByRole('button', { name: 'Use text-message codes' }).click();
    await page.getByTestId('recovery-codes').waitFor();
    await page.getByTestId('sms-status').getByText('On: sign-in texts a code to the phone ending 0177').waitFor();
    expect(await page.getByTestId('mfa-status').textContent()).toBe('On');
    await checkPage(tab, 'account-sms-on');
    await tab.context.close();
  });
});

describe('journey: the session list, and signing another session out', () => {
  it('shows each session with “This browser” on the current one; “End session” ends the other at its next request', async () => {
    const { user } = await twoMemberships('kim@fabrikam.example');
    const laptop = await signedIn(user.email);
    const phone = await signedIn(user.email);
    const third = await signedIn(user.email);
    const { page } = laptop;
    await myAccount(laptop);
    const table = page.getByTestId('sessions');
    await expect.poll(() => table.locator('tbody tr').count(), { timeout: 30_000 }).toBe(3);
    expect(await table.getByText('This browser').count()).toBe(1);
    expect(await table.textContent()).toMatch(/Chrom(e|ium).* on Linux/);
    await checkPage(laptop, 'account-sessions');

    // The newest other session is the "third" tab's; sign out the second-newest (the "phone" tab's).
    const others = table.locator('tbody tr').filter({ hasNotText: 'This browser' });
    await others
      .nth(1)
      .getByRole('button', { name: /^End session: (?!this browser)/ })
      .click();
    await (await dialog(page, 'End that session?')).getByRole('button', { name: 'End session' }).click();
    await expect.poll(() => table.locator('tbody tr').count(), { timeout: 30_000 }).toBe(2);

    // The ended session fails on its next request: the console goes back to sign-in.
    await phone.page.getByRole('link', { name: 'My account' }).click();
    await phone.page.waitForURL('**/login**', { timeout: 60_000 });
    await phone.context.close();

    await page.getByRole('button', { name: 'End every other session' }).click();
    await (await dialog(page, 'End every other session?')).getByRole('button', { name: 'End sessions' }).click();
    await expect.poll(() => table.locator('tbody tr').count(), { timeout: 30_000 }).toBe(1);
    await third.page.reload();
    await third.page.waitForURL('**/login**', { timeout: 60_000 });
    await third.context.close();
    await laptop.context.close();
  });
});

describe('passkey autofill on the sign-in page', () => {
  it('the e-mail field offers passkeys (autocomplete="username webauthn") and a conditional request signs in with one', async () => {
    const { user } = await twoMemberships('lee@fabrikam.example');
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
    await passwordStep(page, t, user.email, PASSWORD);
    await whoami(page, user.email);
    await myAccount(tab);
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    const d = await dialog(page, 'Add a passkey');
    await d.getByLabel(/^Name/).fill('This laptop');
    await d.getByLabel(/^Current password/).fill(PASSWORD);
    await d.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('cell', { name: 'This laptop', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();

    expect(await page.getByLabel('E-mail').getAttribute('autocomplete')).toBe('username webauthn');
    // Focusing the field starts the conditional request; nothing is typed or clicked: the authenticator answers it.
    await page.getByLabel('E-mail').focus();
    await whoami(page, user.email);
    await tab.context.close();
  });
});

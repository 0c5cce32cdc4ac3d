// Journey in a real Chromium against the real server: a new partner's administrator lands on the home page, whose
// getting-started checklist ticks itself as the steps are done in the console (an organisation, an invited
// technician, two-step verification required for staff, a device enrolled with a key made on the onboarding page);
// once every step is done the card can be dismissed. Staff who may not change settings see no checklist.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import { expectStatus } from '../support/client.js';
import { callbackFor, startOidcProvider, type TestIdp } from '../support/oidc.js';
import { choose, dialog } from '../support/console-session.js';
import { createPartner, signedInPartnerMember } from '../support/fixtures.js';
import { enroll } from '../onboarding/helpers.js';
import { checkPage, ensureConsoleBuilt, launch, newTab, openSignedIn, type Tab } from './browser.js';

const PARTNER_TECHNICIAN = SYSTEM_ROLES[1].id;
let t: TestApp;
let browser: Browser;
let idp: TestIdp;

beforeAll(async () => {
  ensureConsoleBuilt();
  t = await startApp({ RATE_LIMIT_ENROLL: '1000/60', SSO_ALLOW_INSECURE_ISSUERS: 'true' });
  idp = await startOidcProvider({ redirectUris: [callbackFor(t.baseUrl)] });
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await idp?.close();
});

const step = (tab: Tab, id: string) => tab.page.getByTestId(`step-${id}`);
/** Back on the home page through the navigation, as a person would. */
async function home(tab: Tab) {
  await tab.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Home' }).click();
  await tab.page.getByRole('heading', { name: 'Getting started' }).waitFor({ timeout: 30_000 });
}
const ticked = (tab: Tab, id: string) =>
  expect.poll(() => step(tab, id).getAttribute('data-done'), { timeout: 15_000 }).toBe('true');

describe('journey: the getting-started checklist ticks as the steps are done', () => {
  it('organisation → technician invited → two-step verification required → a device enrolled → dismissed', async () => {
    const partner = await createPartner(t, 'Tailspin MSP');
    const admin = await signedInPartnerMember(t, partner.id, { email: 'ada@tailspin.example', name: 'Ada Owner' });
    const tab = await newTab(browser);
    const { page } = tab;
    await openSignedIn(tab, t.baseUrl, admin.session.refreshToken);
    await page.waitForURL('**/home');
    await page.getByRole('heading', { name: 'Getting started' }).waitFor({ timeout: 60_000 });
    expect(await page.getByTestId('getting-started-progress').textContent()).toBe('0 of 6 done');
    await expect.poll(() => page.getByTestId('tenant-name').textContent()).toContain('Tailspin MSP');
    expect(
      await page.getByTestId('getting-started').getByRole('button', { name: 'Dismiss the checklist' }).count(),
    ).toBe(0);
    await checkPage(tab, 'getting-started-new-partner');

    // Each step's link leads to its page. An organisation:
    await step(tab, 'organization').getByRole('link').click();
    await page.getByRole('button', { name: 'New organisation' }).click();
    const o = await dialog(page, 'New organisation');
    await o.getByLabel(/^Name/).fill('Wingtip Dental');
    await o.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { name: 'Wingtip Dental' }).waitFor();
    await page.getByRole('button', { name: 'New site' }).click();
    const s = await dialog(page, 'New site');
    await s.getByLabel(/^Name/).fill('Harbour Street');
    await s.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('cell', { name: 'Harbour Street', exact: true }).waitFor();
    await home(tab);
    await ticked(tab, 'organization');
    expect(await step(tab, 'technician').getAttribute('data-done')).toBe('false');

    // A technician invited to the staff:
    await step(tab, 'technician').getByRole('link').click();
    await page.getByRole('button', { name: 'Invite a user' }).click();
    const inv = await dialog(page, 'Invite a user');
    await inv.getByLabel(/^E-mail/).fill('ben@tailspin.example');
    await inv.getByLabel(/^Name/).fill('Ben Technician');
    await choose(page, inv, /^Role/, 'Partner Technician');
    await inv.getByRole('button', { name: 'Send invitation' }).click();
    await page.getByTestId('users-table').getByText('ben@tailspin.example').waitFor();
    await home(tab);
    await ticked(tab, 'technician');

    // Two-step verification required for all staff:
    await step(tab, 'require_mfa').getByRole('link').click();
    await page.getByLabel('Require two-step verification for all staff').check();
    await page.getByRole('button', { name: 'Save security policy' }).click();
    await page.getByText('Security policy saved.').waitFor();
    await home(tab);
    await ticked(tab, 'require_mfa');
    expect(await page.getByTestId('getting-started-progress').textContent()).toBe('3 of 6 done');
    await checkPage(tab, 'getting-started-half-way');

    // A device enrolled with a key made on the onboarding page (the agent's own call, with the key as shown):
    await step(tab, 'first_device').getByRole('link').click();
    await page.getByText('No enrollment key for this organisation').waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'New enrollment key' }).click();
    const d = await dialog(page, 'New enrollment key');
    await d.getByLabel(/^Name/).fill('First wave');
    await choose(page, d, 'Site', 'Harbour Street');
    await d.getByRole('button', { name: 'Create key' }).click();
    const created = await dialog(page, 'Your new enrollment key');
    const key = (await page.getByTestId('enrollment-key').textContent())!.trim();
    expectStatus(await enroll(t, { enrollmentKey: key, hostname: 'wingtip-pc-01' }), 201);
    await created.getByRole('button', { name: 'Done' }).click();
    await home(tab);
    await ticked(tab, 'first_device');
    expect(await step(tab, 'staff_sso').getAttribute('data-done')).toBe('false');
    expect(await step(tab, 'audit_webhook').getAttribute('data-done')).toBe('false');
    expect(
      await page.getByTestId('getting-started').getByRole('button', { name: 'Dismiss the checklist' }).count(),
    ).toBe(0);

    // The last two steps through the API (their console journeys are in sso.test.ts and integrations.test.ts).
    const body = { name: 'Staff IdP', issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret };
    const provider = expectStatus(await admin.api.post('/sso/providers', body), 201).body;
    expectStatus(await admin.api.post(`/sso/providers/${provider.id}/status`, { status: 'active' }), 200);
    expectStatus(await admin.api.post('/webhooks', { url: 'https://93.184.215.14/hook', events: ['*'] }), 201);
    await page.reload();
    await page.getByRole('heading', { name: 'Getting started' }).waitFor({ timeout: 60_000 });
    await expect.poll(() => page.getByTestId('getting-started-progress').textContent()).toBe('6 of 6 done');
    await page.getByText('Every step is done').waitFor();
    await checkPage(tab, 'getting-started-complete');

    // Once done it may be dismissed, and stays so.
    await page.getByTestId('getting-started').getByRole('button', { name: 'Dismiss the checklist' }).click();
    await expect.poll(() => page.getByTestId('getting-started').count()).toBe(0);
    await page.reload();
    await page.getByRole('heading', { name: 'Home' }).waitFor({ timeout: 60_000 });
    await page.waitForLoadState('networkidle');
    expect(await page.getByTestId('getting-started').count()).toBe(0);
    await tab.context.close();
  });
});

describe('who sees the checklist', () => {
  it('a partner technician (no settings:write) lands on the home page without it', async () => {
    const partner = await createPartner(t);
    const tech = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_TECHNICIAN });
    const tab = await newTab(browser);
    await openSignedIn(tab, t.baseUrl, tech.session.refreshToken);
    await tab.page.getByRole('heading', { name: 'Home' }).waitFor({ timeout: 60_000 });
    await tab.page.waitForLoadState('networkidle');
    expect(await tab.page.getByTestId('getting-started').count()).toBe(0);
    await checkPage(tab, 'home-technician');
    await tab.context.close();
  });
});

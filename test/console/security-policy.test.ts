// Security policy journeys in a real Chromium against the real server: a partner admin requires two-step verification
// for all staff and sees who does not comply; the technician is then made to enrol at the next sign-in; an
// organisation admin is offered no "Delete organisation"; the partner admin's delete asks for the name, with Cancel.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import { dialog, passwordStep } from '../support/console-session.js';
import { createOrg, createPartner, signedInOrgMember, signedInPartnerMember } from '../support/fixtures.js';
import { member, PASSWORD } from '../mfa/helpers.js';
import { checkPage, ensureConsoleBuilt, launch, newTab, openSignedIn } from './browser.js';

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

describe('require two-step verification for all staff', () => {
  it('the partner admin turns it on, sees the technician listed, and the technician is sent to enrol at sign-in', async () => {
    const partner = await createPartner(t, 'Hopper MSP');
    const admin = await signedInPartnerMember(t, partner.id);
    const tech = await member(t, { kind: 'partner', partnerId: partner.id, roleId: SYSTEM_ROLES[1].id });

    const tab = await newTab(browser);
    await openSignedIn(tab, t.baseUrl, admin.session.refreshToken, '/security');
    await tab.page.getByRole('heading', { name: 'Security policy' }).waitFor();
    await expect
      .poll(() => tab.page.getByTestId('tenant-name').textContent(), { timeout: 30_000 })
      .toContain('Hopper MSP');
    await tab.page.getByText('Everyone meets the policy.').waitFor();
    await tab.page.getByLabel('Require two-step verification for all staff').check();
    await tab.page.getByRole('button', { name: 'Save security policy' }).click();
    await tab.page.getByTestId('non-compliant').getByText(tech.email).waitFor();
    await checkPage(tab, 'security-policy');

    const techTab = await newTab(browser);
    await passwordStep(techTab.page, t, tech.email, PASSWORD);
    await techTab.page.waitForURL(/\/enroll-mfa/, { timeout: 30_000 });
    await techTab.page.getByAltText('QR code for your authenticator app').waitFor({ timeout: 30_000 });
    await checkPage(techTab, 'enroll-mfa-required');
  });

  it('a lifetime out of range is refused beside its field, and the message clears when the field changes', async () => {
    const partner = await createPartner(t);
    const admin = await signedInPartnerMember(t, partner.id);
    const tab = await newTab(browser);
    await openSignedIn(tab, t.baseUrl, admin.session.refreshToken, '/security');
    const field = tab.page.getByLabel('Idle lifetime (minutes)');
    await field.fill('2');
    // The input's own minimum is not enforced on typing: the server's refusal is what shows.
    await tab.page.getByRole('button', { name: 'Save security policy' }).click();
    const error = tab.page.locator('.mantine-InputWrapper-error');
    await error.waitFor();
    expect(await error.textContent()).toMatch(/5/);
    expect(await tab.page.getByText('idleTimeoutMinutes').count()).toBe(0);
    await checkPage(tab, 'security-policy-field-error');
    await field.fill('30');
    await expect.poll(() => error.count()).toBe(0);
  });
});

describe('the console knows the caller', () => {
  it('an organisation admin sees no "Delete organisation"; a partner admin deletes only after typing the name', async () => {
    const partner = await createPartner(t);
    const org = await createOrg(t, partner.id, 'Contoso Dental');
    const orgAdmin = await signedInOrgMember(t, org);
    const tab = await newTab(browser);
    await openSignedIn(tab, t.baseUrl, orgAdmin.session.refreshToken, '/tenants');
    await tab.page.getByRole('heading', { name: 'Contoso Dental' }).waitFor({ timeout: 60_000 });
    await tab.page.getByRole('button', { name: 'Rename' }).waitFor();
    expect(await tab.page.getByRole('button', { name: 'Delete organisation' }).count()).toBe(0);
    await checkPage(tab, 'tenants-org-admin');

    const admin = await signedInPartnerMember(t, partner.id);
    const pTab = await newTab(browser);
    await openSignedIn(pTab, t.baseUrl, admin.session.refreshToken, '/tenants');
    await pTab.page.getByRole('button', { name: 'Delete organisation' }).click();
    const d = await dialog(pTab.page, /Delete “Contoso Dental”/);
    const confirm = d.getByRole('button', { name: 'Delete organisation' });
    expect(await confirm.isDisabled()).toBe(true);
    await checkPage(pTab, 'tenants-delete-confirm');
    await d.getByRole('button', { name: 'Cancel' }).click();
    await d.waitFor({ state: 'hidden' });
    await pTab.page.getByRole('button', { name: 'Delete organisation' }).click();
    const again = await dialog(pTab.page, /Delete “Contoso Dental”/);
    await again.getByLabel(/Type “Contoso Dental”/).fill('Contoso Dental');
    await again.getByRole('button', { name: 'Delete organisation' }).click();
    await again.waitFor({ state: 'hidden' });
    await pTab.page.getByText('No organisation yet').waitFor();
  });
});

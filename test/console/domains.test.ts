// The Domains page in a real Chromium against the real server and a real DNS server on loopback: a Partner Admin claims
// a domain, reads the TXT record to publish, verifies too early (told the record was not found), publishes it at the
// "DNS host" (test/support/dns.ts) and verifies: "Verified". For an organisation, a domain another partner already
// proved is refused as taken, when claimed and when verified after the other partner won the race; a claim is deleted. The organisation's own admin sees its domains, without the picker.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORG_ADMIN_ROLE_ID, PARTNER_ADMIN_ROLE_ID } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import {
  createOrg,
  createPartner,
  sessionFor,
  signedInOrgMember,
  signedInPartnerMember,
  type SignedInMember,
} from '../support/fixtures.js';
import { proveDomain, testDns, type TestDns } from '../support/dns.js';
import { checkPage, ensureConsoleBuilt, launch, newTab, openSignedIn, settle, type Tab } from './browser.js';

let t: TestApp;
let dns: TestDns;
let browser: Browser;
let partnerId: string;
let org: { id: string; partnerId: string };
let admin: SignedInMember['user'];
let rivalAdmin: SignedInMember;
const suffix = Math.random().toString(36).slice(2, 8);
const OWN = `acme-${suffix}.example`;
const TAKEN = `taken-${suffix}.example`;
const RACED = `raced-${suffix}.example`;

beforeAll(async () => {
  ensureConsoleBuilt();
  t = await startApp();
  dns = await testDns();
  browser = await launch();
  partnerId = (await createPartner(t)).id;
  org = await createOrg(t, partnerId, 'Contoso Dental');
  admin = (await signedInPartnerMember(t, partnerId, { email: `domains.admin.${suffix}@example.test` })).user;
  // Another partner got there first and proved TAKEN.
  const rival = await createPartner(t);
  rivalAdmin = await signedInPartnerMember(t, rival.id, { roleId: PARTNER_ADMIN_ROLE_ID });
  await proveDomain(rivalAdmin.api, TAKEN);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function openDomains(refreshToken: string): Promise<Tab> {
  const tab = await newTab(browser);
  await openSignedIn(tab, t.baseUrl, refreshToken, '/domains');
  await tab.page.getByRole('heading', { name: 'Domains', level: 1 }).waitFor();
  return tab;
}

const row = (page: Page, domain: string) =>
  page.getByTestId('domains-table').locator('tbody tr').filter({ hasText: domain });

async function addDomain(page: Page, domain: string) {
  await page.getByLabel('Domain', { exact: true }).fill(domain);
  await page.getByRole('button', { name: 'Add domain' }).click();
  await row(page, domain).waitFor({ timeout: 30_000 });
}

async function txtRecord(page: Page, domain: string) {
  const codes = row(page, domain).locator('code');
  return { name: (await codes.nth(0).textContent())!, value: (await codes.nth(1).textContent())! };
}

describe('journey: prove a domain from the console', () => {
  it('claims, shows the TXT record, verifies too early (not found), publishes it and verifies: Verified', async () => {
    const session = await sessionFor(t, admin.id, { scope: 'partner', partnerId, roleId: PARTNER_ADMIN_ROLE_ID }, true);
    const tab = await openDomains(session.refreshToken);
    const { page } = tab;
    await page.getByText('No domain claimed here yet.').waitFor();
    await checkPage(tab, 'domains');

    await addDomain(page, OWN.toUpperCase());
    const record = await txtRecord(page, OWN);
    expect(record.name).toBe(`_gatehouse-challenge.${OWN}`);
    expect(record.value).toMatch(/^gatehouse-verification=/);
    expect(await row(page, OWN).getByText('Pending').count()).toBe(1);

    // Too early: the record is not published yet.
    await row(page, OWN)
      .getByRole('button', { name: `Verify ${OWN}` })
      .click();
    await row(page, OWN)
      .getByRole('alert')
      .getByText(`the TXT record ${record.value} was not found at ${record.name}`, { exact: false })
      .waitFor({ timeout: 30_000 });
    await checkPage(tab, 'domains-not-verified');

    dns.publish(record.name, record.value);
    await row(page, OWN)
      .getByRole('button', { name: `Verify ${OWN}` })
      .click();
    await row(page, OWN).getByText('Verified', { exact: true }).waitFor({ timeout: 30_000 });
    expect(
      await row(page, OWN)
        .getByRole('button', { name: `Verify ${OWN}` })
        .count(),
    ).toBe(0);
    await settle(page);
    await checkPage(tab, 'domains-verified');
    await tab.context.close();
  });

  it('for an organisation: a domain another partner proved is refused as taken; a claim is deleted', async () => {
    const session = await sessionFor(t, admin.id, { scope: 'partner', partnerId, roleId: PARTNER_ADMIN_ROLE_ID }, true);
    const tab = await openDomains(session.refreshToken);
    const { page } = tab;
    await page.getByRole('combobox', { name: 'Domains of' }).click();
    await page.getByRole('option', { name: 'Contoso Dental', exact: true }).click();
    await page.getByText('No domain claimed here yet.').waitFor();

    // Already proven by another partner: refused at once.
    await page.getByLabel('Domain', { exact: true }).fill(TAKEN);
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page
      .getByRole('alert')
      .getByText('Another tenant has already proven this domain', { exact: false })
      .waitFor({ timeout: 30_000 });

    // Claimed here first, proven by the other partner before this claim is verified: taken, and still pending.
    await addDomain(page, RACED);
    await proveDomain(rivalAdmin.api, RACED);
    const record = await txtRecord(page, RACED);
    dns.publish(record.name, record.value);
    await row(page, RACED)
      .getByRole('button', { name: `Verify ${RACED}` })
      .click();
    await row(page, RACED)
      .getByRole('alert')
      .getByText(`another tenant has already proven ${RACED}`, { exact: false })
      .waitFor({ timeout: 30_000 });
    expect(await row(page, RACED).getByText('Pending').count()).toBe(1);
    await checkPage(tab, 'domains-taken');

    await row(page, RACED)
      .getByRole('button', { name: `Delete ${RACED}` })
      .click();
    const dialog = page.getByRole('dialog', { name: `Delete ${RACED}?` });
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByText('No domain claimed here yet.').waitFor({ timeout: 30_000 });
    // The partner's own domain is not listed among the organisation's.
    expect(await page.getByText(OWN).count()).toBe(0);
    await tab.context.close();
  });

  it("the organisation's admin sees the organisation's proven domain, without a tenant picker", async () => {
    const partnerSession = await sessionFor(
      t,
      admin.id,
      { scope: 'partner', partnerId, roleId: PARTNER_ADMIN_ROLE_ID },
      true,
    );
    const forOrg = `clinic-${suffix}.example`;
    await proveDomain(t.client().withToken(partnerSession.accessToken), forOrg, org.id);
    const orgAdmin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN_ROLE_ID });
    const tab = await openDomains(orgAdmin.session.refreshToken);
    const { page } = tab;
    await row(page, forOrg).getByText('Verified', { exact: true }).waitFor({ timeout: 30_000 });
    expect(await page.getByRole('combobox', { name: 'Domains of' }).count()).toBe(0);
    expect(await page.getByText(OWN).count()).toBe(0);
    await checkPage(tab, 'domains-org');
    await tab.context.close();
  });
});

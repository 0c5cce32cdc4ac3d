// The SSO providers page in a real Chromium against the real server and a real OpenID Provider (oidc-provider on
// loopback): a provider created from a preset, its discovery test, turned on; then SSO sign-in from the sign-in
// page (discovery from the typed e-mail → the IdP → the #ssoCode hand-off → signed in). Enforcing SSO through an
// untested provider shows the provider_untested warning; a provider is deleted.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PARTNER_ADMIN_ROLE_ID } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import {
  createOrg,
  createPartner,
  sessionFor,
  signedInPartnerMember,
  type SignedInMember,
} from '../support/fixtures.js';
import { proveDomain } from '../support/dns.js';
import { callbackFor, startOidcProvider, type TestIdp } from '../support/oidc.js';
import { samlUser, startSamlIdp, type TestSamlIdp } from '../support/saml-idp.js';
import { checkPage, ensureConsoleBuilt, launch, newTab, openSignedIn, settle, type Tab } from './browser.js';

let t: TestApp;
let idp: TestIdp;
let samlIdp: TestSamlIdp;
let browser: Browser;
let partnerId: string;
let admin: SignedInMember['user'];
const DOMAIN = 'contoso-dental.example';

beforeAll(async () => {
  ensureConsoleBuilt();
  t = await startApp({ SSO_ALLOW_INSECURE_ISSUERS: 'true' });
  idp = await startOidcProvider({ redirectUris: [callbackFor(t.baseUrl)] });
  samlIdp = await startSamlIdp();
  browser = await launch();
  partnerId = (await createPartner(t)).id;
  const contoso = await createOrg(t, partnerId, 'Contoso Dental');
  const fabrikam = await createOrg(t, partnerId, 'Fabrikam Clinics');
  admin = (await signedInPartnerMember(t, partnerId, { email: 'sso.admin@example.test' })).user;
  // Discovery and auto-provisioning follow proven domains only: each organisation proves its own (TXT record).
  await proveDomain(await adminApi(), DOMAIN, contoso.id);
  await proveDomain(await adminApi(), 'fabrikam.example', fabrikam.id);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await idp?.close();
  await samlIdp?.close();
});

/** A new session of the admin (signing out ends every session of the account, the fixture's too). */
const adminSession = () =>
  sessionFor(t, admin.id, { scope: 'partner', partnerId, roleId: PARTNER_ADMIN_ROLE_ID }, true);
const adminApi = async () => t.client().withToken((await adminSession()).accessToken);

async function openSso(): Promise<Tab> {
  const tab = await newTab(browser);
  await openSignedIn(tab, t.baseUrl, (await adminSession()).refreshToken, '/sso');
  await tab.page.getByRole('heading', { name: 'Single sign-on' }).waitFor();
  return tab;
}

async function pick(page: Page, scope: Page | ReturnType<Page['locator']>, label: string, option: string) {
  await scope.getByRole('combobox', { name: label }).click();
  await page.getByRole('option', { name: option, exact: true }).click();
}

async function action(page: Page, provider: string, item: string) {
  await settle(page);
  await page.getByRole('button', { name: `Actions for ${provider}` }).click();
  await page.getByRole('menuitem', { name: item, exact: true }).click();
  // The menu fades out, then unmounts a moment later: wait until it is gone.
  await expect.poll(() => page.locator('[role="menu"]').count(), { timeout: 10_000 }).toBe(0);
  await settle(page);
}

const cell = (page: Page, provider: string, n: number) =>
  page
    .getByTestId('sso-table')
    .locator('tbody tr')
    .filter({ has: page.locator('td:first-child', { hasText: provider }) })
    .getByRole('cell')
    .nth(n);

describe('journey: SSO sign-in through the OpenID Provider', () => {
  it('creates a provider from a preset, tests discovery, turns it on, and a new user signs in with it from the sign-in page', async () => {
    const tab = await openSso();
    const { page } = tab;
    await pick(page, page, 'Providers of', 'Contoso Dental');
    await page.getByText('No identity provider yet.').waitFor();
    await checkPage(tab, 'sso');

    await page.getByRole('button', { name: 'New provider' }).click();
    const form = page.getByRole('dialog', { name: 'New SSO provider' });
    await pick(page, form, 'Identity provider', 'Okta');
    // The preset's issuer pattern must be filled in before the form goes.
    await form.getByText('Replace {yourOktaDomain} in the issuer with your own value.').waitFor();
    expect(await form.getByRole('button', { name: 'Create provider' }).isDisabled()).toBe(true);
    expect(await form.getByTestId('redirect-uri').textContent()).toBe(callbackFor(t.baseUrl));
    await form.getByLabel(/^Name/).fill('Contoso Okta');
    await form.getByLabel(/^Issuer/).fill(idp.issuer);
    await form.getByLabel(/^Client ID/).fill(idp.clientId);
    await form.getByLabel(/^Client secret/).fill(idp.clientSecret);
    await form.getByLabel('Allowed domains', { exact: true }).fill(DOMAIN);
    await page.keyboard.press('Enter');
    await form.getByRole('checkbox', { name: 'Create accounts automatically' }).check();
    await pick(page, form, 'Role of new users', 'Organization Technician');
    await checkPage(tab, 'sso-form');
    await form.getByRole('button', { name: 'Create provider' }).click();
    await form.waitFor({ state: 'detached' });
    await expect.poll(() => cell(page, 'Contoso Okta', 2).textContent(), { timeout: 30_000 }).toBe('inactive');
    expect(await cell(page, 'Contoso Okta', 3).textContent()).toBe(DOMAIN);
    expect(await cell(page, 'Contoso Okta', 5).textContent()).toBe('Never');

    // Discovery against the real provider.
    await action(page, 'Contoso Okta', 'Test');
    const result = page.getByRole('dialog', { name: 'Test of Contoso Okta' });
    await result.getByText('Discovery succeeded').waitFor({ timeout: 30_000 });
    expect(await result.getByText(`${idp.issuer}/auth`, { exact: true }).count()).toBe(1);
    await checkPage(tab, 'sso-test');
    await result.getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => cell(page, 'Contoso Okta', 5).textContent(), { timeout: 30_000 }).not.toBe('Never');

    await action(page, 'Contoso Okta', 'Turn on (active)');
    await expect.poll(() => cell(page, 'Contoso Okta', 2).textContent(), { timeout: 30_000 }).toBe('active');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();

    // Sign-in: the typed e-mail finds the provider; the IdP signs the person in; the #ssoCode hand-off signs them in here.
    const email = `new.tech@${DOMAIN}`;
    idp.setUser({ sub: 'okta-sub-1', email, email_verified: true, name: 'New Tech' });
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('E-mail').blur();
    const go = page.getByRole('link', { name: 'Continue with Contoso Okta' });
    await go.waitFor({ timeout: 30_000 });
    await checkPage(tab, 'login-sso-discovered');
    await go.click();
    await expect.poll(() => page.getByTestId('whoami').textContent(), { timeout: 60_000 }).toBe(email);
    expect(idp.interactions).toContain('login');
    expect(page.url()).not.toContain('ssoCode');

    // The account was provisioned with the provider's default role in Contoso Dental.
    const api = await adminApi();
    const org = (await api.get('/orgs/organizations')).body.data.find(
      (o: { name: string }) => o.name === 'Contoso Dental',
    );
    const members = await api.get('/users', { query: { orgId: org!.id } });
    expect(members.body.data.map((u: { email: string; roleName?: string }) => [u.email, u.roleName])).toEqual([
      [email, 'Organization Technician'],
    ]);
    await tab.context.close();
  });
});

describe('enforce SSO through an untested provider', () => {
  it('shows the provider_untested warning until a test passes, and a provider can be deleted', async () => {
    const tab = await openSso();
    const { page } = tab;
    await page.getByText('No identity provider yet.').waitFor();
    await page.getByRole('button', { name: 'New provider' }).click();
    const form = page.getByRole('dialog', { name: 'New SSO provider' });
    await pick(page, form, 'Identity provider', 'Generic OpenID Connect');
    await form.getByLabel(/^Name/).fill('Team IdP');
    await form.getByLabel(/^Issuer/).fill(idp.issuer);
    await form.getByLabel(/^Client ID/).fill(idp.clientId);
    await form.getByRole('checkbox', { name: 'Enforce single sign-on' }).check();
    await form.getByText('Single sign-on is enforced through a provider that has never passed a test.').waitFor();
    await form.getByRole('button', { name: 'Create provider' }).click();
    await form.waitFor({ state: 'detached' });

    const warning = page.getByTestId('untested-warning');
    await warning.waitFor({ timeout: 30_000 });
    expect(await warning.textContent()).toContain('Team IdP has never passed a test');
    await checkPage(tab, 'sso-untested');

    await action(page, 'Team IdP', 'Test');
    const result = page.getByRole('dialog', { name: 'Test of Team IdP' });
    await result.getByText('Discovery succeeded').waitFor({ timeout: 30_000 });
    await result.getByRole('button', { name: 'Close' }).click();
    await warning.waitFor({ state: 'detached', timeout: 30_000 });

    await action(page, 'Team IdP', 'Delete');
    const del = page.getByRole('dialog', { name: 'Delete Team IdP?' });
    await del.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No identity provider yet.').waitFor({ timeout: 30_000 });
    const after = await (await adminApi()).get('/sso/providers');
    expect(after.status, after.text).toBe(200);
    expect(after.body.data).toEqual([]);
    await tab.context.close();
  });
});

describe("journey: a SAML provider from the IdP's metadata", () => {
  it('is created from its metadata URL, its test names the signing certificate, and a new user signs in through it', async () => {
    const tab = await openSso();
    const { page } = tab;
    await pick(page, page, 'Providers of', 'Fabrikam Clinics');
    await page.getByText('No identity provider yet.').waitFor();
    await page.getByRole('button', { name: 'New provider' }).click();
    const form = page.getByRole('dialog', { name: 'New SSO provider' });
    await pick(page, form, 'Identity provider', 'Keycloak');
    await form.getByRole('radio', { name: 'SAML 2.0' }).check();
    await form.getByText('Replace {host} in the metadata URL with your own value.').waitFor();
    expect(await form.getByText(`${t.baseUrl}/api/v1/sso/saml/acs`, { exact: true }).count()).toBe(1);
    await form.getByRole('textbox', { name: 'Name', exact: true }).fill('Fabrikam SAML');
    await form.getByLabel(/^Metadata URL/).fill(samlIdp.metadataUrl);
    await form.getByLabel('Allowed domains', { exact: true }).fill('fabrikam.example');
    await page.keyboard.press('Enter');
    await form.getByRole('checkbox', { name: 'Create accounts automatically' }).check();
    await pick(page, form, 'Role of new users', 'Organization Viewer');
    await checkPage(tab, 'sso-form-saml');
    await form.getByRole('button', { name: 'Create provider' }).click();
    await form.waitFor({ state: 'detached' });
    await expect.poll(() => cell(page, 'Fabrikam SAML', 1).textContent(), { timeout: 30_000 }).toBe('SAML 2.0');

    await action(page, 'Fabrikam SAML', 'Test');
    const result = page.getByRole('dialog', { name: 'Test of Fabrikam SAML' });
    await result.getByText('The metadata is usable').waitFor({ timeout: 30_000 });
    expect(await result.getByText(samlIdp.entityId, { exact: true }).count()).toBe(1);
    expect(await result.getByRole('listitem').first().textContent()).toMatch(/Test SAML IdP.*valid until/);
    await checkPage(tab, 'sso-test-saml');
    await result.getByRole('button', { name: 'Close' }).click();

    // Once created, the form shows the values to register: the ACS URL and this provider's entity id.
    await action(page, 'Fabrikam SAML', 'Edit');
    const edit = page.getByRole('dialog', { name: 'Edit Fabrikam SAML' });
    await edit.getByText(/\/api\/v1\/sso\/saml\/.+\/metadata$/).waitFor();
    await edit.getByRole('button', { name: 'Cancel' }).click();

    await action(page, 'Fabrikam SAML', 'Turn on (active)');
    await expect.poll(() => cell(page, 'Fabrikam SAML', 2).textContent(), { timeout: 30_000 }).toBe('active');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();

    const email = 'new.viewer@fabrikam.example';
    samlIdp.user = samlUser(email, { name: 'New Viewer' });
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('E-mail').blur();
    await page.getByRole('link', { name: 'Continue with Fabrikam SAML' }).click();
    await expect.poll(() => page.getByTestId('whoami').textContent(), { timeout: 60_000 }).toBe(email);
    await tab.context.close();
  });
});

describe('a provider listing a domain nobody proved here is flagged', () => {
  it('the page warns, names the domain, marks it "not proven" in the table and links to Domains', async () => {
    const northwind = await createOrg(t, partnerId, 'Northwind Vets');
    const created = await (await adminApi()).post('/sso/providers', {
      orgId: northwind.id,
      name: 'Northwind IdP',
      issuer: idp.issuer,
      clientId: idp.clientId,
      clientSecret: idp.clientSecret,
      allowedDomains: 'northwind.example',
    });
    expect(created.status, created.text).toBe(201);
    const tab = await openSso();
    const { page } = tab;
    await pick(page, page, 'Providers of', 'Northwind Vets');
    const warning = page.getByTestId('unproven-warning');
    await warning.getByText('Northwind IdP lists domains not proven here').waitFor({ timeout: 30_000 });
    expect(await warning.textContent()).toContain('northwind.example');
    expect(await cell(page, 'Northwind IdP', 3).textContent()).toBe('northwind.example (not proven)');
    await checkPage(tab, 'sso-unproven');
    await warning.getByRole('link', { name: 'Prove them under Domains.' }).click();
    await page.getByRole('heading', { name: 'Domains', level: 1 }).waitFor();
    await tab.context.close();
  });
});

// Refusals shown the way a person reads them, in a real Chromium against the real server (production outbound rules:
// an issuer must use https): each field's problem beside its field in plain words (no field path, no doubled full
// stop), what belongs to no field at the top of the form, and both gone as soon as the form changes.
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import { choose, dialog } from '../support/console-session.js';
import { createPartner, signedInPartnerMember } from '../support/fixtures.js';
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

/** The error Mantine shows under an input, found through the input's own aria-describedby (beside that field). */
async function errorOf(page: Page, input: Locator): Promise<string | null> {
  const ids = ((await input.getAttribute('aria-describedby')) ?? '').split(/\s+/).filter((id) => id.endsWith('-error'));
  if (!ids.length) return null;
  return page.locator(`[id="${ids[0]}"]`).textContent();
}

async function signedIn(path: string) {
  const partner = await createPartner(t);
  const admin = await signedInPartnerMember(t, partner.id);
  const tab = await newTab(browser);
  await openSignedIn(tab, t.baseUrl, admin.session.refreshToken, path);
  return { tab, admin, partner };
}

describe('field errors beside their field', () => {
  it('a bad SSO issuer shows its error beside the field', async () => {
    const { tab } = await signedIn('/sso');
    const { page } = tab;
    await page.getByRole('heading', { name: 'Single sign-on' }).waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'New provider' }).click();
    const form = await dialog(page, 'New SSO provider');
    await form.getByLabel(/^Name/).fill('Staff IdP');
    const issuer = form.getByLabel(/^Issuer/);
    await issuer.fill('http://example.com');
    await form.getByLabel(/^Client ID/).fill('gatehouse');
    await form.getByRole('button', { name: 'Create provider' }).click();

    await expect.poll(() => errorOf(page, issuer), { timeout: 30_000 }).toBe('The issuer must use https.');
    expect(await issuer.getAttribute('aria-invalid')).toBe('true');
    // Nothing else: no alert at the top repeating it, no raw field path anywhere in the dialog.
    expect(await form.getByTestId('form-error').count()).toBe(0);
    expect(await form.textContent()).not.toMatch(/issuer:|\.\./);
    await issuer.focus();
    await issuer.evaluate((el) => el.scrollIntoView({ block: 'center' }));
    await checkPage(tab, 'sso-form-issuer-error');

    // The form changes: the message goes.
    await issuer.fill('https://login.example.com');
    await expect.poll(() => errorOf(page, issuer)).toBeNull();
    await tab.context.close();
  });

  it('an invitation refused for a reason of no field shows at the top of the form, and clears on change', async () => {
    const { tab, admin } = await signedIn('/users');
    const { page } = tab;
    await page.getByRole('heading', { name: 'Users' }).waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Invite a user' }).click();
    const inv = await dialog(page, 'Invite a user');
    // The admin's own address: already a member here.
    await inv.getByLabel(/^E-mail/).fill(admin.user.email);
    await inv.getByLabel(/^Name/).fill('Me again');
    await choose(page, inv, /^Role/, SYSTEM_ROLES[1].name);
    await inv.getByRole('button', { name: 'Send invitation' }).click();
    const top = inv.getByTestId('form-error');
    await top.waitFor({ timeout: 30_000 });
    expect(await top.textContent()).toBe('This person is already a member here.');
    await checkPage(tab, 'invite-form-error');
    await inv.getByLabel(/^E-mail/).fill('someone.else@example.test');
    await expect.poll(() => top.count()).toBe(0);
    await tab.context.close();
  });

  it('a webhook to a plain-http address is refused beside the URL field', async () => {
    const { tab } = await signedIn('/integrations/webhooks');
    const { page } = tab;
    await page.getByRole('button', { name: 'New webhook' }).click({ timeout: 60_000 });
    const d = await dialog(page, 'New webhook');
    const url = d.getByLabel(/^URL/);
    await url.fill('http://siem.example.com/hook');
    await d.getByRole('button', { name: 'Create webhook' }).click();
    await expect.poll(() => errorOf(page, url), { timeout: 30_000 }).toMatch(/^The [^.]+ must use https\.$/);
    expect(await d.getByTestId('form-error').count()).toBe(0);
    await checkPage(tab, 'webhook-form-url-error');
    await url.fill('https://siem.example.com/hook');
    await expect.poll(() => errorOf(page, url)).toBeNull();
    await tab.context.close();
  });
});

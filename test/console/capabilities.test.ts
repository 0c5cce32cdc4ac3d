// The console knows the caller, in a real Chromium against the real server: people who may read a page but not change
// it are offered no create, change or delete action the API would refuse them with 403 (each page asks the server
// once, GET /access/capabilities), while an administrator on the same pages is offered them.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import { expectStatus } from '../support/client.js';
import { createOrg, createPartner, createSite, signedInOrgMember, signedInPartnerMember } from '../support/fixtures.js';
import { checkPage, ensureConsoleBuilt, launch, newTab, openSignedIn, type Tab } from './browser.js';

const ORG_VIEWER = SYSTEM_ROLES[5].id;
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

/** Opens a page and waits until its capabilities have been answered (the buttons depend on them). */
async function visit(tab: Tab, path: string, heading: string) {
  const answered = tab.page.waitForResponse((r) => r.url().includes('/api/v1/access/capabilities'), {
    timeout: 60_000,
  });
  await tab.page.goto(`${t.baseUrl}${path}`);
  await tab.page.getByRole('heading', { name: heading, exact: true }).first().waitFor({ timeout: 60_000 });
  expect((await answered).status()).toBe(200);
  await tab.page.waitForLoadState('networkidle');
}
const buttons = (page: Page, name: string | RegExp) => page.getByRole('button', { name }).count();

describe('actions the caller would get 403 for are not offered', () => {
  it('a partner member whose role only reads users and settings sees no invite, role, SSO or domain actions', async () => {
    const partner = await createPartner(t);
    const admin = await signedInPartnerMember(t, partner.id);
    const role = expectStatus(
      await admin.api.post('/roles', {
        name: 'Auditor',
        permissions: [
          { resource: 'users', action: 'read' },
          { resource: 'settings', action: 'read' },
        ],
      }),
      201,
    ).body;
    const reader = await signedInPartnerMember(t, partner.id, { roleId: role.id });
    // The refusals the console must not invite.
    expect((await reader.api.post('/roles', { name: 'X', permissions: [] })).status).toBe(403);
    expect((await reader.api.post('/domains', { domain: 'reader.example.com' })).status).toBe(403);

    const tab = await newTab(browser);
    await openSignedIn(tab, t.baseUrl, reader.session.refreshToken, '/home');
    await tab.page.getByRole('heading', { name: 'Home' }).waitFor({ timeout: 60_000 });
    // The partner's name in the header, though this role may not read the partner record.
    await expect.poll(() => tab.page.getByTestId('tenant-name').textContent()).toContain(partner.name);

    await visit(tab, '/users', 'Users');
    await tab.page.getByTestId('users-table').getByText(admin.user.email).waitFor();
    expect(await buttons(tab.page, 'Invite a user')).toBe(0);
    expect(await buttons(tab.page, /^Actions for /)).toBe(0);
    await checkPage(tab, 'users-read-only');

    await visit(tab, '/roles', 'Roles');
    await tab.page.getByTestId('roles-table').getByText('Auditor').waitFor();
    expect(await buttons(tab.page, 'New role')).toBe(0);

    await visit(tab, '/sso', 'Single sign-on');
    expect(await buttons(tab.page, 'New provider')).toBe(0);

    await visit(tab, '/domains', 'Domains');
    expect(await buttons(tab.page, 'Add domain')).toBe(0);
    await checkPage(tab, 'domains-read-only');
    await tab.context.close();

    // The partner's admin, on the same pages, is offered them.
    const adminTab = await newTab(browser);
    await openSignedIn(adminTab, t.baseUrl, admin.session.refreshToken, '/home');
    await adminTab.page.getByRole('heading', { name: 'Home' }).waitFor({ timeout: 60_000 });
    await visit(adminTab, '/users', 'Users');
    await adminTab.page.getByRole('button', { name: 'Invite a user' }).waitFor();
    await visit(adminTab, '/sso', 'Single sign-on');
    await adminTab.page.getByRole('button', { name: 'New provider' }).waitFor();
    await adminTab.context.close();
  });

  it('an organisation viewer sees no rename, delete, new site or new enrollment key', async () => {
    const partner = await createPartner(t);
    const org = await createOrg(t, partner.id, 'Litware Clinic');
    await createSite(t, org.id, 'Front desk');
    const viewer = await signedInOrgMember(t, org, { roleId: ORG_VIEWER });
    expect((await viewer.api.post('/enrollment-keys', { orgId: org.id, name: 'K' })).status).toBe(403);

    const tab = await newTab(browser);
    await openSignedIn(tab, t.baseUrl, viewer.session.refreshToken, '/home');
    await tab.page.getByRole('heading', { name: 'Home' }).waitFor({ timeout: 60_000 });
    await visit(tab, '/tenants', 'Litware Clinic');
    await tab.page.getByRole('cell', { name: 'Front desk', exact: true }).waitFor();
    for (const name of ['Rename', 'Delete organisation', 'New site', 'New device group'])
      expect(await buttons(tab.page, name), name).toBe(0);
    await checkPage(tab, 'tenants-org-viewer');

    await visit(tab, '/onboarding/enrollment-keys', 'Onboarding');
    expect(await buttons(tab.page, 'New enrollment key')).toBe(0);
    await checkPage(tab, 'enrollment-keys-org-viewer');
    await tab.context.close();
  });
});

// The roles page in a real Chromium against the real server: the role builder with inheritance (a parent, a child
// that inherits, effective permissions naming their source role), clone and delete with the API's refusals in words,
// and the permission ceiling (what the caller does not hold cannot be granted, and is shown so).
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { PARTNER_ADMIN_ROLE_ID } from '../../src/modules/roles/catalog.js';
import { createPartner, sessionFor, signedInPartnerMember, type SignedInMember } from '../support/fixtures.js';
import { checkPage, ensureConsoleBuilt, launch, newTab, openSignedIn, settle } from './browser.js';

let t: TestApp;
let browser: Browser;
let partnerId: string;
let admin: SignedInMember;

beforeAll(async () => {
  ensureConsoleBuilt();
  t = await startApp();
  browser = await launch();
  partnerId = (await createPartner(t)).id;
  admin = await signedInPartnerMember(t, partnerId, { email: 'roles.admin@example.test' });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** A new session of the admin per tab (a refresh token is single-use: the console rotates it on start). */
const adminSession = async () =>
  (await sessionFor(t, admin.user.id, { scope: 'partner', partnerId, roleId: PARTNER_ADMIN_ROLE_ID }, true))
    .refreshToken;

async function rowOf(page: Page, name: string) {
  const row = page
    .getByTestId('roles-table')
    .locator('tbody tr')
    .filter({ has: page.locator('td:first-child').getByText(name, { exact: true }) });
  await row.waitFor();
  return row;
}

async function action(page: Page, role: string, item: string) {
  await settle(page);
  await page.getByRole('button', { name: `Actions for ${role}` }).click();
  await page.getByRole('menuitem', { name: item, exact: true }).click();
  // The menu fades out, then unmounts a moment later: wait until it is gone.
  await expect.poll(() => page.locator('[role="menu"]').count(), { timeout: 10_000 }).toBe(0);
  await settle(page);
}

describe('journey: role builder with inheritance', () => {
  it('creates a parent, a child that inherits from it, and shows the effective permissions with their source', async () => {
    const tab = await newTab(browser);
    const { page } = tab;
    await openSignedIn(tab, t.baseUrl, await adminSession(), '/roles');
    await page.getByRole('heading', { name: 'Roles' }).waitFor();
    await rowOf(page, 'Partner Admin');
    await checkPage(tab, 'roles');

    // The parent: two permissions from the catalogue.
    await page.getByRole('button', { name: 'New role' }).click();
    let d = page.getByRole('dialog', { name: 'New role' });
    await d.getByRole('checkbox', { name: 'View devices and their inventory' }).waitFor();
    await checkPage(tab, 'roles-builder');
    await d.getByLabel(/^Name/).fill('Helpdesk base');
    await d.getByRole('checkbox', { name: 'View devices and their inventory' }).check();
    await d.getByRole('checkbox', { name: 'View scripts' }).check();
    await d.getByRole('button', { name: 'Create role' }).click();
    await d.waitFor({ state: 'detached' });
    expect(await (await rowOf(page, 'Helpdesk base')).getByRole('cell').nth(3).textContent()).toBe('0');

    // The child: inherits both (shown held and locked, with their source), adds one of its own, Force MFA.
    await page.getByRole('button', { name: 'New role' }).click();
    d = page.getByRole('dialog', { name: 'New role' });
    await d.getByLabel(/^Name/).fill('Helpdesk senior');
    await d.getByLabel('Parent role').click();
    await page.getByRole('option', { name: 'Helpdesk base', exact: true }).click();
    const inherited = d.getByRole('checkbox', { name: 'View devices and their inventory' });
    await expect.poll(() => inherited.isDisabled(), { timeout: 30_000 }).toBe(true);
    expect(await inherited.isChecked()).toBe(true);
    await d.getByText('devices:read · inherited from Helpdesk base').waitFor();
    await d.getByRole('checkbox', { name: 'Run scripts on devices' }).check();
    await d.getByRole('checkbox', { name: 'Force MFA' }).check();
    await checkPage(tab, 'roles-builder-child');
    await d.getByRole('button', { name: 'Create role' }).click();
    await d.waitFor({ state: 'detached' });

    const child = await rowOf(page, 'Helpdesk senior');
    const cells = await child.getByRole('cell').allTextContents();
    expect(cells.slice(1, 4)).toEqual(['Helpdesk base', 'Yes', '0']);

    await action(page, 'Helpdesk senior', 'Effective permissions');
    const eff = page.getByRole('dialog', { name: 'Effective permissions of Helpdesk senior' });
    await eff.getByTestId('effective-permissions').waitFor();
    expect(await eff.getByTestId('inheritance-chain').textContent()).toBe('Inherits: Helpdesk senior → Helpdesk base');
    const rows = Object.fromEntries(
      await Promise.all(
        (await eff.getByTestId('effective-permissions').locator('tbody tr').all()).map(async (r) => {
          const c = await r.getByRole('cell').allTextContents();
          return [c[0], c[2]] as const;
        }),
      ),
    );
    expect(rows).toEqual({
      'devices:read': 'Inherited from Helpdesk base',
      'scripts:read': 'Inherited from Helpdesk base',
      'scripts:execute': 'Own',
    });
    await checkPage(tab, 'roles-effective');
    await eff.getByRole('button', { name: 'Close' }).click();

    // The API checked it too: the child's effective permissions name the parent as their source.
    const roles = await admin.api.get('/roles');
    const childId = roles.body.data.find((r: { name: string }) => r.name === 'Helpdesk senior')!.id;
    const api = await admin.api.get(`/roles/${childId}/effective-permissions`);
    expect(
      api.body.permissions
        .filter((p: { inherited: boolean }) => p.inherited)
        .map((p: { sourceRoleName: string }) => p.sourceRoleName),
    ).toEqual(['Helpdesk base', 'Helpdesk base']);
    await tab.context.close();
  });

  it('refuses to delete a parent in words; an edit of the parent reaches the child; clones the child and deletes the copy', async () => {
    const tab = await newTab(browser);
    const { page } = tab;
    await openSignedIn(tab, t.baseUrl, await adminSession(), '/roles');
    await rowOf(page, 'Helpdesk base');

    await action(page, 'Helpdesk base', 'Delete');
    let d = page.getByRole('dialog', { name: 'Delete the role Helpdesk base?' });
    await d.getByRole('button', { name: 'Delete' }).click();
    await expect
      .poll(() => d.getByRole('alert').textContent(), { timeout: 30_000 })
      .toBe('Other roles inherit from this one. Change their parent first.');
    await checkPage(tab, 'roles-delete-refused');
    await d.getByRole('button', { name: 'Cancel' }).click();

    // An edit of the parent reaches the child: a permission added to Helpdesk base is inherited by Helpdesk senior.
    await action(page, 'Helpdesk base', 'Edit');
    d = page.getByRole('dialog', { name: 'Edit role Helpdesk base' });
    await expect
      .poll(() => d.getByRole('checkbox', { name: 'View scripts' }).isChecked(), { timeout: 30_000 })
      .toBe(true);
    await d.getByRole('checkbox', { name: 'Acknowledge alerts' }).check();
    await d.getByRole('button', { name: 'Save role' }).click();
    await d.waitFor({ state: 'detached' });
    await action(page, 'Helpdesk senior', 'Effective permissions');
    const eff = page.getByRole('dialog', { name: 'Effective permissions of Helpdesk senior' });
    await eff
      .getByRole('row', { name: /^alerts:acknowledge .*Inherited from Helpdesk base$/ })
      .waitFor({ timeout: 30_000 });
    await eff.getByRole('button', { name: 'Close' }).click();
    await settle(page);

    await action(page, 'Helpdesk senior', 'Clone');
    d = page.getByRole('dialog', { name: 'Clone Helpdesk senior' });
    await d.getByLabel(/^Name of the copy/).fill('Helpdesk senior (night)');
    await d.getByRole('button', { name: 'Clone' }).click();
    const copy = await rowOf(page, 'Helpdesk senior (night)');
    expect((await copy.getByRole('cell').allTextContents()).slice(1, 3)).toEqual(['—', 'Yes']);

    // A system role cannot be edited or deleted; it can be cloned.
    await settle(page);
    await page.getByRole('button', { name: 'Actions for Partner Viewer' }).click();
    await page.getByRole('menuitem').first().waitFor();
    expect(await page.getByRole('menuitem').allTextContents()).toEqual(['Effective permissions', 'Clone']);
    await page.keyboard.press('Escape');

    await action(page, 'Helpdesk senior (night)', 'Delete');
    d = page.getByRole('dialog', { name: 'Delete the role Helpdesk senior (night)?' });
    await d.getByRole('button', { name: 'Delete' }).click();
    await d.waitFor({ state: 'detached' });
    await expect
      .poll(() => page.getByText('Helpdesk senior (night)', { exact: true }).count(), { timeout: 30_000 })
      .toBe(0);
    await tab.context.close();
  });
});

describe('the role builder stays under the permission ceiling', () => {
  it('a role manager without devices:execute or users:delete sees them withheld', async () => {
    const created = await admin.api.post('/roles', {
      name: 'Role manager',
      permissions: ['users:read', 'users:write', 'devices:read'].map((k) => ({
        resource: k.split(':')[0]!,
        action: k.split(':')[1]!,
      })),
    });
    expect(created.status, created.text).toBe(201);
    const manager = await signedInPartnerMember(t, partnerId, { roleId: created.body.id });
    const tab = await newTab(browser);
    const { page } = tab;
    await openSignedIn(tab, t.baseUrl, manager.session.refreshToken, '/roles');
    await rowOf(page, 'Role manager');

    // No users:delete: no Delete action on a custom role.
    await settle(page);
    await page.getByRole('button', { name: 'Actions for Helpdesk base' }).click();
    await page.getByRole('menuitem').first().waitFor();
    expect(await page.getByRole('menuitem').allTextContents()).toEqual(['Effective permissions', 'Edit', 'Clone']);
    await page.keyboard.press('Escape');

    await page.getByRole('button', { name: 'New role' }).click();
    const d = page.getByRole('dialog', { name: 'New role' });
    const execute = d.getByRole('checkbox', { name: 'Run actions on devices' });
    await execute.waitFor();
    expect(await execute.isDisabled()).toBe(true);
    await d.getByText('devices:execute · you do not hold this permission').waitFor();
    expect(await d.getByRole('checkbox', { name: 'View devices and their inventory' }).isDisabled()).toBe(false);
    await checkPage(tab, 'roles-ceiling');

    // What the page withholds the API refuses too, and the refusal reads as words.
    await d.getByLabel(/^Name/).fill('Too wide');
    await d.getByLabel('Parent role').click();
    await page.getByRole('option', { name: 'Helpdesk senior', exact: true }).click();
    await d.getByRole('button', { name: 'Create role' }).click();
    await expect
      .poll(() => d.getByRole('alert').textContent(), { timeout: 30_000 })
      .toMatch(/^You cannot grant permissions you do not hold yourself\. Not yours to give: .*scripts:execute/);
    await tab.context.close();
  });
});

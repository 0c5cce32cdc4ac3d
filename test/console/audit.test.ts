// The audit page in a real Chromium against the real server: keyset paging, filters (action, actor, organisation,
// result, time range), a record's details, CSV and JSON Lines export through the typed client (the token in a
// header, never in the URL), and the chain verification result, intact and after tampering.
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PARTNER_ADMIN_ROLE_ID } from '../../src/modules/roles/catalog.js';
import { appendRecords, asTamperer } from '../audit/seed.js';
import { startApp, type TestApp } from '../support/app.js';
import {
  createOrg,
  createPartner,
  sessionFor,
  signedInPartnerMember,
  type SignedInMember,
} from '../support/fixtures.js';
import { checkPage, ensureConsoleBuilt, launch, newTab, openSignedIn, type Tab } from './browser.js';

let t: TestApp;
let browser: Browser;
let partnerId: string;
let admin: SignedInMember;
let seeded: string[];

beforeAll(async () => {
  ensureConsoleBuilt();
  t = await startApp();
  browser = await launch();
  partnerId = (await createPartner(t)).id;
  const org = await createOrg(t, partnerId, 'Contoso Dental');
  admin = await signedInPartnerMember(t, partnerId, { email: 'auditor@example.test' });
  // 60 records of the partner's chain (more than a page): every third one denied, the even ones in Contoso Dental.
  seeded = await appendRecords(t.deps.db, partnerId, 60, (i) => ({
    action: 'device.command',
    at: new Date(Date.now() - (60 - i) * 60_000),
    result: i % 3 === 0 ? 'denied' : 'success',
    orgId: i % 2 === 0 ? org.id : null,
    resourceType: 'device',
    resourceId: `pc-${i}`,
    details: { i },
  }));
  // Two events written by the API itself, with the admin as their actor.
  const role = await admin.api.post('/roles', {
    name: 'Auditors',
    permissions: [{ resource: 'audit', action: 'read' }],
  });
  expect(role.status, role.text).toBe(201);
  const clone = await admin.api.post(`/roles/${role.body.id}/clone`, { name: 'Auditors (copy)' });
  expect(clone.status, clone.text).toBe(201);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

const adminSession = async () =>
  (await sessionFor(t, admin.user.id, { scope: 'partner', partnerId, roleId: PARTNER_ADMIN_ROLE_ID }, true))
    .refreshToken;
const rows = (page: Page) => page.getByTestId('audit-table').locator('tbody tr');
const actions = async (page: Page) =>
  (await rows(page).all()).length
    ? Promise.all((await rows(page).all()).map(async (r) => (await r.getByRole('cell').nth(1).textContent())!.trim()))
    : [];

async function pick(page: Page, label: string, option: string) {
  await page.getByRole('combobox', { name: label }).click();
  await page.getByRole('option', { name: option, exact: true }).click();
}

async function openAudit(): Promise<Tab> {
  const tab = await newTab(browser);
  await openSignedIn(tab, t.baseUrl, await adminSession(), '/audit');
  await tab.page.getByRole('heading', { name: 'Audit' }).waitFor();
  await rows(tab.page).first().waitFor();
  return tab;
}

describe('journey: audit filter and export', () => {
  it('pages through the records, filters them, shows a record, and exports what is shown as CSV and JSON Lines', async () => {
    const tab = await openAudit();
    const { page } = tab;
    const exportRequests: { url: string; authorization?: string }[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/audit-logs/export'))
        exportRequests.push({ url: r.url(), authorization: r.headers().authorization });
    });

    // Newest first, 50 a page; the second page holds the rest.
    await expect.poll(() => rows(page).count(), { timeout: 30_000 }).toBe(50);
    expect((await actions(page)).slice(0, 2)).toEqual(['role.clone', 'role.create']);
    await checkPage(tab, 'audit');
    await page.getByRole('button', { name: 'Next' }).click();
    await expect.poll(() => rows(page).count(), { timeout: 30_000 }).toBe(12);
    expect(await page.getByText('Page 2').count()).toBe(1);

    // Action prefix.
    await page.getByLabel('Action', { exact: true }).fill('role.*');
    await expect.poll(() => actions(page), { timeout: 30_000 }).toEqual(['role.clone', 'role.create']);
    expect(await page.getByText('Page 1').count()).toBe(1);

    // A record's details, and narrowing to its actor from there.
    await rows(page)
      .nth(1)
      .getByRole('button', { name: /^Details of role\.create/ })
      .click();
    const drawer = page.getByRole('dialog', { name: 'Audit record' });
    await drawer.getByTestId('audit-details').waitFor();
    expect(await drawer.getByTestId('audit-details').textContent()).toContain('"name": "Auditors"');
    expect(await drawer.getByRole('row', { name: /^Actor/ }).textContent()).toContain('auditor@example.test');
    await checkPage(tab, 'audit-details');
    await drawer.getByRole('button', { name: 'Only this actor' }).click();
    await drawer.waitFor({ state: 'detached' });
    await expect
      .poll(() => page.getByRole('combobox', { name: 'Actor' }).inputValue(), { timeout: 30_000 })
      .toBe('auditor@example.test');
    await expect.poll(() => actions(page), { timeout: 30_000 }).toEqual(['role.clone', 'role.create']);

    // Export what is shown.
    const csv = await download(page, 'Export CSV');
    expect(csv.name).toMatch(/\.csv$/);
    const lines = csv.text.trim().split(/\r?\n/);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^id,at,action,result,actorUserId,actorEmail/);
    expect(lines.slice(1).map((l) => l.split(',')[2])).toEqual(['role.clone', 'role.create']);
    const jsonl = await download(page, 'Export JSON Lines');
    expect(jsonl.name).toMatch(/\.jsonl$/);
    const records = jsonl.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { action: string; actorEmail: string });
    expect(records.map((r) => [r.action, r.actorEmail])).toEqual([
      ['role.clone', 'auditor@example.test'],
      ['role.create', 'auditor@example.test'],
    ]);
    // The token travelled in the Authorization header, never in the URL.
    expect(exportRequests).toHaveLength(2);
    for (const r of exportRequests) {
      expect(r.authorization).toMatch(/^Bearer ey/);
      expect(r.url).not.toMatch(/token|ey[A-Za-z0-9_-]{10,}\./i);
      expect(new URL(r.url).searchParams.get('action')).toBe('role.*');
    }

    // Organisation and result, then a time range with nothing in it.
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await pick(page, 'Organisation', 'Contoso Dental');
    await pick(page, 'Result', 'Denied');
    // i even and a multiple of 3: 0, 6, …, 54.
    await expect.poll(() => rows(page).count(), { timeout: 30_000 }).toBe(10);
    expect(new Set(await actions(page))).toEqual(new Set(['device.command']));
    await page.getByLabel('From', { exact: true }).fill('2099-01-01T00:00');
    await page.getByText('No record matches these filters.').waitFor({ timeout: 30_000 });
    await checkPage(tab, 'audit-empty');
    await tab.context.close();
  });
});

async function download(page: Page, button: string) {
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: button }).click()]);
  return { name: file.suggestedFilename(), text: readFileSync((await file.path())!, 'utf8') };
}

describe('the chain verification result', () => {
  it('says the chain is intact, and after a record is altered names the first broken one', async () => {
    const tab = await openAudit();
    const { page } = tab;
    await page.getByRole('button', { name: 'Verify the chain' }).click();
    const result = page.getByTestId('chain-result');
    await result.getByText('The audit chain is intact').waitFor({ timeout: 30_000 });
    expect(await result.textContent()).toMatch(/\d+ records checked: none was changed/);
    await checkPage(tab, 'audit-verified');

    await asTamperer(t.deps.db, (tx) =>
      tx.execute(sql`update audit_logs set details = '{"i":1000}'::jsonb where id = ${seeded[5]}`),
    );
    await page.getByRole('button', { name: 'Verify the chain' }).click();
    await result.getByText('The audit chain is broken').waitFor({ timeout: 30_000 });
    expect(await result.textContent()).toContain(`Record ${seeded[5]} no longer matches`);
    await checkPage(tab, 'audit-broken');
    await tab.context.close();
  });
});

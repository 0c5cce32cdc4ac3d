// Journey in a real Chromium against the real server: a partner admin creates an enrollment key for a site and a device
// group, takes the Linux install script from the console as it is shown, runs it with bash, and the device appears on
// the Tenants page (already open, not reloaded) in that site and group; then moves it to another site, out of its
// group; sites show their time zone and groups their site; the development-mode banner is shown.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import { choose, dialog, giveSession, whoami } from '../support/console-session.js';
import {
  createDeviceGroup,
  createOrg,
  createPartner,
  createSite,
  sessionFor,
  signedInPartnerMember,
  type SignedInMember,
} from '../support/fixtures.js';
import { checkPage, ensureConsoleBuilt, launch, newTab, type Tab } from './browser.js';

const run = promisify(execFile);
let t: TestApp;
let browser: Browser;
let partner: Awaited<ReturnType<typeof createPartner>>;
let admin: SignedInMember;
const PARTNER_ADMIN: string = SYSTEM_ROLES[0].id;

beforeAll(async () => {
  ensureConsoleBuilt();
  // Development mode, as a newcomer trying this on a laptop would run it: the console says so on every page.
  t = await startApp({ RATE_LIMIT_ENROLL: '1000/60', DEV_MODE: 'true' });
  browser = await launch();
  partner = await createPartner(t, 'Northwind MSP');
  admin = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN, email: 'ops@northwind.example' });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function asAdmin(path: string): Promise<Tab> {
  const tab = await newTab(browser);
  const s = await sessionFor(
    t,
    admin.user.id,
    { scope: 'partner', partnerId: partner.id, roleId: PARTNER_ADMIN },
    true,
  );
  await giveSession(tab.context, t, s);
  await tab.page.goto(`${t.baseUrl}${path}`);
  await whoami(tab.page, admin.user.email);
  return tab;
}

describe('journey: an install command run as a script makes a device appear in the right site and group', () => {
  it('key for a site and group → Linux script run by bash → device listed within seconds → moved in bulk', async () => {
    const org = await createOrg(t, partner.id, 'Contoso Dental');
    const office = await createSite(t, org.id, 'Main office');
    const warehouse = await createSite(t, org.id, 'Warehouse');
    const scanners = await createDeviceGroup(t, org.id, { name: 'Scanners', siteId: warehouse.id });

    // The Tenants page is open before the device exists: it must show it without a reload.
    const tenants = await asAdmin('/tenants');
    const devices = tenants.page.getByRole('region', { name: 'Devices' });
    await devices.getByText('No device yet').waitFor({ timeout: 60_000 });
    expect(await tenants.page.getByTestId('dev-mode-banner').textContent()).toContain('Development mode');
    await expect.poll(() => tenants.page.getByRole('region', { name: 'Sites' }).textContent()).toContain('UTC');
    expect(await tenants.page.getByRole('region', { name: 'Device groups' }).textContent()).toContain('Warehouse');
    await checkPage(tenants, 'tenants-no-device');

    const keys = await asAdmin('/onboarding/enrollment-keys');
    const { page } = keys;
    await page.getByText('No enrollment key for this organisation').waitFor();
    await page.getByRole('button', { name: 'New enrollment key' }).click();
    const d = await dialog(page, 'New enrollment key');
    await d.getByLabel(/^Name/).fill('Warehouse scanners');
    await choose(page, d, 'Site', 'Warehouse');
    await choose(page, d, 'Device group', 'Scanners');
    await d.getByRole('button', { name: 'Create key' }).click();
    const created = await dialog(page, 'Your new enrollment key');
    for (const tab of ['Windows (PowerShell)', 'macOS', 'curl', 'Linux']) {
      await created.getByRole('tab', { name: tab }).click();
      await created.getByRole('button', { name: `Copy the ${tab} command` }).waitFor();
    }
    await checkPage(keys, 'onboarding-install-commands');
    const script = (await page.getByTestId('install-linux').textContent())!;
    const key = (await page.getByTestId('enrollment-key').textContent())!.trim();
    expect(script).toContain(key);
    expect(script).toContain(t.baseUrl);

    const dir = mkdtempSync(join(tmpdir(), 'gh-journey-'));
    writeFileSync(join(dir, 'enrol-gatehouse.sh'), script);
    const out = await run('bash', [join(dir, 'enrol-gatehouse.sh')], {
      env: { PATH: process.env.PATH, GATEHOUSE_AGENT_DIR: join(dir, 'agent'), GATEHOUSE_AGENT_VERSION: '2.4.0' },
    });
    const hostname = (await run('hostname', [])).stdout.trim();
    expect(out.stdout).toContain(`Enrolled ${hostname} as device`);

    // Within seconds, on the page left open: site, group, last seen, agent version, OS.
    const row = devices.getByRole('row', { name: new RegExp(hostname) });
    await row.waitFor({ timeout: 15_000 });
    const cells = await row.getByRole('cell').allTextContents();
    expect(cells.slice(1, 6)).toEqual([hostname, 'Warehouse', 'Scanners', 'Just now', '2.4.0']);
    expect(cells[6]).toMatch(/^Linux · \S/);
    const enrolled = (await admin.api.get('/devices', { query: { orgId: org.id } })).body.data[0];
    expect(enrolled).toMatchObject({ siteId: warehouse.id, deviceGroupIds: [scanners.id], agentVersion: '2.4.0' });
    await checkPage(tenants, 'tenants-device-enrolled');

    // Filters: the other site shows none; the group shows it.
    await choose(tenants.page, devices, 'Site', 'Main office');
    await devices.getByText('No device matches these filters.').waitFor();
    await devices.getByRole('combobox', { name: 'Site' }).click({ force: true });
    await tenants.page.getByRole('option', { name: 'Main office' }).click();
    await choose(tenants.page, devices, 'Device group', 'Scanners');
    await row.waitFor();

    // Bulk move: to the main office, out of every group.
    await devices.getByRole('checkbox', { name: 'Select every device shown' }).check();
    await devices.getByRole('button', { name: 'Move 1 selected…' }).click();
    const move = await dialog(tenants.page, 'Move 1 device');
    await choose(tenants.page, move, 'To site', 'Main office');
    await choose(tenants.page, move, 'Device group', 'Out of every group');
    await checkPage(tenants, 'tenants-move-devices');
    await move.getByRole('button', { name: 'Move' }).click();
    await devices.getByText('No device matches these filters.').waitFor();
    await devices.getByRole('combobox', { name: 'Device group' }).click({ force: true });
    await tenants.page.getByRole('option', { name: 'Scanners' }).click();
    await expect
      .poll(async () => (await row.getByRole('cell').allTextContents()).slice(2, 4), { timeout: 15_000 })
      .toEqual(['Main office', '—']);
    const device = (await admin.api.get('/devices', { query: { orgId: org.id } })).body.data[0];
    expect(device).toMatchObject({ siteId: office.id, deviceGroupIds: [] });
    await keys.context.close();
    await tenants.context.close();
  });
});

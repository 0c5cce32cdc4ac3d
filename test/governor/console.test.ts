// The brake on mass actions in a real Chromium against the real server: a partner admin freezes destructive actions
// with a reason and a confirmation (a service account is refused at once), sets a budget, co-signs a technician's
// request, and lifts the freeze.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { createRole } from '../support/access.js';
import { createDevice, createOrg, createPartner, createSite, signedInPartnerMember } from '../support/fixtures.js';
import { serviceAccountWithKey } from '../support/service-accounts.js';
import { checkPage, ensureConsoleBuilt, launch, newTab, openSignedIn } from '../console/browser.js';
import { expectError, expectStatus } from '../onboarding/helpers.js';

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

describe('the partner admin brakes mass actions from the security policy page', () => {
  it('freezes with a reason and a confirmation, sets a budget, co-signs, and lifts the freeze', async () => {
    const partner = await createPartner(t, 'Brake MSP');
    const org = await createOrg(t, partner.id);
    const device = await createDevice(t, org, (await createSite(t, org.id)).id);
    const admin = await signedInPartnerMember(t, partner.id);
    const role = await createRole(t, {
      owner: { kind: 'partner', partnerId: partner.id },
      permissions: ['devices:read', 'devices:delete'],
    });
    const sa = await serviceAccountWithKey(admin.api, { roleId: role.id });
    const tech = await signedInPartnerMember(t, partner.id, { roleId: role.id, name: 'Tom Tech' });
    expectStatus(await tech.api.post('/governor/co-signs', { reason: 'Rollback of a bad patch' }), 201);

    const tab = await newTab(browser);
    await openSignedIn(tab, t.baseUrl, admin.session.refreshToken, '/security');
    await tab.page.getByRole('heading', { name: 'Brake on mass actions' }).waitFor({ timeout: 30_000 });
    await expect.poll(() => tab.page.getByTestId('freeze-state').textContent()).toContain('Not frozen');
    await tab.page.getByLabel('Reason').fill('Suspected stolen key');
    await tab.page.getByRole('button', { name: 'Freeze destructive actions' }).click();
    await tab.page.getByRole('button', { name: 'Yes, freeze' }).click();
    await expect
      .poll(() => tab.page.getByTestId('freeze-state').textContent(), { timeout: 10_000 })
      .toContain('Suspected stolen key');
    expectError(await sa.api.delete(`/devices/${device.id}`), 403, 'frozen');
    await checkPage(tab, 'governor-frozen');

    await tab.page.getByLabel('Window (minutes)').fill('15');
    await tab.page.getByLabel('Devices').fill('25');
    await tab.page.getByRole('button', { name: 'Save budget' }).click();
    await expect
      .poll(async () => (await admin.api.get('/governor')).body.budget, { timeout: 10_000 })
      .toEqual({ windowMinutes: 15, maxDevices: 25 });

    await tab.page.getByTestId('co-signs').getByText('Tom Tech').waitFor();
    await tab.page.getByRole('button', { name: 'Co-sign' }).click();
    await tab.page.getByText('None waiting.').waitFor({ timeout: 10_000 });

    await tab.page.getByRole('button', { name: 'Lift the freeze' }).click();
    await expect
      .poll(() => tab.page.getByTestId('freeze-state').textContent(), { timeout: 10_000 })
      .toContain('Not frozen');
    expectStatus(await sa.api.delete(`/devices/${device.id}`), 200);
  });
});

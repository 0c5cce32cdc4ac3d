// Access governance in the console, in a real Chromium against the real server: a partner member eligible
// for an organisation requests just-in-time access in the console, the organisation's admin (jitApproval
// customer_admin, set through the API) approves it in the console, and the member's API call to the organisation
// then answers 200; the customer's view lists the grant; the explainer shows a denial and the step that denies.
// Every page visited passes axe.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { choose, dialog, giveSession, whoami } from '../support/console-session.js';
import {
  createOrg,
  createPartner,
  sessionFor,
  signedInOrgMember,
  signedInPartnerMember,
  type SignedInMember,
} from '../support/fixtures.js';
import { expectStatus, ORG_ADMIN, PARTNER_ADMIN, PARTNER_TECH } from '../onboarding/helpers.js';
import { checkPage, ensureConsoleBuilt, launch, newTab, type Tab } from './browser.js';

let t: TestApp;
let browser: Browser;
let partner: Awaited<ReturnType<typeof createPartner>>;
let org: Awaited<ReturnType<typeof createOrg>>;
let other: Awaited<ReturnType<typeof createOrg>>;
let partnerAdmin: SignedInMember;
let tech: SignedInMember;
let orgAdmin: SignedInMember;

beforeAll(async () => {
  ensureConsoleBuilt();
  t = await startApp({ RATE_LIMIT_LOGIN: '1000/900' });
  browser = await launch();
  partner = await createPartner(t, 'Northwind MSP');
  org = await createOrg(t, partner.id, 'Contoso Dental');
  other = await createOrg(t, partner.id, 'Fabrikam Clinic');
  partnerAdmin = await signedInPartnerMember(t, partner.id, {
    roleId: PARTNER_ADMIN,
    email: 'ops@northwind.example',
    name: 'Olivia Ops',
  });
  tech = await signedInPartnerMember(t, partner.id, {
    roleId: PARTNER_TECH,
    orgAccess: 'eligible',
    orgIds: [org.id],
    email: 'tech@northwind.example',
    name: 'Tariq Tech',
  });
  orgAdmin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN, email: 'it@contoso.example', name: 'Cora Contoso' });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function open(m: SignedInMember, context: Parameters<typeof sessionFor>[2], path: string): Promise<Tab> {
  const tab = await newTab(browser);
  await giveSession(tab.context, t, await sessionFor(t, m.user.id, context, true));
  await tab.page.goto(`${t.baseUrl}${path}`);
  await whoami(tab.page, m.user.email);
  return tab;
}

describe('journey: just-in-time access requested in the console and approved by the customer there', () => {
  it('the eligible member asks, the organisation admin approves, and the member then reaches the organisation', async () => {
    expectStatus(
      await orgAdmin.api.patch(`/orgs/organizations/${org.id}`, { settings: { jitApproval: 'customer_admin' } }),
      200,
    );
    expectStatus(await tech.api.get(`/orgs/organizations/${org.id}`), 404);

    const member = await open(tech, { scope: 'partner', partnerId: partner.id, roleId: PARTNER_TECH }, '/access');
    const mp = member.page;
    await mp.getByText('You have not requested access yet.').waitFor();
    await checkPage(member, 'access-requests-member-empty');
    await mp.getByRole('button', { name: 'Request access' }).click();
    const d = await dialog(mp, 'Request access');
    await choose(mp, d, /^Organisation/, 'Another organisation, by its ID');
    await d.getByLabel(/^Organisation ID/).fill(org.id);
    await choose(mp, d, /^For how long/, '2 h');
    await d.getByLabel(/^Reason/).fill('Restore the imaging server');
    await d.getByLabel(/^Ticket/).fill('INC-4711');
    await checkPage(member, 'access-request-new');
    await d.getByRole('button', { name: 'Send request' }).click();
    const mine = mp.getByTestId('own-requests').getByRole('row', { name: /Restore the imaging server/ });
    await mine.waitFor();
    expect(await mine.textContent()).toContain('Waiting');
    expect(await mine.textContent()).toContain('An admin of the organisation approves');
    await checkPage(member, 'access-requests-member-pending');
    expectStatus(await tech.api.get(`/orgs/organizations/${org.id}`), 404);

    const customer = await open(
      orgAdmin,
      { scope: 'organization', partnerId: partner.id, orgId: org.id, roleId: ORG_ADMIN },
      '/access/requests',
    );
    const cp = customer.page;
    const row = cp.getByTestId('approvable-requests').getByRole('row', { name: /Restore the imaging server/ });
    await row.waitFor();
    expect(await row.textContent()).toContain('INC-4711');
    expect(await row.textContent()).toContain('2 h');
    await checkPage(customer, 'access-requests-approver');
    await cp.getByRole('button', { name: 'Approve Restore the imaging server' }).click();
    await cp.getByText('No request waits for your approval.').waitFor();
    await cp
      .getByTestId('access-grants')
      .getByRole('row', { name: /Restore the imaging server/ })
      .waitFor();
    await checkPage(customer, 'access-requests-approved');

    expectStatus(await tech.api.get(`/orgs/organizations/${org.id}`), 200);

    // The customer's view: the grant in force, the policy as the API answers it.
    await cp.getByRole('tab', { name: 'Partner access' }).click();
    await cp
      .getByTestId('org-grants')
      .getByRole('row', { name: /Restore the imaging server/ })
      .waitFor();
    await expect.poll(() => cp.getByRole('radio', { name: 'Allowed' }).isChecked(), { timeout: 30_000 }).toBe(true);
    await expect
      .poll(() => cp.getByRole('radio', { name: 'An admin of the organisation approves' }).isChecked(), {
        timeout: 30_000,
      })
      .toBe(true);
    await cp
      .getByTestId('partner-access')
      .getByRole('row', { name: /ops@northwind\.example/ })
      .waitFor();
    await checkPage(customer, 'access-customer-view');

    // The member sees the approval in the console too.
    await mp.reload();
    await expect
      .poll(
        () =>
          mp
            .getByTestId('own-requests')
            .getByRole('row', { name: /Restore the imaging server/ })
            .textContent(),
        { timeout: 30_000 },
      )
      .toContain('Approved');
    await member.context.close();
    await customer.context.close();
  });
});

describe('journey: why can X not do Y on Z', () => {
  it('a Partner Admin asks about a member eligible for another organisation only: denied at organisation access', async () => {
    const tab = await open(
      partnerAdmin,
      { scope: 'partner', partnerId: partner.id, roleId: PARTNER_ADMIN },
      '/access/explain',
    );
    const { page } = tab;
    await page.getByRole('button', { name: 'Explain' }).waitFor();
    await checkPage(tab, 'access-explain-empty');
    await choose(page, page, /^Person/, /tech@northwind\.example/);
    await choose(page, page, /^Permission/, /\(devices:read\)/);
    await choose(page, page, /^Organisation/, 'Fabrikam Clinic');
    await page.getByRole('button', { name: 'Explain' }).click();
    const verdict = page.getByTestId('verdict');
    await verdict.waitFor();
    expect(await verdict.textContent()).toBe('Denied');
    expect(await page.getByTestId('denied-by').textContent()).toBe('Refused at: Organisation access');
    const step = page.getByTestId('reason-steps').getByRole('row', { name: /Organisation access/ });
    expect(await step.textContent()).toContain('Denies');
    expect(await step.textContent()).toContain('Eligible for just-in-time access to other organisations only.');

    // The same question through the API answers the same.
    const api = expectStatus(
      await partnerAdmin.api.get('/access/explain', {
        query: { userId: tech.user.id, permission: 'devices:read', resourceType: 'organization', resourceId: other.id },
      }),
      200,
    );
    expect(api.body).toMatchObject({ allowed: false, deniedBy: 'organization_access' });
    await checkPage(tab, 'access-explain-denied');
    await tab.context.close();
  });
});

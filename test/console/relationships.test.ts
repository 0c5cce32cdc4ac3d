// Delegated-access relationships in a real Chromium against the real server and the real SMTP catcher: the partner
// admin turns relationships on, drafts one (the auto-extension refusal shown beside the switch) and sends it; the
// customer's admin opens the mailed link signed out, signs in, lands back on the approval page, reads what is asked
// and approves with step-up; a partner technician then reaches the organisation within the relationship's reach, and
// the explain page names the relationship; in the console the partner puts that technician into an access group
// attached to the relationship, and another technician outside the group is refused from then on; the customer
// terminates it and the technician's next request is refused.
// Both sides read the history; the expiring list exports its CSV; a declined request is asked about first. Every page
// visited passes axe.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { choose, dialog, giveSession, whoami } from '../support/console-session.js';
import {
  addOrgMember,
  createDevice,
  createOrg,
  createPartner,
  createSite,
  createUser,
  sessionFor,
  signedInOrgMember,
  signedInPartnerMember,
  type SignedInMember,
} from '../support/fixtures.js';
import { issueScimToken, ScimClient } from '../support/scim.js';
import { startMailCatcher, type MailCatcher } from '../support/smtp.js';
import { expectError, expectStatus, ORG_ADMIN, PARTNER_ADMIN, PARTNER_TECH } from '../onboarding/helpers.js';
import { checkPage, ensureConsoleBuilt, launch, newTab, type Tab } from './browser.js';

let t: TestApp;
let mail: MailCatcher;
let browser: Browser;
const PASSWORD = 'Correct horse battery staple 42';
const NAME = 'Tier 1 – Contoso';

beforeAll(async () => {
  ensureConsoleBuilt();
  mail = await startMailCatcher();
  t = await startApp({ SMTP_URL: mail.url, MAIL_FROM: 'gatehouse@example.test', RATE_LIMIT_LOGIN: '1000/900' });
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await mail?.close();
});

async function openAs(m: SignedInMember, partnerId: string, path: string): Promise<Tab> {
  const tab = await newTab(browser);
  await giveSession(
    tab.context,
    t,
    await sessionFor(t, m.user.id, { scope: 'partner', partnerId, roleId: PARTNER_ADMIN }, true),
  );
  await tab.page.goto(`${t.baseUrl}${path}`);
  await whoami(tab.page, m.user.email);
  return tab;
}

describe('journey: a relationship drafted and sent by the partner, approved from the mailed link, then terminated', () => {
  it('the technician reaches the organisation only while the approved relationship is in force', async () => {
    const partner = await createPartner(t, 'Northwind MSP');
    const org = await createOrg(t, partner.id, 'Contoso Dental');
    const harbour = await createSite(t, org.id, 'Harbour Street');
    const annex = await createSite(t, org.id, 'Annex');
    const inside = await createDevice(t, org, harbour.id, { hostname: 'reception-pc' });
    const outside = await createDevice(t, org, annex.id, { hostname: 'annex-pc' });
    const admin = await signedInPartnerMember(t, partner.id, {
      roleId: PARTNER_ADMIN,
      email: 'ops@northwind.example',
      name: 'Olivia Ops',
    });
    const tech = await signedInPartnerMember(t, partner.id, {
      roleId: PARTNER_TECH,
      orgAccess: 'all',
      email: 'tech@northwind.example',
      name: 'Tariq Tech',
    });
    const outsider = await signedInPartnerMember(t, partner.id, {
      roleId: PARTNER_TECH,
      orgAccess: 'all',
      email: 'nightshift@northwind.example',
      name: 'Nadia Nightshift',
    });
    const customer = await createUser(t, { email: 'it@contoso.example', name: 'Cora Contoso', password: PASSWORD });
    await addOrgMember(t, { orgId: org.id, userId: customer.id, roleId: ORG_ADMIN });
    // A partner role for reviewing access (users:read): in the relationship, it lets the partner's admins explain
    // access inside the organisation, where they too hold only what the relationship's roles allow.
    expectStatus(
      await admin.api.post('/roles', {
        name: 'Access reviewer',
        permissions: [{ resource: 'users', action: 'read' }],
      }),
      201,
    );
    // Today's behaviour: standing access reaches every organisation.
    expectStatus(await tech.api.get(`/devices/${inside.id}`), 200);

    // The partner admin turns relationships on: the technician no longer reaches the organisation.
    const p = await openAs(admin, partner.id, '/relationships');
    const pp = p.page;
    await pp.getByText('No relationship yet.').waitFor();
    await checkPage(p, 'relationships-empty');
    await pp.getByRole('switch', { name: /only through an approved relationship/ }).click({ force: true });
    await pp.getByText(/^On: an organisation without an active relationship/).waitFor();
    expectError(await tech.api.get(`/devices/${inside.id}`), 404, 'not_found');

    // The draft: an admin role refuses auto-extension beside the switch; the technician role alone allows it.
    await pp.getByRole('link', { name: 'New relationship' }).click();
    await pp.getByRole('heading', { name: 'New relationship' }).waitFor();
    await pp.getByLabel(/^Name/).fill(NAME);
    await choose(pp, pp, /^Organisation/, 'Contoso Dental');
    await choose(pp, pp, /^Roles/, 'Partner Admin');
    await pp.getByText(/Not allowed: a chosen role holds \*:\*/).waitFor();
    expect(await pp.getByRole('switch', { name: /Extend by 180 days/ }).isDisabled()).toBe(true);
    await choose(pp, pp, /^Roles/, 'Partner Technician');
    await choose(pp, pp, /^Roles/, 'Access reviewer');
    await choose(pp, pp, /^Roles/, 'Partner Admin');
    await pp.keyboard.press('Escape');
    await pp.getByText(/Not allowed: a chosen role/).waitFor({ state: 'detached' });
    await pp.getByRole('radio', { name: 'Chosen sites and device groups' }).check();
    await choose(pp, pp, /^Sites/, 'Harbour Street');
    await pp.keyboard.press('Escape');
    await choose(pp, pp, /^For how long/, '90 days');
    await checkPage(p, 'relationship-new');
    await pp.getByRole('button', { name: 'Save draft' }).click();
    await pp.getByRole('heading', { name: NAME }).waitFor();
    const id = /\/relationships\/([0-9a-f-]{36})$/.exec(pp.url())![1]!;
    expect(await pp.getByTestId('relationship-status').textContent()).toBe('Draft');
    expect(await pp.getByTestId('relationship-reach').textContent()).toBe('Sites: Harbour Street');
    await checkPage(p, 'relationship-draft');

    // Sent: the approval link is shown, with a copy button, and mailed to the organisation's admins.
    await pp.getByRole('button', { name: 'Send for approval' }).click();
    const link = `${t.baseUrl}/relationships/${id}/approval`;
    await pp.getByTestId('approval-link').getByText(link).waitFor();
    await pp.getByRole('button', { name: 'Copy link' }).waitFor();
    expect(await pp.getByTestId('relationship-status').textContent()).toBe('Waiting for approval');
    await checkPage(p, 'relationship-sent');
    expectError(await tech.api.get(`/devices/${inside.id}`), 404, 'not_found');

    // The customer opens the mailed link signed out: sign-in brings them back to it.
    const m = await mail.waitFor(customer.email, (x) => x.text.includes(link), 30_000);
    expect(m.text).toContain('ops@northwind.example of Northwind MSP asks Contoso Dental to approve');
    const c = await newTab(browser);
    const cp = c.page;
    await cp.goto(link);
    await cp.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(new URL(cp.url()).searchParams.get('next')).toBe(`/relationships/${id}/approval`);
    await cp.getByLabel('E-mail').fill(customer.email);
    await cp.getByLabel(/^Password/).fill(PASSWORD);
    await cp.getByRole('button', { name: 'Sign in', exact: true }).click();
    await cp.getByRole('heading', { name: 'Northwind MSP asks for delegated access to Contoso Dental' }).waitFor();
    expect(new URL(cp.url()).pathname).toBe(`/relationships/${id}/approval`);
    const terms = cp.getByTestId('relationship-terms');
    expect(await terms.getByTestId('relationship-reach').textContent()).toBe('Sites: Harbour Street');
    const roles = terms.getByTestId('relationship-role');
    expect(await roles.getByRole('heading').allTextContents()).toEqual(['Partner Technician', 'Access reviewer']);
    expect(await roles.nth(1).getByRole('listitem').count()).toBe(1);
    expect(await terms.textContent()).toContain('90 days, from the approval');
    await expect
      .poll(() => cp.getByTestId('asked-by').textContent(), { timeout: 30_000 })
      .toContain('Asked by Olivia Ops (ops@northwind.example) of Northwind MSP');
    await checkPage(c, 'relationship-approval');

    // Approve, after the sign-in's proof has aged: the step-up prompt asks for the password first.
    t.clock.advance(11 * 60_000);
    await cp.getByRole('button', { name: 'Approve' }).click();
    const proof = await dialog(cp, 'Confirm it is you');
    await proof.getByLabel('Your password').fill(PASSWORD);
    await checkPage(c, 'relationship-approval-step-up');
    await proof.getByRole('button', { name: 'Confirm with the password' }).click();
    await expect.poll(() => cp.getByTestId('relationship-status').textContent(), { timeout: 30_000 }).toBe('Active');
    await cp.getByText('There is nothing to decide: the relationship is active.').waitFor();
    await cp
      .getByTestId('relationship-history')
      .getByText(/Approved by Cora Contoso \(it@contoso\.example\)/)
      .waitFor();
    await checkPage(c, 'relationship-approved');

    // The technician reaches the organisation within the relationship's reach (a fresh session: the clock moved).
    const techNow = t
      .client()
      .withToken(
        (await sessionFor(t, tech.user.id, { scope: 'partner', partnerId: partner.id, roleId: PARTNER_TECH }, true))
          .accessToken,
      );
    expectStatus(await techNow.get(`/devices/${inside.id}`), 200);
    expectError(await techNow.get(`/devices/${outside.id}`), 404, 'not_found');

    // The partner's explain page names the relationship that lets the technician in, with a link to it.
    await pp.goto(`${t.baseUrl}/access/explain`);
    await choose(pp, pp, /^Person/, /tech@northwind\.example/);
    await choose(pp, pp, /^Permission/, /\(devices:read\)/);
    await choose(pp, pp, /^Record type/, /^Device$/);
    await pp.getByLabel(/^Record ID/).fill(inside.id);
    await pp.getByRole('button', { name: 'Explain' }).click();
    expect(await pp.getByTestId('verdict').textContent()).toBe('Allowed');
    const named = pp.getByTestId('reason-steps').getByTestId('reason-relationships');
    await named.getByRole('link', { name: NAME }).waitFor();
    expect(await named.getByRole('link', { name: NAME }).getAttribute('href')).toBe(`/relationships/${id}`);
    await checkPage(p, 'relationship-explain');

    // Access groups, in the console: the partner puts the technician into a group and attaches it to the relationship;
    // from then on only the group's members use it. Before that, every technician let in uses it.
    const outsiderNow = t
      .client()
      .withToken(
        (await sessionFor(t, outsider.user.id, { scope: 'partner', partnerId: partner.id, roleId: PARTNER_TECH }, true))
          .accessToken,
      );
    expectStatus(await outsiderNow.get(`/devices/${inside.id}`), 200);
    await pp.goto(`${t.baseUrl}/relationships`);
    await pp.getByRole('link', { name: 'Access groups' }).click();
    await pp.getByRole('heading', { name: 'Access groups' }).waitFor();
    await pp.getByText('No access group yet.').waitFor();
    // A blank name: the refusal beside the field.
    await pp.getByLabel(/^Name/).fill('   ');
    await pp.getByRole('button', { name: 'Create the group' }).click();
    const nameField = pp.getByRole('textbox', { name: /^Name/ });
    await expect.poll(() => nameField.getAttribute('aria-invalid'), { timeout: 30_000 }).toBe('true');
    expect(await pp.locator('.mantine-TextInput-error').textContent()).toBe('Required.');
    await checkPage(p, 'access-groups-field-error');
    await pp.getByLabel(/^Name/).fill('Contoso technicians');
    await pp.getByRole('button', { name: 'Create the group' }).click();
    await pp.getByRole('heading', { name: 'Contoso technicians' }).waitFor();
    await pp.getByText('No member yet.').waitFor();
    // The person picker offers the partner's staff by name.
    await choose(pp, pp, /^Person/, 'Tariq Tech (tech@northwind.example)');
    await pp.getByRole('button', { name: 'Add to the group' }).click();
    const members = pp.getByTestId('access-group-members');
    await members.getByRole('row', { name: /Tariq Tech/ }).waitFor();
    expect(await members.getByRole('row', { name: /Nadia Nightshift/ }).count()).toBe(0);
    await pp.getByLabel(/^Name/).fill('Contoso technicians – Tier 1');
    await pp.getByRole('button', { name: 'Save', exact: true }).click();
    await pp.getByRole('heading', { name: 'Contoso technicians – Tier 1' }).waitFor();
    await checkPage(p, 'access-group');
    const groupUrl = pp.url();

    // A spare group, deleted after a confirmation that Cancel leaves alone.
    await pp.getByRole('link', { name: 'Every access group' }).click();
    await pp.getByLabel(/^Name/).fill('Spare');
    await pp.getByRole('button', { name: 'Create the group' }).click();
    await pp.getByRole('heading', { name: 'Spare' }).waitFor();
    await pp.getByRole('button', { name: 'Delete the group' }).click();
    await (await dialog(pp, 'Delete “Spare”?')).getByRole('button', { name: 'Cancel' }).click();
    await pp.getByRole('dialog').waitFor({ state: 'detached' });
    await pp.getByRole('button', { name: 'Delete the group' }).click();
    const del = await dialog(pp, 'Delete “Spare”?');
    await checkPage(p, 'access-group-delete');
    await del.getByRole('button', { name: 'Delete' }).click();
    const groups = pp.getByTestId('access-groups-table');
    await groups.getByRole('link', { name: 'Contoso technicians – Tier 1', exact: true }).waitFor();
    await expect
      .poll(() => groups.getByRole('link', { name: 'Spare', exact: true }).count(), { timeout: 30_000 })
      .toBe(0);
    await checkPage(p, 'access-groups');

    // On the relationship's page: the note, then the group attached.
    await pp.goto(`${t.baseUrl}/relationships/${id}`);
    const attached = pp.getByTestId('relationship-groups');
    await attached
      .getByText(/Once a relationship has a group, only the members of its groups reach Contoso Dental/)
      .waitFor();
    await attached.getByText('No group: every member of your staff you let in uses it.').waitFor();
    await choose(pp, attached, /^Access group/, 'Contoso technicians – Tier 1');
    await attached.getByRole('button', { name: 'Attach' }).click();
    await attached.getByRole('link', { name: 'Contoso technicians – Tier 1' }).waitFor();
    await checkPage(p, 'relationship-groups');

    // The technician in the group reaches the organisation; the one outside it is refused on the next request.
    expectStatus(await techNow.get(`/devices/${inside.id}`), 200);
    expectError(await techNow.get(`/devices/${outside.id}`), 404, 'not_found');
    expectError(await outsiderNow.get(`/devices/${inside.id}`), 404, 'not_found');
    // The group's page names the relationship it serves.
    await pp.goto(groupUrl);
    await pp.getByTestId('access-group-relationships').getByRole('link', { name: NAME }).waitFor();

    // The partner narrows the approved relationship: the reviewing role goes at once; nothing wider is offered.
    await pp.goto(`${t.baseUrl}/relationships/${id}`);
    await pp.getByRole('button', { name: 'Narrow' }).click();
    const narrow = await dialog(pp, `Narrow “${NAME}”`);
    await choose(pp, narrow, /^Roles/, 'Access reviewer');
    await pp.keyboard.press('Escape');
    await checkPage(p, 'relationship-narrow');
    await narrow.getByRole('button', { name: 'Narrow now' }).click();
    await narrow.waitFor({ state: 'detached' });
    await expect
      .poll(() => pp.getByTestId('relationship-role').getByRole('heading').allTextContents(), { timeout: 30_000 })
      .toEqual(['Partner Technician']);
    expectStatus(await techNow.get(`/devices/${inside.id}`), 200);

    // The customer's list of its relationships: terminate, with a dialog that says what goes.
    await cp.getByRole('link', { name: 'Relationships' }).click();
    const row = cp.getByTestId('relationships-table').getByRole('row', { name: new RegExp(NAME) });
    await row.waitFor();
    expect(await row.textContent()).toContain('Northwind MSP');
    await checkPage(c, 'relationships-customer');
    await row.getByRole('button', { name: `Terminate ${NAME}` }).click();
    const end = await dialog(cp, `Terminate “${NAME}”?`);
    expect(await end.textContent()).toContain(
      'Northwind MSP’s staff lose what it gives them in Contoso Dental on their next request: the roles Partner Technician, over the site Harbour Street.',
    );
    await checkPage(c, 'relationship-terminate');
    await end.getByRole('button', { name: 'Cancel' }).click();
    await end.waitFor({ state: 'detached' });
    expectStatus(await techNow.get(`/devices/${inside.id}`), 200);
    await row.getByRole('button', { name: `Terminate ${NAME}` }).click();
    await (await dialog(cp, `Terminate “${NAME}”?`)).getByRole('button', { name: 'Terminate' }).click();
    await expect
      .poll(() => row.getByTestId('relationship-status').textContent(), { timeout: 30_000 })
      .toBe('Terminated');

    // The technician's next request is refused, group or not.
    expectError(await techNow.get(`/devices/${inside.id}`), 404, 'not_found');
    expectError(await outsiderNow.get(`/devices/${inside.id}`), 404, 'not_found');

    // The partner reads the whole history.
    await pp.goto(`${t.baseUrl}/relationships/${id}`);
    const history = pp.getByTestId('relationship-history');
    await history.getByText(/Terminated by Cora Contoso \(it@contoso\.example\) \(the organisation\)/).waitFor();
    const events = await history.getByRole('listitem').allTextContents();
    expect(events.map((e) => e.replace(/^.*?: /, '').replace(/ until .*$/, ''))).toEqual([
      'Drafted by Olivia Ops (ops@northwind.example)',
      'Sent for approval by Olivia Ops (ops@northwind.example)',
      'Approved by Cora Contoso (it@contoso.example)',
      'Narrowed by Olivia Ops (ops@northwind.example): removed roles Access reviewer',
      'Terminated by Cora Contoso (it@contoso.example) (the organisation)',
    ]);
    expect(await pp.getByTestId('relationship-status').textContent()).toBe('Terminated');
    await checkPage(p, 'relationship-terminated');
    await p.context.close();
    await c.context.close();
  });
});

describe('the expiring list', () => {
  it('lists a relationship ending within 30 days, filters by organisation, and exports the list as CSV', async () => {
    const partner = await createPartner(t, 'Tailspin MSP');
    const org = await createOrg(t, partner.id, 'Wingtip Clinic');
    const other = await createOrg(t, partner.id, 'Fourth Coffee');
    const admin = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN });
    for (const [o, name, duration] of [
      [org, 'Week of Wingtip', 'P7D'],
      [other, 'Year of Coffee', 'P1Y'],
      [other, 'Fortnight of Coffee', 'P14D'],
    ] as const) {
      const d = expectStatus(
        await admin.api.post('/relationships', { orgId: o.id, name, roleIds: [PARTNER_TECH], duration }),
        201,
      );
      expectStatus(await admin.api.post(`/relationships/${d.body.id}/request`), 200);
      const approver = await signedInOrgMember(t, o, { roleId: ORG_ADMIN });
      expectStatus(await approver.api.post(`/relationships/${d.body.id}/approve`), 200);
    }
    const tab = await openAs(admin, partner.id, '/relationships/expiring');
    const { page } = tab;
    const table = page.getByTestId('relationships-table');
    await table.getByRole('link', { name: 'Week of Wingtip' }).waitFor();
    await table.getByRole('link', { name: 'Fortnight of Coffee' }).waitFor();
    expect(await table.getByRole('link', { name: 'Year of Coffee' }).count()).toBe(0);
    await checkPage(tab, 'relationships-expiring');

    await choose(page, page, /^Organisation/, 'Fourth Coffee');
    await table.getByRole('link', { name: 'Week of Wingtip' }).waitFor({ state: 'detached' });
    await table.getByRole('link', { name: 'Fortnight of Coffee' }).waitFor();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('relationships.csv');
    const csv = await new Promise<string>((resolve, reject) => {
      void download.createReadStream().then((s) => {
        let text = '';
        s.on('data', (b: Buffer) => (text += b.toString('utf8')));
        s.on('end', () => resolve(text));
        s.on('error', reject);
      }, reject);
    });
    const lines = csv.trim().split(/\r\n/);
    expect(lines[0]).toMatch(/^id,orgId,name,status,/);
    expect(lines.slice(1).map((l) => l.split(',')[2])).toEqual(['Fortnight of Coffee']);
    expect(lines[1]).toContain(',expiring,');
    await tab.context.close();
  });
});

describe('the customer declines', () => {
  it('Decline asks first, says what is refused, and the partner sees the decision in the history', async () => {
    const partner = await createPartner(t, 'Fabrikam IT');
    const org = await createOrg(t, partner.id, 'Litware Law');
    const admin = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN, name: 'Pat Partner' });
    const d = expectStatus(
      await admin.api.post('/relationships', {
        orgId: org.id,
        name: 'Night shift',
        roleIds: [PARTNER_TECH],
        duration: 'P6M',
        autoExtend: true,
      }),
      201,
    );
    expectStatus(await admin.api.post(`/relationships/${d.body.id}/request`), 200);
    const orgAdmin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN, name: 'Lee Litware' });

    const tab = await newTab(browser);
    await giveSession(
      tab.context,
      t,
      await sessionFor(
        t,
        orgAdmin.user.id,
        { scope: 'organization', partnerId: partner.id, orgId: org.id, roleId: ORG_ADMIN },
        true,
      ),
    );
    await tab.page.goto(`${t.baseUrl}/relationships/${d.body.id}/approval`);
    const { page } = tab;
    await page.getByRole('heading', { name: 'Fabrikam IT asks for delegated access to Litware Law' }).waitFor();
    expect(await page.getByTestId('relationship-reach').textContent()).toBe('The whole organisation');
    await page.getByText('Yes: by 180 days each time it reaches its end, until either side ends it').waitFor();
    await page.getByRole('button', { name: 'Decline' }).click();
    const no = await dialog(page, 'Decline “Night shift”?');
    expect(await no.textContent()).toContain('Fabrikam IT’s staff get no access to Litware Law through it.');
    await checkPage(tab, 'relationship-decline');
    await no.getByRole('button', { name: 'Decline' }).click();
    await expect
      .poll(() => page.getByTestId('relationship-status').textContent(), { timeout: 30_000 })
      .toBe('Declined');
    await tab.context.close();

    const h = expectStatus(await admin.api.get(`/relationships/${d.body.id}/history`), 200);
    expect(h.body.data.at(-1)).toMatchObject({ action: 'relationship.decline', actorName: 'Lee Litware' });
    // Decided: nothing is pending any more.
    expectError(await orgAdmin.api.post(`/relationships/${d.body.id}/approve`), 409, 'relationship_state_invalid');
  });
});

describe('an access group that follows a SCIM group', () => {
  it("the partner maps a group to its IdP's group in the console, changes it back to none, and a reader sees no actions", async () => {
    const partner = await createPartner(t, 'Proseware MSP');
    const admin = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN });
    const scim = new ScimClient(t.baseUrl, (await issueScimToken(admin.api, { defaultRoleId: PARTNER_TECH })).token);
    const idpGroup = await scim.post('/Groups', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
      displayName: 'Helpdesk (IdP)',
    });
    expect(idpGroup.status, idpGroup.text).toBe(201);
    const tab = await openAs(admin, partner.id, '/relationships/groups');
    const { page } = tab;
    await page.getByRole('heading', { name: 'Access groups' }).waitFor();
    await page.getByLabel(/^Name/).fill('Helpdesk');
    await choose(page, page, /^Members of a SCIM group too/, 'Helpdesk (IdP)');
    await page.getByRole('button', { name: 'Create the group' }).click();
    await page.getByRole('heading', { name: 'Helpdesk', exact: true }).waitFor();
    await page.getByText('Also every active member of the SCIM group “Helpdesk (IdP)”.').waitFor();
    const id = /\/relationships\/groups\/([0-9a-f-]{36})$/.exec(page.url())![1]!;
    expect(expectStatus(await admin.api.get(`/access-groups/${id}`), 200).body).toMatchObject({
      scimGroupId: idpGroup.body.id,
      scimGroupName: 'Helpdesk (IdP)',
    });
    await checkPage(tab, 'access-group-scim');
    await choose(page, page, /^Members of a SCIM group too/, 'None');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText(/Also every active member of the SCIM group/).waitFor({ state: 'detached' });
    expect(expectStatus(await admin.api.get(`/access-groups/${id}`), 200).body.scimGroupId).toBeNull();
    await tab.context.close();

    // A partner member who may read users but not change them sees the groups, without the actions.
    expectStatus(
      await admin.api.post('/roles', { name: 'Group reader', permissions: [{ resource: 'users', action: 'read' }] }),
      201,
    );
    const roles = expectStatus(await admin.api.get('/roles'), 200).body.data as { id: string; name: string }[];
    const readerRole = roles.find((r) => r.name === 'Group reader')!.id;
    const reader = await signedInPartnerMember(t, partner.id, { roleId: readerRole, orgAccess: 'all' });
    const r = await newTab(browser);
    await giveSession(
      r.context,
      t,
      await sessionFor(t, reader.user.id, { scope: 'partner', partnerId: partner.id, roleId: readerRole }, true),
    );
    await r.page.goto(`${t.baseUrl}/relationships/groups/${id}`);
    await r.page.getByRole('heading', { name: 'Helpdesk', exact: true }).waitFor();
    await r.page.getByText('No member yet.').waitFor();
    expect(await r.page.getByRole('button', { name: 'Delete the group' }).count()).toBe(0);
    expect(await r.page.getByRole('button', { name: 'Add to the group' }).count()).toBe(0);
    await r.page.goto(`${t.baseUrl}/relationships/groups`);
    await r.page.getByTestId('access-groups-table').getByRole('link', { name: 'Helpdesk', exact: true }).waitFor();
    expect(await r.page.getByRole('button', { name: 'Create the group' }).count()).toBe(0);
    await checkPage(r, 'access-groups-reader');
    await r.context.close();
  });
});

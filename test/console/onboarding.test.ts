// Onboarding in a real Chromium against the real server: an enrollment key created (behind the step-up prompt),
// shown once and used by an agent; the contacts import with a held-back match; custom fields and their import;
// scripts; partner-wide configuration; the permission ceiling and the API's refusals in words.
import { eq } from 'drizzle-orm';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contacts } from '../../src/db/schema/index.js';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import { choose, dialog, giveSession, whoami } from '../support/console-session.js';
import {
  createContact,
  createDevice,
  createOrg,
  createPartner,
  createSite,
  sessionFor,
  signedInOrgMember,
  signedInPartnerMember,
  type SignedInMember,
} from '../support/fixtures.js';
import { checkPage, ensureConsoleBuilt, launch, newTab, type Tab } from './browser.js';

let t: TestApp;
let browser: Browser;
const PASSWORD = 'Correct horse battery staple 42';
let partner: Awaited<ReturnType<typeof createPartner>>;
let org: Awaited<ReturnType<typeof createOrg>>;
let site: Awaited<ReturnType<typeof createSite>>;
let admin: SignedInMember;
const PARTNER_ADMIN: string = SYSTEM_ROLES[0].id;
const ORG_VIEWER: string = SYSTEM_ROLES[5].id;

beforeAll(async () => {
  ensureConsoleBuilt();
  t = await startApp({ RATE_LIMIT_LOGIN: '1000/900' });
  browser = await launch();
  partner = await createPartner(t, 'Northwind MSP');
  org = await createOrg(t, partner.id, 'Contoso Dental');
  site = await createSite(t, org.id, 'Main office');
  admin = await signedInPartnerMember(t, partner.id, {
    roleId: PARTNER_ADMIN,
    password: PASSWORD,
    email: 'ops@northwind.example',
  });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** A tab signed in as the member, opened on a console path. */
async function open(
  m: SignedInMember,
  path: string,
  context: { scope: 'partner' | 'organization'; partnerId: string; orgId?: string; roleId: string },
): Promise<Tab> {
  const tab = await newTab(browser);
  const s = await sessionFor(t, m.user.id, context, true);
  await giveSession(tab.context, t, s);
  await tab.page.goto(`${t.baseUrl}${path}`);
  await whoami(tab.page, m.user.email);
  return tab;
}
const asAdmin = (path: string) => open(admin, path, { scope: 'partner', partnerId: partner.id, roleId: PARTNER_ADMIN });

async function upload(page: Page, name: string, text: string) {
  await page.locator('input[type=file]').setInputFiles({ name, mimeType: 'text/csv', buffer: Buffer.from(text) });
}

async function agentEnroll(key: string, hostname: string) {
  const res = await fetch(`${t.baseUrl}/api/v1/agents/enroll`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ enrollmentKey: key, hostname, osType: 'windows' }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

describe('journey: an enrollment key created in the console (after a step-up) and used by an agent', () => {
  it('asks for a fresh proof, shows the key once with a copy button, counts the agent’s use, and revokes it', async () => {
    const tab = await asAdmin('/onboarding/enrollment-keys');
    const { page } = tab;
    await page.getByText('No enrollment key for this organisation').waitFor();
    await checkPage(tab, 'onboarding-enrollment-keys-empty');

    // The session's last proof is older than STEP_UP_MAX_AGE: creating a key needs a fresh one.
    t.clock.advance(11 * 60_000);
    await page.getByRole('button', { name: 'New enrollment key' }).click();
    const d = await dialog(page, 'New enrollment key');
    await d.getByLabel(/^Name/).fill('Head office laptops');
    await choose(page, d, 'Site', 'Main office');
    await d.getByLabel(/How many devices/).fill('2');
    await d.getByRole('button', { name: 'Create key' }).click();

    const proof = await dialog(page, 'Confirm it is you');
    await checkPage(tab, 'onboarding-step-up');
    await proof.getByLabel(/^Your password/).fill(PASSWORD);
    await proof.getByRole('button', { name: 'Confirm with the password' }).click();

    await dialog(page, 'Your new enrollment key');
    const key = (await page.getByTestId('enrollment-key').textContent())!.trim();
    expect(key).toMatch(/^ghek_/);
    await page.getByRole('button', { name: 'Copy key' }).waitFor();
    await checkPage(tab, 'onboarding-enrollment-key-created');

    const enrolled = await agentEnroll(key, 'pc-frontdesk');
    expect(enrolled.status).toBe(201);
    expect(enrolled.body).toMatchObject({ orgId: org.id, siteId: site.id });

    await page.getByRole('button', { name: 'Done' }).click();
    await page.reload();
    const row = page.getByRole('row', { name: /Head office laptops/ });
    await expect.poll(() => row.textContent(), { timeout: 30_000 }).toContain('1 of 2');
    expect(await row.textContent()).toContain('Main office');
    // The key itself is never shown again.
    expect(await page.content()).not.toContain(key);
    await checkPage(tab, 'onboarding-enrollment-keys');

    await page.getByRole('button', { name: 'Revoke Head office laptops' }).click();
    const confirm = await dialog(page, /Revoke “Head office laptops”/);
    await confirm.getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('No enrollment key for this organisation').waitFor();
    expect((await agentEnroll(key, 'pc-late')).body.code).toBe('enrollment_key_invalid');
    await tab.context.close();
  });

  it('cancelling the step-up leaves the key uncreated and says why in words', async () => {
    const tab = await asAdmin('/onboarding/enrollment-keys');
    const { page } = tab;
    t.clock.advance(11 * 60_000);
    await page.getByRole('button', { name: 'New enrollment key' }).click();
    const d = await dialog(page, 'New enrollment key');
    await d.getByLabel(/^Name/).fill('Never made');
    await d.getByRole('button', { name: 'Create key' }).click();
    const proof = await dialog(page, 'Confirm it is you');
    await proof.getByRole('button', { name: 'Cancel' }).click();
    await expect
      .poll(() => d.getByRole('alert').textContent(), { timeout: 30_000 })
      .toContain('Confirm it is you first');
    await tab.context.close();
  });
});

describe('journey: contacts import with a held-back match', () => {
  it('dry run holds back a likely duplicate and reports a bad row; merging it on commit imports the file', async () => {
    await createContact(t, org.id, { externalId: 'old-crm-7', email: 'jane.doe@contoso.example', firstName: 'Jane' });
    const tab = await asAdmin('/onboarding/contacts');
    const { page } = tab;
    await checkPage(tab, 'onboarding-contacts-upload');
    const csv = [
      'externalId,firstName,lastName,email',
      'crm-100,Jane,Doe,Jane.Doe@contoso.example',
      'crm-101,Bob,Smith,bob@contoso.example',
      'crm-102,,,',
    ].join('\n');
    await upload(page, 'contacts.csv', csv);
    await page.getByRole('button', { name: 'Check the file (dry run)' }).click();

    const summary = page.getByTestId('import-summary');
    await expect.poll(() => summary.textContent(), { timeout: 30_000 }).toContain('1 would be created');
    expect(await summary.textContent()).toContain('1 held back');
    expect(await summary.textContent()).toContain('1 with errors');
    const held = page.getByTestId('held-back');
    await held.getByText('jane.doe@contoso.example').waitFor();
    expect(await held.textContent()).toContain('same e-mail');
    expect(await page.getByTestId('row-errors').textContent()).toMatch(/4.*crm-102.*name or an email is required/);
    // A dry run writes nothing.
    expect(await t.deps.db.select().from(contacts).where(eq(contacts.orgId, org.id))).toHaveLength(1);
    await checkPage(tab, 'onboarding-contacts-dry-run');

    await held.getByText('Merge', { exact: true }).click();
    await page.getByRole('button', { name: 'Import now' }).click();
    await page.getByText('The contacts are in').waitFor();
    expect(await page.getByTestId('import-summary').textContent()).toMatch(/1 created.*1 updated/);
    await checkPage(tab, 'onboarding-contacts-done');

    const rows = await t.deps.db.select().from(contacts).where(eq(contacts.orgId, org.id));
    expect(rows.map((r) => r.externalId).sort()).toEqual(['crm-100', 'crm-101']);
    await tab.context.close();
  });
});

describe('custom fields: define one, then import its values (mapping, preview, commit)', () => {
  it('maps the column named like the field, previews a matched and an unknown device, and writes the matched one', async () => {
    const device = await createDevice(t, org, site.id, { hostname: 'pc-001' });
    const tab = await asAdmin('/onboarding/custom-fields');
    const { page } = tab;
    await page.getByText('No custom field yet').waitFor();
    await checkPage(tab, 'onboarding-custom-fields-empty');

    await page.getByRole('button', { name: 'New field' }).click();
    const d = await dialog(page, 'New custom field');
    await d.getByLabel(/^Name/).fill('Asset tag');
    await d.getByRole('button', { name: 'Create field' }).click();
    await page.getByTestId('custom-fields').getByText('asset_tag').waitFor();

    await upload(page, 'tags.csv', 'hostname,asset_tag\npc-001,AT-0001\npc-404,AT-0404\n');
    await page.getByTestId('mapping').waitFor();
    await checkPage(tab, 'onboarding-custom-fields-mapping');
    await page.getByRole('button', { name: 'Preview', exact: true }).click();
    const summary = page.getByTestId('preview-summary');
    await expect.poll(() => summary.textContent(), { timeout: 30_000 }).toMatch(/1 ready.*1 not found.*0 with errors/);
    expect(await page.getByTestId('preview-problems').textContent()).toContain('No device matches this row');
    await checkPage(tab, 'onboarding-custom-fields-preview');
    await page.getByRole('button', { name: 'Write 1 row' }).click();
    await page.getByText('1 row written, 1 skipped').waitFor();

    // A fresh session: the test clock has moved past the first one's access token.
    const fresh = await sessionFor(
      t,
      admin.user.id,
      { scope: 'partner', partnerId: partner.id, roleId: PARTNER_ADMIN },
      true,
    );
    const values = await t
      .client()
      .withToken(fresh.accessToken)
      .get('/custom-fields/values', { query: { entityType: 'device', entityId: device.id } });
    expect(values.body.data).toEqual([{ key: 'asset_tag', value: 'AT-0001' }]);
    await tab.context.close();
  });
});

describe('scripts: create, edit, delete', () => {
  it('adds a partner-library script, changes it, and deletes it', async () => {
    const tab = await asAdmin('/onboarding/scripts');
    const { page } = tab;
    await page.getByText('No script yet').waitFor();
    await checkPage(tab, 'onboarding-scripts-empty');
    await page.getByRole('button', { name: 'New script' }).click();
    const d = await dialog(page, 'New script');
    await d.getByLabel(/^Name/).fill('Clear print queue');
    await d
      .getByLabel(/^Script/)
      .fill('Stop-Service Spooler\nRemove-Item C:\\Windows\\System32\\spool\\PRINTERS\\*\nStart-Service Spooler');
    await checkPage(tab, 'onboarding-script-editor');
    await d.getByRole('button', { name: 'Create script' }).click();
    const row = page.getByRole('row', { name: /Clear print queue/ });
    await row.waitFor();
    expect(await row.textContent()).toContain('Every organisation');

    await page.getByRole('button', { name: 'Edit Clear print queue' }).click();
    const e = await dialog(page, /Edit “Clear print queue”/);
    await expect
      .poll(() => e.getByLabel(/^Script/).inputValue(), { timeout: 30_000 })
      .toContain('Stop-Service Spooler');
    await e.getByLabel(/^Description/).fill('Unsticks jobs');
    await e.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Unsticks jobs').waitFor();
    await checkPage(tab, 'onboarding-scripts');

    await page.getByRole('button', { name: 'Delete Clear print queue' }).click();
    await (await dialog(page, /Delete “Clear print queue”/)).getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No script yet').waitFor();
    await tab.context.close();
  });

  it('a partner member limited to some organisations is refused a partner-library script, in words', async () => {
    const limited = await signedInPartnerMember(t, partner.id, {
      roleId: PARTNER_ADMIN,
      orgAccess: 'selected',
      orgIds: [org.id],
    });
    const tab = await open(limited, '/onboarding/scripts', {
      scope: 'partner',
      partnerId: partner.id,
      roleId: PARTNER_ADMIN,
    });
    const { page } = tab;
    await page.getByRole('button', { name: 'New script' }).click();
    const d = await dialog(page, 'New script');
    await d.getByLabel(/^Name/).fill('Partner-wide');
    await d.getByLabel(/^Script/).fill('echo hi');
    await d.getByRole('button', { name: 'Create script' }).click();
    await expect
      .poll(() => d.getByRole('alert').textContent(), { timeout: 30_000 })
      .toContain('access to all of the partner’s organisations');
    await tab.context.close();
  });
});

describe('partner-wide configuration', () => {
  it('creates a maintenance window for every organisation, edits it, and deletes it', async () => {
    const tab = await asAdmin('/onboarding/configuration');
    const { page } = tab;
    await page.getByText('Nothing configured yet').waitFor();
    await checkPage(tab, 'onboarding-configuration-empty');
    await page.getByRole('button', { name: 'New item' }).click();
    const d = await dialog(page, 'New configuration item');
    await d.getByLabel(/^Name/).fill('Saturday night patching');
    await d.getByLabel(/^Starts at/).fill('23:30');
    await checkPage(tab, 'onboarding-configuration-editor');
    await d.getByRole('button', { name: 'Create' }).click();
    const row = page.getByRole('row', { name: /Saturday night patching/ });
    await expect.poll(() => row.textContent(), { timeout: 30_000 }).toContain('Sat at 23:30 for 120 min (UTC)');
    expect(await row.textContent()).toContain('Every organisation');
    await checkPage(tab, 'onboarding-configuration');

    await page.getByRole('button', { name: 'Edit Saturday night patching' }).click();
    const e = await dialog(page, /Edit “Saturday night patching”/);
    await e.getByLabel(/^Lasts/).fill('90');
    await e.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => row.textContent(), { timeout: 30_000 }).toContain('for 90 min');

    await page.getByRole('button', { name: 'Delete Saturday night patching' }).click();
    await (await dialog(page, /Delete “Saturday night patching”/)).getByRole('button', { name: 'Delete' }).click();
    await page.getByText('Nothing configured yet').waitFor();
    await tab.context.close();
  });
});

describe('onboarding under the permission ceiling', () => {
  it('an organisation viewer reads keys, scripts and configuration but is offered no change', async () => {
    const viewer = await signedInOrgMember(t, org, { roleId: ORG_VIEWER });
    const tab = await open(viewer, '/onboarding', {
      scope: 'organization',
      partnerId: partner.id,
      orgId: org.id,
      roleId: ORG_VIEWER,
    });
    const { page } = tab;
    await page.getByRole('tab', { name: 'Enrollment keys' }).waitFor();
    expect(await page.getByRole('tab', { name: 'Contacts import' }).count()).toBe(0);
    await page.getByText('No enrollment key for this organisation').waitFor();
    expect(await page.getByRole('button', { name: 'New enrollment key' }).count()).toBe(0);
    await checkPage(tab, 'onboarding-viewer');
    await page.getByRole('tab', { name: 'Scripts' }).click();
    await page.getByText('No script yet').waitFor();
    expect(await page.getByRole('button', { name: 'New script' }).count()).toBe(0);
    await tab.context.close();
  });
});

// Integrations in a real Chromium against the real server: a service account and its key (behind the step-up
// prompt) used against the API; a webhook pinged to a local receiver; a SCIM token used against /scim/v2; the
// permission ceiling. Every page visited passes axe.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import { choose, dialog, giveSession, whoami } from '../support/console-session.js';
import {
  createOrg,
  createPartner,
  sessionFor,
  signedInPartnerMember,
  type SignedInMember,
} from '../support/fixtures.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';
import { checkPage, ensureConsoleBuilt, launch, newTab, type Tab } from './browser.js';

let t: TestApp;
let browser: Browser;
let receiver: Receiver;
const PASSWORD = 'Correct horse battery staple 42';
let partner: Awaited<ReturnType<typeof createPartner>>;
let org: Awaited<ReturnType<typeof createOrg>>;
let admin: SignedInMember;
let viewer: SignedInMember;
const PARTNER_ADMIN: string = SYSTEM_ROLES[0].id;
const PARTNER_VIEWER: string = SYSTEM_ROLES[2].id;

beforeAll(async () => {
  ensureConsoleBuilt();
  t = await startApp({ RATE_LIMIT_LOGIN: '1000/900', WEBHOOKS_ALLOW_INSECURE: 'true' });
  browser = await launch();
  receiver = await startReceiver();
  partner = await createPartner(t, 'Northwind MSP');
  org = await createOrg(t, partner.id, 'Contoso Dental');
  admin = await signedInPartnerMember(t, partner.id, {
    roleId: PARTNER_ADMIN,
    password: PASSWORD,
    email: 'ops@northwind.example',
  });
  viewer = await signedInPartnerMember(t, partner.id, {
    roleId: PARTNER_VIEWER,
    password: PASSWORD,
    email: 'viewer@northwind.example',
  });
});
afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await t?.close();
});

async function open(m: SignedInMember, roleId: string, path: string): Promise<Tab> {
  const tab = await newTab(browser);
  const s = await sessionFor(t, m.user.id, { scope: 'partner', partnerId: partner.id, roleId }, true);
  await giveSession(tab.context, t, s);
  await tab.page.goto(`${t.baseUrl}${path}`);
  await whoami(tab.page, m.user.email);
  return tab;
}
const asAdmin = (path: string) => open(admin, PARTNER_ADMIN, path);

describe('journey: a service account and its key, issued after a step-up, call the API', () => {
  it('creates the account, shows the key once, the key lists organisations, and revoking it refuses the key', async () => {
    const tab = await asAdmin('/integrations/service-accounts');
    const { page } = tab;
    await page.getByText('No service account here yet.').waitFor();
    await checkPage(tab, 'integrations-service-accounts-empty');

    await page.getByRole('button', { name: 'New service account' }).click();
    const d = await dialog(page, 'New service account');
    await d.getByLabel(/^Name/).fill('PSA sync');
    await choose(page, d, /^Role/, 'Partner Viewer');
    await d.getByLabel(/^Description/).fill('Ticketing integration');
    await checkPage(tab, 'integrations-service-account-new');
    await d.getByRole('button', { name: 'Create service account' }).click();
    const row = page.getByRole('row', { name: /PSA sync/ });
    await row.waitFor();
    expect(await row.textContent()).toContain('Partner Viewer');

    // The session's last proof is older than STEP_UP_MAX_AGE: issuing a key needs a fresh one.
    t.clock.advance(11 * 60_000);
    await page.getByRole('button', { name: 'Keys of PSA sync' }).click();
    const keys = await dialog(page, /Keys of “PSA sync”/);
    await keys.getByText('No key yet').waitFor();
    await checkPage(tab, 'integrations-keys-empty');
    await keys.getByRole('button', { name: 'New key' }).click();
    const k = await dialog(page, /New key for “PSA sync”/);
    await k.getByLabel(/^Name/).fill('Rotation 2026-11');
    await k.getByLabel(/^Allowed addresses/).fill('127.0.0.0/8\n::1/128');
    await k.getByRole('button', { name: 'Create key' }).click();

    const proof = await dialog(page, 'Confirm it is you');
    await proof.getByLabel(/^Your password/).fill(PASSWORD);
    await proof.getByRole('button', { name: 'Confirm with the password' }).click();

    await dialog(page, 'Your new API key');
    const key = (await page.getByTestId('api-key').textContent())!.trim();
    expect(key).toMatch(/^gh_/);
    await page.getByRole('button', { name: 'Copy key' }).waitFor();
    await checkPage(tab, 'integrations-key-created');

    const asKey = (path: string) => fetch(`${t.baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
    const orgs = await asKey('/api/v1/orgs/organizations');
    expect(orgs.status).toBe(200);
    expect(((await orgs.json()) as { data: { id: string }[] }).data.map((o) => o.id)).toContain(org.id);

    await page.getByRole('button', { name: 'Done' }).click();
    const listed = await dialog(page, /Keys of “PSA sync”/);
    const keyRow = listed.getByRole('row', { name: /Rotation 2026-11/ });
    await keyRow.waitFor();
    expect(await keyRow.textContent()).toContain('127.0.0.0/8');
    expect(await page.content()).not.toContain(key);
    await checkPage(tab, 'integrations-keys');

    await listed.getByRole('button', { name: 'Revoke Rotation 2026-11' }).click();
    const confirm = await dialog(page, /Revoke “Rotation 2026-11”/);
    await confirm.getByRole('button', { name: 'Revoke' }).click();
    await expect
      .poll(
        async () =>
          (await dialog(page, /Keys of “PSA sync”/)).getByRole('row', { name: /Rotation 2026-11/ }).textContent(),
        { timeout: 30_000 },
      )
      .toContain('Revoked');
    expect((await asKey('/api/v1/orgs/organizations')).status).toBe(401);
    await page.keyboard.press('Escape');

    // Disable, then delete with a confirmation.
    await page.getByRole('button', { name: 'Disable PSA sync' }).click();
    await expect.poll(() => row.textContent(), { timeout: 30_000 }).toContain('Disabled');
    await page.getByRole('button', { name: 'Delete PSA sync' }).click();
    const del = await dialog(page, /Delete “PSA sync”/);
    await del.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No service account here yet.').waitFor();
    await tab.context.close();
  });
});

describe('journey: a webhook created in the console and pinged', () => {
  it('shows the secret once; Ping reaches the local receiver, signed with that secret', async () => {
    const tab = await asAdmin('/integrations/webhooks');
    const { page } = tab;
    await page.getByText('No webhook here yet.').waitFor();
    await checkPage(tab, 'integrations-webhooks-empty');

    // The organisation picked on the page is the new webhook's.
    await choose(page, page, /^Webhooks of/, 'Contoso Dental');
    await page.getByText('No webhook here yet.').waitFor();
    await page.getByRole('button', { name: 'New webhook' }).click();
    const d = await dialog(page, 'New webhook');
    await d.getByLabel(/^URL/).fill(`${receiver.url}/siem`);
    await checkPage(tab, 'integrations-webhook-new');
    await d.getByRole('button', { name: 'Create webhook' }).click();

    await dialog(page, 'Your webhook’s signing secret');
    const secret = (await page.getByTestId('webhook-secret').textContent())!.trim();
    expect(secret).toMatch(/^whsec_/);
    await checkPage(tab, 'integrations-webhook-created');
    await page.getByRole('button', { name: 'Done' }).click();

    const row = page.getByRole('row', { name: /\/siem/ });
    await row.waitFor();
    const [hook] = (
      await t
        .client()
        .withToken(
          (
            await sessionFor(t, admin.user.id, { scope: 'partner', partnerId: partner.id, roleId: PARTNER_ADMIN }, true)
          ).accessToken,
        )
        .get('/webhooks', { query: { orgId: org.id } })
    ).body.data as { id: string; orgId: string }[];
    expect(hook!.orgId).toBe(org.id);
    receiver.secrets.set(hook!.id, secret);

    await page.getByRole('button', { name: `Ping ${receiver.url}/siem` }).click();
    const got = await receiver.waitFor((r) => r.some((x) => x.body?.type === 'webhook.ping'), 'the ping');
    const pingReceived = got.find((x) => x.body?.type === 'webhook.ping')!;
    expect(pingReceived.path).toBe('/siem');
    expect(pingReceived.verified).toBe(true);
    await expect
      .poll(() => page.getByTestId('ping-result').textContent(), { timeout: 30_000 })
      .toContain('The receiver answered 204');
    await checkPage(tab, 'integrations-webhooks');

    await page.getByRole('button', { name: `Deliveries of ${receiver.url}/siem` }).click();
    await dialog(page, 'Deliveries');
    await page.getByRole('button', { name: 'Redeliver every failed one' }).waitFor();
    await checkPage(tab, 'integrations-webhook-deliveries');
    await page.keyboard.press('Escape');

    await page.getByRole('button', { name: `Pause ${receiver.url}/siem` }).click();
    await expect.poll(() => row.textContent(), { timeout: 30_000 }).toContain('Paused');
    await page.getByRole('button', { name: `Delete ${receiver.url}/siem` }).click();
    const del = await dialog(page, 'Delete this webhook?');
    await del.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No webhook here yet.').waitFor();
    await tab.context.close();
  });
});

describe('journey: a SCIM token created in the console and used by an identity provider', () => {
  it('shows the token and the SCIM base URL once; the token lists users at /scim/v2/Users; revoked, it is refused', async () => {
    const tab = await asAdmin('/integrations/scim-tokens');
    const { page } = tab;
    await page.getByText('No SCIM token here yet.').waitFor();
    await checkPage(tab, 'integrations-scim-empty');

    await page.getByRole('button', { name: 'New SCIM token' }).click();
    const d = await dialog(page, 'New SCIM token');
    await choose(page, d, /^Organisation/, 'Contoso Dental');
    await d.getByLabel(/^Name/).fill('Entra ID');
    await choose(page, d, /^Default role/, 'Organization Viewer');
    await checkPage(tab, 'integrations-scim-new');
    await d.getByRole('button', { name: 'Create token' }).click();

    await dialog(page, 'Your new SCIM token');
    const token = (await page.getByTestId('scim-token').textContent())!.trim();
    expect(token).toMatch(/^ghscim_/);
    const base = (await page.getByTestId('scim-base-url').textContent())!.trim();
    expect(base).toBe(`${t.baseUrl}/scim/v2`);
    await checkPage(tab, 'integrations-scim-created');

    const users = (tok: string) => fetch(`${base}/Users`, { headers: { authorization: `Bearer ${tok}` } });
    expect((await users(token)).status).toBe(200);

    await page.getByRole('button', { name: 'Done' }).click();
    await choose(page, page, /^SCIM tokens of/, 'Contoso Dental');
    const row = page.getByRole('row', { name: /Entra ID/ });
    await row.waitFor();
    expect(await row.textContent()).toContain('Organization Viewer');
    expect(await page.content()).not.toContain(token);
    await checkPage(tab, 'integrations-scim');

    await page.getByRole('button', { name: 'Revoke Entra ID' }).click();
    const confirm = await dialog(page, /Revoke “Entra ID”/);
    await confirm.getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => row.textContent(), { timeout: 30_000 }).toContain('Revoked');
    expect((await users(token)).status).toBe(401);
    await tab.context.close();
  });
});

describe('the permission ceiling', () => {
  it('a Partner Viewer has no Integrations entry and the page says their role opens none of it', async () => {
    const tab = await open(viewer, PARTNER_VIEWER, '/integrations');
    const { page } = tab;
    await page.getByText('Your role opens none of the integrations').waitFor();
    expect(await page.getByRole('navigation', { name: 'Main' }).getByText('Integrations').count()).toBe(0);
    await checkPage(tab, 'integrations-none');
    await tab.context.close();
  });
});

// End-to-end journeys in a real Chromium against the real server, the real SMTP catcher and the real SMS sink:
// a partner from registration to an invited colleague signing in with MFA, and an SMS sign-in.
// Elsewhere: reset from the mailed link (signin.test.ts), passkey registration and passkey sign-in (admin.test.ts),
// contacts import with a held-back match and an enrollment key used by an agent (onboarding.test.ts), the session
// list with sign-out (account.test.ts).
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { choose, dialog, nextTotp, passwordStep, typeCode, whoami } from '../support/console-session.js';
import { addOrgMember, createOrg, createPartner, createSite, createUser } from '../support/fixtures.js';
import { startSmsSink, type SmsSink } from '../support/sms-sink.js';
import { startMailCatcher, type MailCatcher } from '../support/smtp.js';
import { checkPage, ensureConsoleBuilt, launch, newTab, readmeScreenshot } from './browser.js';

let t: TestApp;
let mail: MailCatcher;
let sms: SmsSink;
let browser: Browser;
const PASSWORD = 'Correct horse battery staple 42';

beforeAll(async () => {
  ensureConsoleBuilt();
  mail = await startMailCatcher();
  sms = await startSmsSink();
  t = await startApp({
    ENABLE_REGISTRATION: 'true',
    SMTP_URL: mail.url,
    MAIL_FROM: 'gatehouse@example.test',
    RATE_LIMIT_LOGIN: '1000/900',
    ...sms.env(),
  });
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await mail?.close();
  await sms?.close();
});

describe('journey: register a partner → forced TOTP → organisation and site → invite → accept from the mail → sign in with MFA', () => {
  it('takes a new partner to an invited colleague signed in with two-step verification', async () => {
    const owner = { company: 'Tailspin MSP', name: 'Ada Owner', email: 'ada@tailspin.example' };
    const colleague = { name: 'Ben Colleague', email: 'ben@tailspin.example' };
    const org = 'Wingtip Dental';
    const site = 'Harbour Street';

    // Registration, and the enrolment Force MFA demands of a Partner Admin.
    const tab = await newTab(browser);
    const { page } = tab;
    await page.goto(`${t.baseUrl}/register`);
    await page.getByRole('heading', { name: 'Create your partner account' }).waitFor();
    await page.getByLabel('Company name').fill(owner.company);
    await page.getByLabel('Your name').fill(owner.name);
    await page.getByLabel('E-mail').fill(owner.email);
    await page.getByLabel(/^Password/).fill(PASSWORD);
    await page.getByLabel('Repeat it').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL('**/enroll-mfa');
    const ownerSecret = (await page.getByTestId('totp-secret').textContent())!.trim();
    await typeCode(page, nextTotp(t, ownerSecret));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByTestId('recovery-codes').waitFor();
    await page.getByRole('button', { name: 'I have saved my codes' }).click();
    await whoami(page, owner.email);

    // An organisation and a site.
    await page.getByRole('link', { name: 'Tenants' }).click();
    await page.getByText('No organisation yet').waitFor();
    await page.getByRole('button', { name: 'New organisation' }).click();
    const o = await dialog(page, 'New organisation');
    await o.getByLabel(/^Name/).fill(org);
    await o.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { name: org }).waitFor();
    await page.getByRole('button', { name: 'New site' }).click();
    const s = await dialog(page, 'New site');
    await s.getByLabel(/^Name/).fill(site);
    await s.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('cell', { name: site, exact: true }).waitFor();
    await checkPage(tab, 'journey-tenants');
    await readmeScreenshot(page);

    // The colleague, invited as the organisation's admin on that site.
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('heading', { name: 'Users' }).waitFor();
    await choose(page, page, 'Members of', org);
    await page.getByText('No members yet').waitFor();
    await page.getByRole('button', { name: 'Invite a user' }).click();
    const inv = await dialog(page, 'Invite a user');
    await inv.getByLabel(/^E-mail/).fill(colleague.email);
    await inv.getByLabel(/^Name/).fill(colleague.name);
    await choose(page, inv, /^Role/, 'Organization Admin');
    await choose(page, inv, /^Sites/, site);
    await page.keyboard.press('Escape');
    await checkPage(tab, 'journey-invite');
    await inv.getByRole('button', { name: 'Send invitation' }).click();
    await page.getByTestId('users-table').getByText(colleague.email).waitFor();
    await tab.context.close();

    // The colleague accepts from the mailed link and lands in the console.
    const invitation = await mail.waitFor(colleague.email, (m) => /accept-invite\?token=/.test(m.text), 30_000);
    const link = /(http:\/\/localhost:\d+\/accept-invite\?token=[^\s"<>]+)/.exec(invitation.text)![1]!;
    const ben = await newTab(browser);
    await ben.page.goto(link);
    await ben.page.getByText(`You are invited to ${org}`).waitFor();
    await ben.page.getByLabel('Choose a password').fill(`${PASSWORD} too`);
    await ben.page.getByLabel('Repeat it').fill(`${PASSWORD} too`);
    await checkPage(ben, 'journey-accept-invite');
    await ben.page.getByRole('button', { name: 'Accept and sign in' }).click();
    await whoami(ben.page, colleague.email);

    // They turn on an authenticator app, sign out, and sign in with both factors.
    await ben.page.getByRole('link', { name: 'My account' }).click();
    await ben.page.getByRole('button', { name: 'Set up an authenticator app' }).click();
    const benSecret = (await ben.page.getByTestId('totp-secret').textContent())!.trim();
    await typeCode(ben.page, nextTotp(t, benSecret));
    await ben.page.getByRole('button', { name: 'Turn on' }).click();
    await ben.page.getByTestId('recovery-codes').waitFor();
    await ben.page.getByRole('button', { name: 'I have saved my codes' }).click();
    await expect.poll(() => ben.page.getByTestId('mfa-status').textContent(), { timeout: 30_000 }).toBe('On');
    await ben.page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await ben.page.getByRole('heading', { name: 'Sign in' }).waitFor();

    await passwordStep(ben.page, t, colleague.email, `${PASSWORD} too`);
    await ben.page.getByText('Enter the 6-digit code from your authenticator app.').waitFor();
    await typeCode(ben.page, nextTotp(t, benSecret));
    await ben.page.getByRole('button', { name: 'Verify' }).click();
    await whoami(ben.page, colleague.email);
    // Signed in where invited: the organisation's member list, with their site restriction.
    await ben.page.getByRole('link', { name: 'Users' }).click();
    await ben.page.getByTestId('users-table').getByText(colleague.email).waitFor();
    await ben.context.close();
  });
});

describe('journey: SMS sign-in', () => {
  it('password, then the code the sink caught, signs in', async () => {
    const phone = '+12025550188';
    const user = await createUser(t, { email: 'sms@tailspin.example', password: PASSWORD });
    // The factor is enrolled through the API (its console side is account.test.ts).
    const api = t.client();
    api.token = (await api.post('/auth/login', { email: user.email, password: PASSWORD })).body.accessToken;
    expect((await api.post('/auth/phone/verify', { phoneNumber: phone })).status).toBe(200);
    expect((await api.post('/auth/phone/confirm', { code: sms.lastCode(phone) })).status).toBe(200);
    expect((await api.post('/auth/mfa/sms/enable')).status).toBe(200);
    const before = sms.countTo(phone);

    const tab = await newTab(browser);
    const { page } = tab;
    await passwordStep(page, t, user.email, PASSWORD);
    await page.getByText('We sent a code to the phone ending 0188.').waitFor();
    await checkPage(tab, 'journey-sms-challenge');
    const text = await sms.waitFor(phone, () => sms.countTo(phone) > before);
    await typeCode(page, /\b(\d{6})\b/.exec(text.body)![1]!);
    await page.getByRole('button', { name: 'Verify' }).click();
    await whoami(page, user.email);
    await tab.context.close();
  });
});

describe('journey: step-up by text message', () => {
  it('a risky action after STEP_UP_MAX_AGE asks for a proof; "Text me a code" and the texted code let it run', async () => {
    const phone = '+12025550177';
    const partner = await createPartner(t);
    const org = await createOrg(t, partner.id);
    await createSite(t, org.id, 'Back office');
    const user = await createUser(t, { email: 'sms-admin@tailspin.example', password: PASSWORD });
    await addOrgMember(t, { orgId: org.id, userId: user.id });
    const api = t.client();
    api.token = (await api.post('/auth/login', { email: user.email, password: PASSWORD })).body.accessToken;
    expect((await api.post('/auth/phone/verify', { phoneNumber: phone })).status).toBe(200);
    expect((await api.post('/auth/phone/confirm', { code: sms.lastCode(phone) })).status).toBe(200);
    expect((await api.post('/auth/mfa/sms/enable')).status).toBe(200);

    const tab = await newTab(browser);
    const { page } = tab;
    let sent = sms.countTo(phone);
    await passwordStep(page, t, user.email, PASSWORD);
    const signInText = await sms.waitFor(phone, () => sms.countTo(phone) > sent);
    await typeCode(page, /\b(\d{6})\b/.exec(signInText.body)![1]!);
    await page.getByRole('button', { name: 'Verify' }).click();
    await whoami(page, user.email);

    t.clock.advance(11 * 60_000);
    await page.goto(`${t.baseUrl}/onboarding/enrollment-keys`);
    await page.getByRole('button', { name: 'New enrollment key' }).click();
    const d = await dialog(page, 'New enrollment key');
    await d.getByLabel(/^Name/).fill('Texted');
    await choose(page, d, 'Site', 'Back office');
    await d.getByRole('button', { name: 'Create key' }).click();

    const proof = await dialog(page, 'Confirm it is you');
    sent = sms.countTo(phone);
    await proof.getByRole('button', { name: 'Text me a code' }).click();
    await proof.getByText('texted to the phone ending in 0177').waitFor();
    await checkPage(tab, 'journey-step-up-sms');
    const text = await sms.waitFor(phone, () => sms.countTo(phone) > sent);
    await typeCode(page, /\b(\d{6})\b/.exec(text.body)![1]!, proof);
    await proof.getByRole('button', { name: 'Confirm with the texted code' }).click();

    await dialog(page, 'Your new enrollment key');
    expect((await page.getByTestId('enrollment-key').textContent())!.trim()).toMatch(/^ghek_/);
    await tab.context.close();
  });
});

// A sign-in whose answer fails after its transaction committed (a real fault in onSend, as a cookie or
// serialisation failure) mails nothing and leaves the person able to try again: the "new sign-in" mail goes out only
// for an answer that succeeded, and an invitation whose acceptance was not answered is finished by the same
// link and password once more, never by anyone else and never after an answer went out.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { authFlows, knownDevices } from '../../src/db/schema/index.js';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { sha256 } from '../../src/platform/crypto.js';
import { startApp, type TestApp } from '../support/app.js';
import { type FailingAnswers, failingAnswers } from '../support/failing-answers.js';
import { createOrg, partnerAdmin } from '../support/fixtures.js';
import { linkToken, startMailCatcher, type MailCatcher } from '../support/smtp.js';
import { orgMember, PASSWORD, strongPassword } from './helpers.js';

const LOGIN = 'POST /api/v1/auth/login';
const ACCEPT = 'POST /api/v1/auth/accept-invite';
const ORG_VIEWER = SYSTEM_ROLES[5]!.id as string;
const NEW_SIGN_IN = 'New sign-in to your account';
const settle = () => new Promise((r) => setTimeout(r, 500));

let t: TestApp;
let faults: FailingAnswers;
let mail: MailCatcher;
beforeAll(async () => {
  mail = await startMailCatcher();
  t = await startApp(
    { SMTP_URL: mail.url, RATE_LIMIT_LOGIN: '1000/900' },
    { beforeListen: (app) => (faults = failingAnswers(app)) },
  );
});
afterAll(async () => {
  await t?.close();
  await mail?.close();
});

const devicesOf = async (userId: string) =>
  (await t.deps.db.select().from(knownDevices).where(eq(knownDevices.userId, userId))).length;

describe('nothing is mailed for a sign-in whose answer failed', () => {
  it('a new browser whose login answer failed: no "new sign-in" mail, no device; its retry mails once', async () => {
    const { user } = await orgMember(t);
    const laptop = t.client();
    expect((await laptop.post('/auth/login', { email: user.email, password: PASSWORD })).status).toBe(200);
    await vi.waitFor(async () => expect(await devicesOf(user.id)).toBe(1), { timeout: 15_000 }); // the first device, recorded silently

    const stranger = t.client();
    faults.failNext(LOGIN);
    const failed = await stranger.post('/auth/login', { email: user.email, password: PASSWORD });
    expect(failed.status, failed.text).toBe(500);
    await settle();
    expect(await devicesOf(user.id)).toBe(1);
    expect(mail.countTo(user.email)).toBe(0);

    const retry = await stranger.post('/auth/login', { email: user.email, password: PASSWORD });
    expect(retry.status, retry.text).toBe(200);
    await mail.waitFor(user.email, (m) => m.subject === NEW_SIGN_IN);
    await settle();
    expect(mail.messages.filter((m) => m.to.includes(user.email) && m.subject === NEW_SIGN_IN)).toHaveLength(1);
    expect(await devicesOf(user.id)).toBe(2);
  }, 120_000);
});

describe('an invitation whose acceptance was not answered can be accepted again', () => {
  async function invitation() {
    const { api, partner } = await partnerAdmin(t);
    const org = await createOrg(t, partner.id);
    const to = `invitee-${Math.random().toString(36).slice(2, 8)}@unanswered.test`;
    const inv = await api.post('/users/invite', { email: to, name: 'In Vitee', roleId: ORG_VIEWER, orgId: org.id });
    expect(inv.status, inv.text).toBe(201);
    return { to, org, token: linkToken(await mail.waitFor(to)) };
  }
  const answered = async (token: string) => {
    const [flow] = await t.deps.db
      .select({ data: authFlows.data })
      .from(authFlows)
      .where(and(eq(authFlows.tokenHash, sha256(token)), eq(authFlows.kind, 'invite')));
    return (flow?.data as { answered?: boolean } | undefined)?.answered === true;
  };

  it('the same link and password sign the invitee in; another password or a spent answer gets 404', async () => {
    const { to, org, token } = await invitation();
    const password = strongPassword();
    const browser = t.client();
    faults.failNext(ACCEPT);
    const failed = await browser.post('/auth/accept-invite', { token, password });
    expect(failed.status, failed.text).toBe(500);

    // Whoever else holds the link cannot use the unanswered acceptance without the password it set.
    const guess = await t.client().post('/auth/accept-invite', { token, password: strongPassword() });
    expect(guess.status).toBe(404);
    expect(guess.body.code).toBe('invite_invalid');

    const again = await browser.post('/auth/accept-invite', { token, password });
    expect(again.status, again.text).toBe(200);
    expect(again.body.user).toMatchObject({ email: to, scope: 'organization', orgId: org.id, status: 'active' });
    expect((await t.client().withToken(again.body.accessToken).get('/auth/me')).status).toBe(200);

    await vi.waitFor(async () => expect(await answered(token)).toBe(true), { timeout: 15_000 });
    const spent = await browser.post('/auth/accept-invite', { token, password });
    expect(spent.status).toBe(404);
    expect(spent.body.code).toBe('invite_invalid');
  }, 120_000);

  it('an answered acceptance is spent at once: the same link and password again get 404', async () => {
    const { token } = await invitation();
    const password = strongPassword();
    const ok = await t.client().post('/auth/accept-invite', { token, password });
    expect(ok.status, ok.text).toBe(200);
    await vi.waitFor(async () => expect(await answered(token)).toBe(true), { timeout: 15_000 });
    const again = await t.client().post('/auth/accept-invite', { token, password });
    expect(again.status).toBe(404);
  }, 120_000);
});

// No half-done first run: a setup whose answer fails after its transaction committed (a real fault in onSend, as a
// cookie or serialisation failure) does not strand the person. The same link submitted again by the same person
// (same e-mail, the password it set) signs them in and answers as setup did; once an answer went out, the link is
// spent; anyone else with the link gets nothing.
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { authFlows, partners } from '../../src/db/schema/index.js';
import { sha256 } from '../../src/platform/crypto.js';
import { issueSetupLink } from '../../src/modules/setup/service.js';
import { strongPassword } from '../auth/helpers.js';
import { startApp, type TestApp } from '../support/app.js';
import { type FailingAnswers, failingAnswers } from '../support/failing-answers.js';
import { startMailCatcher, type MailCatcher } from '../support/smtp.js';

const SETUP = 'POST /api/v1/setup';
let t: TestApp;
let faults: FailingAnswers;
let mail: MailCatcher;
beforeAll(async () => {
  mail = await startMailCatcher();
  t = await startApp(
    { SMTP_URL: mail.url, RATE_LIMIT_REGISTER_PARTNER: '100/3600' },
    { beforeListen: (app) => (faults = failingAnswers(app)) },
  );
});
afterAll(async () => {
  await t?.close();
  await mail?.close();
});

const partnerCount = async () => (await t.deps.db.select({ n: sql<number>`count(*)::int` }).from(partners))[0]!.n;
const answered = async (token: string) => {
  const [flow] = await t.deps.db
    .select({ data: authFlows.data })
    .from(authFlows)
    .where(and(eq(authFlows.tokenHash, sha256(token)), eq(authFlows.kind, 'first_run_setup')));
  return (flow?.data as { answered?: boolean } | undefined)?.answered === true;
};

describe('a setup whose answer failed can be finished by submitting the same link again', () => {
  it('the failed answer leaves a 500; the same form again signs the administrator in; then the link is spent', async () => {
    const token = new URL((await issueSetupLink(t.deps))!).searchParams.get('token')!;
    const form = {
      token,
      companyName: 'Retry MSP',
      email: 'first-admin@retry.test',
      password: strongPassword(),
      name: 'First Admin',
    };
    const browser = t.client();

    faults.failNext(SETUP);
    const failed = await browser.post('/setup', form);
    expect(failed.status, failed.text).toBe(500);
    expect(faults.fired()).toBe(1);
    expect(await partnerCount()).toBe(1); // the setup itself committed
    expect(await answered(token)).toBe(false);

    // Someone else holding the link (it was printed where a log shipper reads) gets nothing from it.
    const stranger = await t.client().post('/setup', { ...form, email: 'intruder@retry.test' });
    expect(stranger.status).toBe(409);
    expect(stranger.body.code).toBe('setup_completed');
    const guess = await t.client().post('/setup', { ...form, password: strongPassword() });
    expect(guess.status).toBe(409);

    const again = await browser.post('/setup', { ...form, email: 'First-Admin@Retry.test' });
    expect(again.status, again.text).toBe(201);
    expect(again.body).toMatchObject({ tokenType: 'Bearer', user: { email: 'first-admin@retry.test' } });
    expect(again.body.partner).toMatchObject({ name: 'Retry MSP' });
    expect(await partnerCount()).toBe(1);
    const me = await t.client().withToken(again.body.accessToken).get('/auth/me');
    expect(me.status, me.text).toBe(200);
    expect(me.body).toMatchObject({ scope: 'partner', partnerId: again.body.partner.id });

    // Once an answer went out the link is spent, even for the same person with the same form.
    await vi.waitFor(async () => expect(await answered(token)).toBe(true), { timeout: 15_000 });
    const third = await browser.post('/setup', form);
    expect(third.status).toBe(409);
    expect(third.body.code).toBe('setup_completed');
    // The person signs in with the password the first attempt set.
    expect((await t.client().post('/auth/login', { email: form.email, password: form.password })).status).toBe(200);
  }, 120_000);
});

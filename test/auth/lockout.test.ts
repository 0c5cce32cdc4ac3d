// Sign-in throttling that follows the attacker, not the victim (docs/operations.md, "Sign-in throttling").
// Addresses come from X-Forwarded-For behind a trusted proxy, as in production behind a load balancer.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { users } from '../../src/db/schema/index.js';
import { startApp, type TestApp } from '../support/app.js';
import { linkToken, startMailCatcher, type MailCatcher } from '../support/smtp.js';
import { auditOf, orgMember, PASSWORD, strongPassword } from './helpers.js';

let t: TestApp;
let mail: MailCatcher;

beforeAll(async () => {
  mail = await startMailCatcher();
  // The production defaults: 10 attempts per address + email per 15 minutes, 5 guessing addresses per account.
  t = await startApp({
    SMTP_URL: mail.url,
    TRUST_PROXY: 'true',
    RATE_LIMIT_LOGIN: '10/900',
    RATE_LIMIT_LOGIN_ACCOUNT: '5/900',
  });
});
afterAll(async () => {
  await t?.close();
  await mail?.close();
});

const login = (email: string, password: string, ip: string) =>
  t.client().post('/auth/login', { email, password }, { headers: { 'x-forwarded-for': ip } });
const attackerIp = (i: number) => `203.0.113.${i + 1}`;
const noticesTo = (email: string) =>
  mail.messages.filter((m) => m.to.includes(email.toLowerCase()) && /guessing your password/i.test(m.subject));

/** Runs `tasks` with at most `width` in flight. */
async function pool<T>(tasks: (() => Promise<T>)[], width: number): Promise<T[]> {
  const out: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < tasks.length) {
        const i = next++;
        out[i] = await tasks[i]!();
      }
    }),
  );
  return out;
}

describe('failures from one address never affect sign-in from any other address', () => {
  it('30 wrong passwords from one address: that address is held (401, then 429), a never-seen address signs in at once', async () => {
    const { user } = await orgMember(t);
    const answers = [];
    for (let i = 0; i < 30; i++) answers.push((await login(user.email, `wrong-${i}-password`, '198.51.100.10')).status);
    expect(answers.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(answers.slice(10).every((s) => s === 429)).toBe(true);
    // A new address: no lock, no extra step, no notice.
    expect((await login(user.email, PASSWORD, '198.51.100.99')).status).toBe(200);
    expect(noticesTo(user.email)).toHaveLength(0);
    const [row] = await t.deps.db.select().from(users).where(eq(users.id, user.id));
    expect(row!.lockedUntil).toBeNull();
  }, 120_000);
});

describe('a distributed guess adds a step for new addresses and never holds the known ones', () => {
  it("1,000 wrong passwords from 50 addresses, then the right password from the victim's usual address signs in", async () => {
    const { user } = await orgMember(t);
    const home = '192.0.2.44';
    expect((await login(user.email, PASSWORD, home)).status).toBe(200); // the victim's usual address

    const attempts = Array.from(
      { length: 1000 },
      (_, i) => () => login(user.email, `guess-${i}-password`, attackerIp(i % 50)),
    );
    const answers = await pool(attempts, 8);
    // Each address gets its 10 tries answered alike, then its own 429; nothing else.
    expect(answers.filter((r) => r.status === 401).length).toBe(500);
    expect(answers.filter((r) => r.status === 429).length).toBe(500);
    expect(answers.filter((r) => r.status === 401).every((r) => r.body.code === 'invalid_credentials')).toBe(true);

    const fromHome = await login(user.email, PASSWORD, home);
    expect(fromHome.status).toBe(200);
    expect(fromHome.body.accessToken).toBeTruthy();

    // A never-seen address with the right password during the guessing: the same 401 as a wrong one.
    const fromNew = await login(user.email, PASSWORD, '198.51.100.200');
    expect(fromNew.status).toBe(401);
    expect(fromNew.body.code).toBe('invalid_credentials');
    const reasons = (await auditOf(t, 'auth.login.failed', user.id)).map(
      (e) => (e.details as { reason: string }).reason,
    );
    expect(reasons.filter((r) => r === 'new_address_during_guessing')).toHaveLength(1);

    // The victim is mailed once, with a link that sets a new password; the new password ends the episode.
    const notice = await mail.waitFor(user.email, (m) => /guessing your password/i.test(m.subject));
    await new Promise((r) => setTimeout(r, 300));
    expect(noticesTo(user.email)).toHaveLength(1);
    expect(notice.text).toContain(`${t.deps.config.appUrl}/reset-password?token=`);
    const next = strongPassword();
    expect(
      (await t.client().post('/auth/reset-password', { token: linkToken(notice), newPassword: next })).status,
    ).toBe(200);
    expect((await login(user.email, next, '198.51.100.201')).status).toBe(200);
  }, 300_000);

  it('with a second factor enrolled, a new address gets the MFA challenge instead (the step is the second factor)', async () => {
    const { user } = await orgMember(t);
    await t.deps.db.update(users).set({ mfaEnabled: true, mfaMethod: 'totp' }).where(eq(users.id, user.id));
    for (let i = 0; i < 6; i++)
      expect((await login(user.email, `guess-${i}-password`, `203.0.114.${i + 1}`)).status).toBe(401);
    const fromNew = await login(user.email, PASSWORD, '198.51.100.202');
    expect(fromNew.status).toBe(200);
    expect(fromNew.body).toMatchObject({ mfaRequired: true });
  }, 120_000);

  it('wrong passwords from four addresses are not a distributed guess: a new address signs in directly', async () => {
    const { user } = await orgMember(t);
    for (let i = 0; i < 4; i++)
      for (let j = 0; j < 10; j++) await login(user.email, `typo-${j}-password`, `203.0.115.${i + 1}`);
    expect((await login(user.email, PASSWORD, '198.51.100.203')).status).toBe(200);
    expect(noticesTo(user.email)).toHaveLength(0);
  }, 120_000);
});

describe('an account under a distributed guess is counted in gatehouse_lockouts_total, once per episode', () => {
  const lockouts = async () => {
    const text = await (await fetch(`${t.baseUrl}/metrics`)).text();
    return Number(/^gatehouse_lockouts_total\{reason="distributed_guess"\} (\d+)$/m.exec(text)?.[1] ?? 0);
  };

  it('wrong passwords from five addresses start the episode: the counter rises by one and stays there while it lasts', async () => {
    const { user } = await orgMember(t);
    const before = await lockouts();
    for (let i = 0; i < 4; i++)
      expect((await login(user.email, `guess-${i}-password`, `203.0.116.${i + 1}`)).status).toBe(401);
    expect(await lockouts()).toBe(before); // four addresses are not a guess
    expect((await login(user.email, 'guess-4-password', '203.0.116.5')).status).toBe(401);
    expect(await lockouts()).toBe(before + 1);
    for (let i = 5; i < 9; i++) await login(user.email, `guess-${i}-password`, `203.0.116.${i + 1}`);
    expect(await lockouts()).toBe(before + 1);
    const [record] = await auditOf(t, 'auth.login.guessing_detected', user.id);
    expect(record?.details).toMatchObject({ reason: 'distributed_guess', addresses: 5 });
  }, 120_000);
});

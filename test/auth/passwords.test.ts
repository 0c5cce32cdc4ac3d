import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authFlows, sessions, users } from '../../src/db/schema/index.js';
import { hashPassword, verifyPassword } from '../../src/modules/identity/passwords.js';
import { startApp, type TestApp } from '../support/app.js';
import { linkToken, startMailCatcher, type MailCatcher } from '../support/smtp.js';
import {
  auditOf,
  clientWithRefreshToken,
  orgMember,
  PASSWORD,
  refresh,
  REFRESH_COOKIE,
  signIn,
  statuses,
  strongPassword,
} from './helpers.js';

let t: TestApp;
let mail: MailCatcher;
const HOUR = 3600 * 1000;

beforeAll(async () => {
  mail = await startMailCatcher();
  t = await startApp({
    SMTP_URL: mail.url,
    RATE_LIMIT_LOGIN: '1000/900',
    RATE_LIMIT_FORGOT_PASSWORD: '1000/3600',
    RATE_LIMIT_PASSWORD_RECHECK: '1000/900',
  });
});
afterAll(async () => {
  await t?.close();
  await mail?.close();
});

const isResetMail = (m: { subject: string }) => /reset your password/i.test(m.subject);

/** Waits for a reset mail to a fresh canary: every mail an earlier request started is out by then. */
async function mailBarrier() {
  const { user } = await orgMember(t);
  expect((await t.client().post('/auth/forgot-password', { email: user.email })).status).toBe(200);
  await mail.waitFor(user.email, isResetMail);
  await new Promise((r) => setTimeout(r, 100));
}

async function requestResetLink(email: string): Promise<string> {
  const before = mail.messages.length;
  const res = await t.client().post('/auth/forgot-password', { email });
  expect(res.status).toBe(200);
  const m = await mail.waitFor(email, (x) => isResetMail(x) && mail.messages.indexOf(x) >= before);
  return linkToken(m);
}

async function loginStatus(email: string, password: string) {
  return (await t.client().post('/auth/login', { email, password })).status;
}

describe('change-password ends every other session and keeps the caller signed in', () => {
  it('revokes the other sessions at once, answers the caller with fresh working tokens, and records auth.password.change', async () => {
    const { user, org, partner } = await orgMember(t);
    const caller = await signIn(t, user.email);
    const other = await signIn(t, user.email);
    const callerOldRefresh = caller.refreshToken;
    const next = strongPassword();

    const res = await caller.post('/auth/change-password', { currentPassword: PASSWORD, newPassword: next });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ tokenType: 'Bearer', user: { id: user.id, orgId: org.id } });
    expect(caller.cookies.get(REFRESH_COOKIE)).not.toBe(callerOldRefresh);

    // The other session dies on its next request, access and refresh alike.
    expect((await other.me()).status).toBe(401);
    expect((await refresh(other)).status).toBe(401);
    // The caller's new credentials work; its previous refresh token does not.
    expect((await t.client().withToken(res.body.accessToken).me()).status).toBe(200);
    expect((await refresh(clientWithRefreshToken(t, callerOldRefresh))).status).toBe(401);
    expect((await refresh(caller)).status).toBe(200);
    expect((await caller.me()).status).toBe(200);

    expect(await loginStatus(user.email, PASSWORD)).toBe(401);
    expect(await loginStatus(user.email, next)).toBe(200);

    const [event] = await auditOf(t, 'auth.password.change', user.id);
    expect(event).toMatchObject({ result: 'success', actorEmail: user.email, orgId: org.id, partnerId: partner.id });
    const notice = await mail.waitFor(user.email, (m) => /password was changed/i.test(m.subject));
    expect(notice.text).toContain(t.deps.config.appUrl);
  });

  it('revokes the other sessions on every instance: the revocation lives in the database, not in a process', async () => {
    const { user } = await orgMember(t);
    const other = await signIn(t, user.email);
    const caller = await signIn(t, user.email);
    expect(
      (await caller.post('/auth/change-password', { currentPassword: PASSWORD, newPassword: strongPassword() })).status,
    ).toBe(200);
    const [row] = await t.deps.db
      .select()
      .from(sessions)
      .where(eq(sessions.id, String(JSON.parse(Buffer.from(other.token!.split('.')[1]!, 'base64url').toString()).sid)));
    expect(row).toMatchObject({ revokeReason: 'password_change' });
    expect((await other.me()).status).toBe(401);
  });
});

describe('change-password refuses a wrong current password with 400 invalid_credentials', () => {
  it('answers 400 (not 401: the bearer token is fine), changes nothing and ends no session', async () => {
    const { user } = await orgMember(t);
    const caller = await signIn(t, user.email);
    const other = await signIn(t, user.email);
    const res = await caller.post('/auth/change-password', {
      currentPassword: 'not the password 77',
      newPassword: strongPassword(),
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'invalid_credentials',
      error: expect.any(String),
      message: expect.any(String),
    });
    expect((await caller.me()).status).toBe(200);
    expect((await other.me()).status).toBe(200);
    expect(await loginStatus(user.email, PASSWORD)).toBe(200);
    expect(await auditOf(t, 'auth.password.change', user.id)).toHaveLength(0);
  });
});

describe("new passwords must be strong: 8..256 characters, zxcvbn score >= 3, not the email's local part", () => {
  it('refuses weak, too short, too long and email-containing passwords with 400 weak_password and feedback', async () => {
    const { user } = await orgMember(t, { email: `marguerite.lindqvist-${Date.now()}@example.test` });
    const caller = await signIn(t, user.email);
    const local = user.email.split('@')[0]!;
    const cases = [
      'password123', // common
      'qwertyuiop', // keyboard walk
      'Zx9!vQ2', // 7 characters
      `Ab3!${'x9Qz'.repeat(64)}`, // 260 characters
      `${local}-Ferrous!42`, // contains the local part of the email
    ];
    for (const newPassword of cases) {
      const res = await caller.post('/auth/change-password', { currentPassword: PASSWORD, newPassword });
      expect(res.status, newPassword.slice(0, 20)).toBe(400);
      expect(res.body.code, newPassword.slice(0, 20)).toBe('weak_password');
      expect(res.body.details?.feedback).toMatchObject({ suggestions: expect.any(Array) });
      expect(res.body.details.feedback.warning ?? res.body.details.feedback.suggestions[0]).toBeTruthy();
    }
    expect(await loginStatus(user.email, PASSWORD)).toBe(200);
    expect((await caller.me()).status).toBe(200);
  });

  it('accepts a strong password of 256 characters and refuses 257', async () => {
    const { user } = await orgMember(t);
    const caller = await signIn(t, user.email);
    const long = `Gx7!${Array.from({ length: 80 }, (_, i) => (i * 7919 + 104729).toString(36)).join('-')}`.slice(
      0,
      256,
    );
    expect(long).toHaveLength(256);
    const tooLong = await caller.post('/auth/change-password', { currentPassword: PASSWORD, newPassword: `${long}z` });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.code).toBe('weak_password');
    const res = await caller.post('/auth/change-password', { currentPassword: PASSWORD, newPassword: long });
    expect(res.status).toBe(200);
    expect(await loginStatus(user.email, long)).toBe(200);
  });
});

describe('passwords are hashed with argon2id off the event loop', () => {
  it('stores an argon2id hash with the OWASP parameters', async () => {
    const { user } = await orgMember(t);
    const caller = await signIn(t, user.email);
    const next = strongPassword();
    expect((await caller.post('/auth/change-password', { currentPassword: PASSWORD, newPassword: next })).status).toBe(
      200,
    );
    const [row] = await t.deps.db.select({ h: users.passwordHash }).from(users).where(eq(users.id, user.id));
    expect(row!.h).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(row!.h).not.toContain(next);
  });

  it('hashing and verifying leave the event loop free while they run', async () => {
    // A synchronous hash would finish before the setImmediate callback could run.
    let turned = false;
    const hashing = hashPassword(strongPassword());
    setImmediate(() => (turned = true));
    const h = await hashing;
    expect(turned).toBe(true);
    turned = false;
    const verifying = verifyPassword(h, 'some other password');
    setImmediate(() => (turned = true));
    expect(await verifying).toBe(false);
    expect(turned).toBe(true);
  });
});

describe('forgot-password answers 200 whatever the email, and mails a link only to real accounts', () => {
  it('answers the same 200 for an unknown email, a disabled and an invited user, and sends them nothing', async () => {
    const disabled = await orgMember(t, { status: 'disabled' });
    const invited = await orgMember(t, { status: 'invited' });
    const unknown = `nobody-${Date.now()}@example.test`;
    const answers = [];
    for (const email of [unknown, disabled.user.email, invited.user.email]) {
      const res = await t.client().post('/auth/forgot-password', { email });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true });
      answers.push(res.text);
    }
    await mailBarrier();
    expect(mail.countTo(unknown)).toBe(0);
    expect(mail.countTo(disabled.user.email)).toBe(0);
    expect(mail.countTo(invited.user.email)).toBe(0);
    const known = await orgMember(t);
    const res = await t.client().post('/auth/forgot-password', { email: known.user.email.toUpperCase() });
    expect(res.text).toBe(answers[0]);
  });

  it('mails an active user a link to APP_URL/reset-password?token=..., in plain text and HTML', async () => {
    const { user } = await orgMember(t);
    expect((await t.client().post('/auth/forgot-password', { email: user.email })).status).toBe(200);
    const m = await mail.waitFor(user.email, isResetMail);
    const token = linkToken(m);
    expect(m.text).toContain(`${t.deps.config.appUrl}/reset-password?token=${encodeURIComponent(token)}`);
    expect(m.raw).toMatch(/content-type: text\/html/i);
    expect(m.raw).toMatch(/content-type: text\/plain/i);
    expect(token.length).toBeGreaterThanOrEqual(32);
    // Stored only as a hash.
    const flows = await t.deps.db
      .select()
      .from(authFlows)
      .where(and(eq(authFlows.userId, user.id), eq(authFlows.kind, 'password_reset')));
    expect(JSON.stringify(flows)).not.toContain(token);
  });
});

describe('a reset link sets the password and ends every session', () => {
  it('sets the new password, revokes every session (access and refresh), and records auth.password.reset', async () => {
    const { user, org, partner } = await orgMember(t);
    const a = await signIn(t, user.email);
    const b = await signIn(t, user.email);
    const token = await requestResetLink(user.email);
    const next = strongPassword();
    const res = await t.client().post('/auth/reset-password', { token, newPassword: next });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    for (const s of [a, b]) {
      expect((await s.me()).status).toBe(401);
      expect((await refresh(s)).status).toBe(401);
    }
    expect(await loginStatus(user.email, PASSWORD)).toBe(401);
    expect(await loginStatus(user.email, next)).toBe(200);
    const [event] = await auditOf(t, 'auth.password.reset', user.id);
    expect(event).toMatchObject({ result: 'success', actorEmail: user.email, orgId: org.id, partnerId: partner.id });
    await mail.waitFor(user.email, (m) => /password was changed/i.test(m.subject));
  });

  it('a newer link replaces the older one', async () => {
    const { user } = await orgMember(t);
    const first = await requestResetLink(user.email);
    const second = await requestResetLink(user.email);
    const stale = await t.client().post('/auth/reset-password', { token: first, newPassword: strongPassword() });
    expect(stale.status).toBe(400);
    expect(stale.body.code).toBe('invalid_reset_token');
    expect(
      (await t.client().post('/auth/reset-password', { token: second, newPassword: strongPassword() })).status,
    ).toBe(200);
  });
});

describe('a reset link is single-use and lives one hour', () => {
  it('refuses the link the second time', async () => {
    const { user } = await orgMember(t);
    const token = await requestResetLink(user.email);
    const next = strongPassword();
    expect((await t.client().post('/auth/reset-password', { token, newPassword: next })).status).toBe(200);
    const again = await t.client().post('/auth/reset-password', { token, newPassword: strongPassword() });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe('invalid_reset_token');
    expect(await loginStatus(user.email, next)).toBe(200);
  });

  it('works at 59 minutes and is refused after 60', async () => {
    const early = await orgMember(t);
    const late = await orgMember(t);
    const earlyToken = await requestResetLink(early.user.email);
    const lateToken = await requestResetLink(late.user.email);
    let moved = 0;
    try {
      t.clock.advance(59 * 60 * 1000);
      moved += 59 * 60 * 1000;
      expect(
        (await t.client().post('/auth/reset-password', { token: earlyToken, newPassword: strongPassword() })).status,
      ).toBe(200);
      t.clock.advance(HOUR - moved + 1000);
      moved = HOUR + 1000;
      const expired = await t
        .client()
        .post('/auth/reset-password', { token: lateToken, newPassword: strongPassword() });
      expect(expired.status).toBe(400);
      expect(expired.body.code).toBe('invalid_reset_token');
    } finally {
      t.clock.advance(-moved);
    }
    expect(await loginStatus(late.user.email, PASSWORD)).toBe(200);
  });

  it('refuses a token that was never issued', async () => {
    const res = await t.client().post('/auth/reset-password', { token: 'x'.repeat(43), newPassword: strongPassword() });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_reset_token');
  });
});

describe('a weak password does not burn the reset link', () => {
  it('answers 400 weak_password with feedback, then the same link still works', async () => {
    const { user } = await orgMember(t);
    const a = await signIn(t, user.email);
    const token = await requestResetLink(user.email);
    const weak = await t.client().post('/auth/reset-password', { token, newPassword: 'password1' });
    expect(weak.status).toBe(400);
    expect(weak.body.code).toBe('weak_password');
    expect(weak.body.details.feedback).toBeDefined();
    expect((await a.me()).status).toBe(200); // nothing happened yet
    const next = strongPassword();
    expect((await t.client().post('/auth/reset-password', { token, newPassword: next })).status).toBe(200);
    expect(await loginStatus(user.email, next)).toBe(200);
  });
});

describe('two concurrent resets with one link: exactly one succeeds', () => {
  it("one 200, one 400 invalid_reset_token, and the winner's password is the one that works", async () => {
    const { user } = await orgMember(t);
    const token = await requestResetLink(user.email);
    const passwords = [strongPassword(), strongPassword()];
    const results = await Promise.all(
      passwords.map((newPassword) => t.client().post('/auth/reset-password', { token, newPassword })),
    );
    expect(statuses(results)).toEqual([200, 400]);
    const loser = results.find((r) => r.status === 400)!;
    expect(loser.body.code).toBe('invalid_reset_token');
    const winner = passwords[results.findIndex((r) => r.status === 200)]!;
    const other = passwords[results.findIndex((r) => r.status === 400)]!;
    expect(await loginStatus(user.email, winner)).toBe(200);
    expect(await loginStatus(user.email, other)).toBe(401);
    expect(await auditOf(t, 'auth.password.reset', user.id)).toHaveLength(1);
  });
});

import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogs } from '../../src/db/schema/index.js';
import { createInviteToken } from '../../src/modules/auth/invites.js';
import { ORG_ADMIN_ROLE_ID, SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import { addOrgMember, createOrg, createPartner, createUser, sessionFor } from '../support/fixtures.js';
import { linkToken, startMailCatcher, type CapturedMail, type MailCatcher } from '../support/smtp.js';
import {
  auditOf,
  CSRF_COOKIE,
  orgMember,
  PASSWORD,
  refresh,
  REFRESH_COOKIE,
  signIn,
  strongPassword,
} from './helpers.js';

let t: TestApp;
let quiet: TestApp;
let mail: MailCatcher;
const ORG_TECH = SYSTEM_ROLES[4].id;

beforeAll(async () => {
  mail = await startMailCatcher();
  [t, quiet] = await Promise.all([
    // The most talkative log level: whatever the app could ever log is in t.logs().
    startApp({
      SMTP_URL: mail.url,
      LOG_LEVEL: 'trace',
      RATE_LIMIT_LOGIN: '1000/900',
      RATE_LIMIT_FORGOT_PASSWORD: '1000/3600',
      ENABLE_REGISTRATION: 'true',
    }),
    startApp({ RATE_LIMIT_FORGOT_PASSWORD: '1000/3600' }), // no SMTP_URL
  ]);
});
afterAll(async () => {
  await t?.close();
  await quiet?.close();
  await mail?.close();
});

/** The HTML part of a captured mail, decoded. */
function htmlOf(m: CapturedMail): string {
  const boundary = /boundary="?([^";\r\n]+)"?/i.exec(m.raw)?.[1];
  expect(boundary, 'a multipart mail').toBeTruthy();
  const part = m.raw.split(`--${boundary}`).find((p) => /content-type: text\/html/i.test(p));
  expect(part, 'an HTML part').toBeTruthy();
  const [head = '', ...body] = part!.split(/\r?\n\r?\n/);
  const raw = body.join('\n\n').trim();
  if (/base64/i.test(head)) return Buffer.from(raw.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (/quoted-printable/i.test(head))
    return Buffer.from(
      raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
      'latin1',
    ).toString('utf8');
  return raw;
}

function expectBothParts(m: CapturedMail, link?: string) {
  expect(m.raw).toMatch(/content-type: text\/plain/i);
  const html = htmlOf(m);
  if (link) {
    expect(m.text).toContain(link);
    expect(html).toContain(`href="${link}"`);
  }
  return html;
}

describe('account mails go out over SMTP in plain text and HTML', () => {
  it('invitation (POST /users/invite): a 7-day link to APP_URL/accept-invite that works, tenant name escaped in the HTML', async () => {
    const partner = await createPartner(t);
    const org = await createOrg(t, partner.id, `Acme <b>Bold</b> ${Date.now()}`);
    const admin = await createUser(t, { password: PASSWORD, name: 'Ada Admin' });
    await addOrgMember(t, { orgId: org.id, userId: admin.id, roleId: ORG_ADMIN_ROLE_ID });
    const session = await sessionFor(t, admin.id, {
      scope: 'organization',
      orgId: org.id,
      partnerId: partner.id,
      roleId: ORG_ADMIN_ROLE_ID,
    });
    const email = `invitee-${Date.now()}@example.test`;
    const res = await t
      .client()
      .withToken(session.accessToken)
      .post('/users/invite', { email, name: 'Nina Newcomer', roleId: ORG_TECH });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ email, status: 'invited', inviteEmailSent: true });

    const m = await mail.waitFor(email, (x) => /invited/i.test(x.subject));
    const token = linkToken(m);
    const html = expectBothParts(m, `${t.deps.config.appUrl}/accept-invite?token=${encodeURIComponent(token)}`);
    expect(m.text).toMatch(/Ada Admin/);
    expect(m.text).toMatch(/valid for 7 days/);
    expect(html).toContain('Acme &lt;b&gt;Bold&lt;/b&gt;');
    expect(html).not.toContain('<b>Bold</b>');
    expect((await t.client().post('/auth/invite/preview', { token })).body).toMatchObject({ email, orgName: org.name });
    expect((await t.client().post('/auth/accept-invite', { token, password: strongPassword() })).status).toBe(200);
  });

  it('password reset and password changed', async () => {
    const { user } = await orgMember(t);
    await t.client().post('/auth/forgot-password', { email: user.email });
    const reset = await mail.waitFor(user.email, (m) => /reset your password/i.test(m.subject));
    const token = linkToken(reset);
    expectBothParts(reset, `${t.deps.config.appUrl}/reset-password?token=${encodeURIComponent(token)}`);
    expect((await t.client().post('/auth/reset-password', { token, newPassword: strongPassword() })).status).toBe(200);
    const changed = await mail.waitFor(user.email, (m) => /password was changed/i.test(m.subject));
    expectBothParts(changed, `${t.deps.config.appUrl}/forgot-password`);
  });
});

describe('without SMTP_URL the mail goes to the log', () => {
  it('writes the reset mail, link included, to the log, and the link works', async () => {
    const { user } = await orgMember(quiet);
    expect(quiet.deps.mailer.configured).toBe(false);
    expect((await quiet.client().post('/auth/forgot-password', { email: user.email })).status).toBe(200);
    let line: { mail?: { to: string; subject: string; text: string } } | undefined;
    for (let i = 0; i < 50 && !line; i++) {
      line = quiet
        .logs()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as typeof line)
        .find((l) => l?.mail?.to === user.email);
      if (!line) await new Promise((r) => setTimeout(r, 20));
    }
    expect(line!.mail!.subject).toMatch(/reset your password/i);
    const token = /[?&]token=([^\s&]+)/.exec(line!.mail!.text)![1]!;
    expect(
      (
        await quiet
          .client()
          .post('/auth/reset-password', { token: decodeURIComponent(token), newPassword: strongPassword() })
      ).status,
    ).toBe(200);
  });
});

describe('no password or token reaches the log or the audit trail', () => {
  it('after sign-in, failures, refresh, change, reset, invitation and registration, none of their secrets is in t.logs() or in audit details', async () => {
    const secrets: string[] = [PASSWORD];
    const { user, org, partner } = await orgMember(t);

    const wrong = `Wrong-${Date.now()}-Guess`;
    secrets.push(wrong);
    await t.client().post('/auth/login', { email: user.email, password: wrong });
    await t.client().post('/auth/login', { email: `ghost-${Date.now()}@example.test`, password: wrong });

    const api = await signIn(t, user.email);
    secrets.push(api.token!, api.refreshToken, api.cookies.get(CSRF_COOKIE)!);
    const old = api.refreshToken;
    expect((await refresh(api)).status).toBe(200);
    secrets.push(api.token!, api.cookies.get(REFRESH_COOKIE)!);
    // A replay, so that reuse detection writes its event too.
    const replay = t.client();
    replay.cookies.set(REFRESH_COOKIE, old);
    replay.cookies.set(CSRF_COOKIE, 'r'.repeat(32));
    expect((await refresh(replay, { 'user-agent': 'thief/1.0' })).status).toBe(401);

    const second = await signIn(t, user.email);
    const changed = strongPassword();
    secrets.push(changed, second.refreshToken);
    const change = await second.post('/auth/change-password', { currentPassword: PASSWORD, newPassword: changed });
    expect(change.status).toBe(200);
    secrets.push(change.body.accessToken, second.cookies.get(REFRESH_COOKIE)!);
    await second.post('/auth/change-password', { currentPassword: 'Not-The-Current-1', newPassword: strongPassword() });
    secrets.push('Not-The-Current-1');

    await t.client().post('/auth/forgot-password', { email: user.email });
    const resetToken = linkToken(await mail.waitFor(user.email, (m) => /reset your password/i.test(m.subject)));
    const resetTo = strongPassword();
    secrets.push(resetToken, resetTo);
    await t.client().post('/auth/reset-password', { token: resetToken, newPassword: 'password1' }); // weak: refused
    expect((await t.client().post('/auth/reset-password', { token: resetToken, newPassword: resetTo })).status).toBe(
      200,
    );

    const invited = await createUser(t, { status: 'invited' });
    await addOrgMember(t, { orgId: org.id, userId: invited.id, roleId: ORG_TECH });
    const inviteToken = await t.deps.db.transaction((tx) =>
      createInviteToken(
        tx,
        t.clock.now(),
        invited.id,
        { scope: 'organization', partnerId: partner.id, orgId: org.id, roleId: ORG_TECH },
        null,
      ),
    );
    const invitePassword = strongPassword();
    secrets.push(inviteToken, invitePassword);
    const accepted = await t.client().post('/auth/accept-invite', { token: inviteToken, password: invitePassword });
    expect(accepted.status).toBe(200);
    secrets.push(accepted.body.accessToken);

    const registerPassword = strongPassword();
    secrets.push(registerPassword);
    const registered = await t
      .client()
      .post('/auth/register', { email: `reg-${Date.now()}@example.test`, password: registerPassword, name: 'Reg' });
    expect(registered.status).toBe(201);
    secrets.push(registered.body.accessToken);

    await new Promise((r) => setTimeout(r, 200)); // background mail logging
    const logs = t.logs();
    expect(logs.length).toBeGreaterThan(1000); // the log did capture the requests
    const audit = JSON.stringify(await t.deps.db.select().from(auditLogs));
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThanOrEqual(8);
      expect(logs.includes(secret), `secret ${secret.slice(0, 6)}… in the log`).toBe(false);
      expect(audit.includes(secret), `secret ${secret.slice(0, 6)}… in the audit trail`).toBe(false);
    }
    expect(logs).not.toMatch(/authorization"?\s*:\s*"?bearer/i);
    expect(logs).not.toMatch(/service_refresh_token=/);
  });
});

describe('every sign-in event is in the audit trail with actor, tenant and result', () => {
  it('records user.login, auth.login.failed, user.logout, auth.password.change, auth.password.reset, auth.refresh.reuse_detected and user.invite.accept', async () => {
    const { user, org, partner } = await orgMember(t);
    const tenant = { partnerId: partner.id, orgId: org.id };
    const actor = { actorUserId: user.id, actorEmail: user.email };
    const ua = { 'user-agent': 'audit-probe/1.0' };

    await t.client().post('/auth/login', { email: user.email, password: 'definitely-wrong-1' }, { headers: ua });
    const api = t.client();
    const login = await api.post('/auth/login', { email: user.email, password: PASSWORD }, { headers: ua });
    api.token = login.body.accessToken;
    const old = api.cookies.get(REFRESH_COOKIE)!;
    await refresh(api);
    const replay = t.client();
    replay.cookies.set(REFRESH_COOKIE, old);
    replay.cookies.set(CSRF_COOKIE, 'q'.repeat(32));
    await refresh(replay, { 'user-agent': 'thief/1.0' }); // another client: a replay, not a twin of the same one

    const s2 = await signIn(t, user.email);
    const next = strongPassword();
    expect((await s2.post('/auth/change-password', { currentPassword: PASSWORD, newPassword: next })).status).toBe(200);
    await t.client().post('/auth/forgot-password', { email: user.email });
    const token = linkToken(await mail.waitFor(user.email, (m) => /reset your password/i.test(m.subject)));
    const resetTo = strongPassword();
    expect((await t.client().post('/auth/reset-password', { token, newPassword: resetTo })).status).toBe(200);
    const s3 = await signIn(t, user.email, resetTo);
    expect((await s3.post('/auth/logout')).status).toBe(200);

    const expectations: [string, object][] = [
      ['user.login', { result: 'success', ...actor, ...tenant, userAgent: 'audit-probe/1.0', ip: expect.any(String) }],
      [
        'auth.login.failed',
        { result: 'failure', ...actor, ...tenant, userAgent: 'audit-probe/1.0', details: { reason: 'wrong_password' } },
      ],
      ['auth.refresh.reuse_detected', { result: 'denied', ...actor, ...tenant }],
      ['auth.password.change', { result: 'success', ...actor, ...tenant }],
      ['auth.password.reset', { result: 'success', ...actor, ...tenant }],
      ['user.logout', { result: 'success', ...actor, ...tenant }],
    ];
    for (const [action, shape] of expectations) {
      const events = await auditOf(t, action, user.id);
      expect(events.length, action).toBeGreaterThanOrEqual(1);
      expect(events[0], action).toMatchObject(shape);
    }

    // An unknown email: the typed address as actor, no user, no tenant.
    const ghost = `ghost-${Date.now()}@example.test`;
    await t.client().post('/auth/login', { email: ghost, password: 'whatever-it-is-1' });
    const [unknown] = await t.deps.db.select().from(auditLogs).where(eq(auditLogs.actorEmail, ghost));
    expect(unknown).toMatchObject({
      action: 'auth.login.failed',
      result: 'failure',
      actorUserId: null,
      partnerId: null,
      orgId: null,
      details: { reason: 'unknown_email' },
    });

    // user.invite.accept carries the tenant of the accepted membership.
    const invited = await createUser(t, { status: 'invited' });
    await addOrgMember(t, { orgId: org.id, userId: invited.id, roleId: ORG_TECH });
    const inviteToken = await t.deps.db.transaction((tx) =>
      createInviteToken(
        tx,
        t.clock.now(),
        invited.id,
        { scope: 'organization', partnerId: partner.id, orgId: org.id, roleId: ORG_TECH },
        null,
      ),
    );
    expect(
      (await t.client().post('/auth/accept-invite', { token: inviteToken, password: strongPassword() })).status,
    ).toBe(200);
    const [acceptEvent] = await auditOf(t, 'user.invite.accept', invited.id);
    expect(acceptEvent).toMatchObject({
      result: 'success',
      actorUserId: invited.id,
      actorEmail: invited.email,
      ...tenant,
    });
  });
});

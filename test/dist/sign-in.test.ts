// What `npm start` serves signs people in: the built server (its own process, started with the start script's flags)
// driven over HTTP from the printed setup link through password, TOTP, refresh, logout, invitation, reset and
// sign-up, then the compiled CLI on the same database. Every answer that sets a cookie is here: a bundle that loses a
// package's named exports (cookie's stringifySetCookie did) fails this file, which is how CI proves it can.
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkToken, startMailCatcher, type MailCatcher } from '../support/smtp.js';
import {
  CSRF_COOKIE,
  enrolTotp,
  expectSignedIn,
  firstAdmin,
  PARTNER_TECHNICIAN_ROLE_ID,
  REFRESH_COOKIE,
  refresh,
  signInWithTotp,
  strongPassword,
  uniq,
  type Admin,
} from './flows.js';
import { startBuiltServer, tokenOf, type BuiltServer } from './server.js';

let server: BuiltServer;
let mail: MailCatcher;
let admin: Admin;
const tech = { email: `tech-${uniq()}@first.test`, password: strongPassword() };

beforeAll(async () => {
  mail = await startMailCatcher();
  server = await startBuiltServer({ SMTP_URL: mail.url, ENABLE_REGISTRATION: 'true' });
}, 180_000);
afterAll(async () => {
  await server?.close();
  await mail?.close();
});

describe('the first run through the printed setup link', () => {
  it("the link opens the console's setup page; the console and its assets are served", async () => {
    const link = server.setupLink()!;
    const page = await fetch(link, { headers: { accept: 'text/html' } }); // as a browser asks
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    const asset = /<script[^>]+src="([^"]+\.js)"/.exec(html)?.[1];
    expect(asset, html).toBeTruthy();
    const js = await fetch(new URL(asset!, server.baseUrl));
    expect(js.status).toBe(200);
    expect((await js.text()).length).toBeGreaterThan(1000);
    expect((await server.client().raw.get('/setup/status')).body).toEqual({ needed: true });
  });

  it('a weak password is refused by its strength (400 weak_password) without spending the link', async () => {
    const res = await server.client().raw.post('/setup', {
      token: tokenOf(server.setupLink()!),
      companyName: 'First MSP',
      email: `admin-${uniq()}@first.test`,
      password: 'password1234',
      name: 'First Admin',
    });
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe('weak_password');
    expect((await server.client().raw.get('/setup/status')).body).toEqual({ needed: true });
  });

  it('setup signs the first administrator in (tokens and both cookies) and TOTP enrolment answers a QR code', async () => {
    admin = await firstAdmin(server);
    const me = await admin.api.raw.get('/users/me');
    expect(me.status, me.text).toBe(200);
    expect(me.body).toMatchObject({ email: admin.email, scope: 'partner', mfaEnabled: true });
    expect(me.body.permissions).toContain('*:*');
    expect((await server.client().raw.get('/setup/status')).body).toEqual({ needed: false });
  });
});

describe('sessions of the built server', () => {
  it('password + TOTP sign-in; refresh rotates the refresh token; the rotated one is refused', async () => {
    const api = await signInWithTotp(server, admin.email, admin.password, admin.secret);
    expect(decodeJwt(api.token!)).toMatchObject({ mfa: true, partnerId: admin.partnerId });
    const before = api.cookies.get(REFRESH_COOKIE)!;
    const res = await refresh(api);
    expect(res.status, res.text).toBe(200);
    expect(api.cookies.get(REFRESH_COOKIE)).not.toBe(before);
    expect((await api.raw.get('/users/me')).status).toBe(200);
    const replay = server.client();
    replay.cookies.set(REFRESH_COOKIE, before);
    replay.cookies.set(CSRF_COOKIE, api.cookies.get(CSRF_COOKIE)!);
    expect((await refresh(replay)).status).toBe(401);
  });

  it('an invitation is mailed; accepting it signs in; password login, refresh and logout work', async () => {
    const inv = await admin.api.raw.post('/users/invite', {
      email: tech.email,
      name: 'Tech',
      roleId: PARTNER_TECHNICIAN_ROLE_ID,
      orgAccess: 'all',
    });
    expect(inv.status, inv.text).toBe(201);
    const invite = await mail.waitFor(tech.email, undefined, 15_000);
    expect(invite.text).toContain(`${server.baseUrl}/`);
    const preview = await server.client().raw.post('/auth/invite/preview', { token: linkToken(invite) });
    expect(preview.body).toMatchObject({ email: tech.email, partnerName: 'First MSP' });
    const accepting = server.client();
    expectSignedIn(
      accepting,
      await accepting.raw.post('/auth/accept-invite', { token: linkToken(invite), password: tech.password }),
    );

    const api = server.client();
    expectSignedIn(api, await api.raw.post('/auth/login', { email: tech.email, password: tech.password }));
    expect((await refresh(api)).status).toBe(200);
    const out = await api.raw.post('/auth/logout');
    expect(out.status, out.text).toBe(200);
    expect(api.cookies.has(REFRESH_COOKIE)).toBe(false);
    expect((await api.raw.get('/users/me')).status).toBe(401);
  });

  it('a password reset is mailed as a link; the new password signs in, the old one no longer does', async () => {
    expect((await server.client().raw.post('/auth/forgot-password', { email: tech.email })).status).toBe(200);
    const m = await mail.waitFor(tech.email, (x) => /reset your password/i.test(x.subject), 15_000);
    expect(m.text).toContain(`${server.baseUrl}/reset-password?token=`);
    const next = strongPassword();
    const reset = await server.client().raw.post('/auth/reset-password', { token: linkToken(m), newPassword: next });
    expect(reset.status, reset.text).toBe(200);
    expect((await server.client().raw.post('/auth/login', { email: tech.email, password: tech.password })).status).toBe(
      401,
    );
    tech.password = next;
    const api = server.client();
    expectSignedIn(api, await api.raw.post('/auth/login', { email: tech.email, password: next }));
  });

  it('sign-up (registration open) answers 201 with tokens and cookies; the new account enrols TOTP', async () => {
    const api = server.client();
    const res = await api.raw.post('/auth/register', {
      email: `new-${uniq()}@signup.test`,
      password: strongPassword(),
      name: 'New Person',
    });
    expect(res.status, res.text).toBe(201);
    expectSignedIn(api, res);
    await enrolTotp(api);
    expect((await api.raw.get('/users/me')).body).toMatchObject({ mfaEnabled: true });
  });
});

describe('the compiled CLI on the same database', () => {
  it('sets a password and verifies the audit trail; the restarted server signs in with the new password', async () => {
    await server.stop(); // on PGlite one process at a time holds the data directory
    const pw = strongPassword();
    const set = await server.cli(['users', 'reset-password', '--email', tech.email, '--password-env', 'NEW_PW', '--json'], {
      NEW_PW: pw,
    });
    expect(set.code, set.stderr).toBe(0);
    const verify = await server.cli(['audit', 'verify', '--json']);
    expect(verify.code, verify.stderr + verify.stdout).toBe(0);
    await server.restart();
    expect(server.setupLink()).toBeNull(); // a partner exists: no new link is printed
    const api = server.client();
    expectSignedIn(api, await api.raw.post('/auth/login', { email: tech.email, password: pw }));
  }, 180_000);
});

// Proven addresses, as an attacker with a tenant and a SCIM token of their own acts: an address is the key to an
// account everywhere (sign-in, reset links, invitations), so it moves only when the new address opens a mailed link,
// and a SCIM token moves it only while the account is that token's tenant's alone. An account whose address nobody
// proved says so (emailVerified false) until a mailed link is opened.
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authFlows, users } from '../../src/db/schema/index.js';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import type { ApiClient } from '../support/client.js';
import { proveDomain } from '../support/dns.js';
import { addOrgMember, addPartnerMember, createUser, partnerAdmin, sessionFor } from '../support/fixtures.js';
import { callbackFor, runSsoLogin, startOidcProvider, type TestIdp } from '../support/oidc.js';
import { exchange, idpUser, orgWithProvider, ORG_TECHNICIAN_ROLE_ID } from '../sso/helpers.js';
import { type CapturedMail, linkToken, type MailCatcher, startMailCatcher } from '../support/smtp.js';
import { expectScimError, issueScimToken, PATCH_OP, ScimClient } from '../support/scim.js';

const [, PARTNER_TECH] = SYSTEM_ROLES.map((r) => r.id as string) as [string, string];
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const PASSWORD = 'Glacier-7f3a9c-Saffron!';

let t: TestApp;
let mail: MailCatcher;
let attacker: Awaited<ReturnType<typeof partnerAdmin>>;
let victimPartner: Awaited<ReturnType<typeof partnerAdmin>>;
let scim: ScimClient;
let idp: TestIdp;
beforeAll(async () => {
  mail = await startMailCatcher();
  t = await startApp({
    SMTP_URL: mail.url,
    ENABLE_REGISTRATION: 'true',
    RATE_LIMIT_FORGOT_PASSWORD: '1000/3600',
    SSO_ALLOW_INSECURE_ISSUERS: 'true',
  });
  idp = await startOidcProvider({ redirectUris: [callbackFor(t.baseUrl)] });
  attacker = await partnerAdmin(t);
  victimPartner = await partnerAdmin(t);
  const tok = await issueScimToken(attacker.api, { defaultRoleId: PARTNER_TECH, sendInvitations: false });
  scim = new ScimClient(t.baseUrl, tok.token);
}, 60_000);
afterAll(async () => {
  await idp?.close();
  await t?.close();
  await mail?.close();
});

const address = (tag: string, domain = 'example.test') => `${tag}-${randomBytes(4).toString('hex')}@${domain}`;
const account = async (id: string) => (await t.deps.db.select().from(users).where(eq(users.id, id)))[0]!;
const accountByAddress = async (email: string) =>
  (await t.deps.db.select().from(users).where(eq(users.email, email)))[0];

/** Provisions an account through SCIM (userName only when `emails` is false) and answers its resource and account. */
async function provision(email: string, withEmails = true) {
  const created = await scim.post('/Users', {
    schemas: [USER],
    userName: email,
    ...(withEmails ? { emails: [{ value: email, type: 'work', primary: true }] } : {}),
    name: { givenName: 'Pat', familyName: 'Doe' },
    active: true,
  });
  expect(created.status, created.text).toBe(201);
  const user = await accountByAddress(email);
  return { scimId: created.body.id as string, userId: user!.id };
}

const renameByEmails = (scimId: string, to: string) =>
  scim.patch(`/Users/${scimId}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'replace', path: 'emails[type eq "work"].value', value: to }],
  });
const renameByUserName = (scimId: string, to: string) =>
  scim.patch(`/Users/${scimId}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'userName', value: to }] });

const mailsTo = (to: string) => mail.messages.filter((m) => m.to.includes(to.toLowerCase()));
const proofMailTo = (to: string) => mail.waitFor(to, (m: CapturedMail) => /verify-email\?token=/.test(m.text));
const confirm = (token: string) => t.client().post('/auth/verify-email', { token });

describe('a SCIM token cannot re-address an account that another tenant shares', () => {
  it('after the account joined another partner, renaming it by emails or by userName is refused and nothing changes', async () => {
    const victim = address('victim');
    const { scimId, userId } = await provision(victim);
    // The account joins the victim's partner through that partner's own invitation.
    const joined = await victimPartner.api.post('/users/invite', {
      email: victim,
      name: 'Vic Tim',
      roleId: PARTNER_TECH,
    });
    expect(joined.status, joined.text).toBe(201);
    expect(joined.body.id).toBe(userId);
    const before = await account(userId);

    const evil = address('attacker', 'evil.test');
    for (const res of [
      await renameByEmails(scimId, evil),
      await scim.put(`/Users/${scimId}`, {
        schemas: [USER],
        userName: evil,
        emails: [{ value: evil, type: 'work', primary: true }],
      }),
    ]) {
      expectScimError(res, 403);
      expect(res.body.code).toBe('account_outside_authority');
    }
    expect(await account(userId)).toMatchObject({ email: before.email, updatedAt: before.updatedAt });
    expect((await scim.get(`/Users/${scimId}`)).body.userName).toBe(victim);

    // "Forgot password" for the attacker's address reaches nobody: the address never became the account's.
    const forgot = await t.client().post('/auth/forgot-password', { email: evil });
    expect(forgot.status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect(mailsTo(evil)).toEqual([]);
  });

  it('renaming via userName alone (no emails) is refused the same way', async () => {
    const victim = address('victim-un');
    const { scimId, userId } = await provision(victim, false);
    const joined = await victimPartner.api.post('/users/invite', {
      email: victim,
      name: 'Vic Tim',
      roleId: PARTNER_TECH,
    });
    expect(joined.status, joined.text).toBe(201);
    const res = await renameByUserName(scimId, address('attacker-un', 'evil.test'));
    expectScimError(res, 403);
    expect(res.body.code).toBe('account_outside_authority');
    expect((await account(userId)).email).toBe(victim);
  });
});

describe('a SCIM rename of an account only in its tenant waits for the new address', () => {
  it('mails the new address, tells the old one, and keeps the login until the link is opened', async () => {
    const old = address('pat');
    const next = address('pat-new');
    const { scimId, userId } = await provision(old);
    const res = await renameByEmails(scimId, next);
    expect(res.status, res.text).toBe(200);
    expect((await account(userId)).email).toBe(old);
    const proof = await proofMailTo(next);
    const notice = await mail.waitFor(old, (m) => m.text.includes(next));
    expect(notice.text).not.toMatch(/token=/);
    // The administrator still sees the old address as the login.
    expect((await attacker.api.get(`/users/${userId}`)).body).toMatchObject({ email: old, emailVerified: false });

    const done = await confirm(linkToken(proof));
    expect(done.status, done.text).toBe(200);
    expect(done.body).toEqual({ email: next, emailVerified: true, changed: true });
    expect(await account(userId)).toMatchObject({ email: next, emailVerified: true });
  });

  it('repeating the same write while the link is live mails nothing new', async () => {
    const old = address('rep');
    const next = address('rep-new');
    const { scimId } = await provision(old);
    expect((await renameByEmails(scimId, next)).status).toBe(200);
    await proofMailTo(next);
    const put = await scim.put(`/Users/${scimId}`, {
      schemas: [USER],
      userName: old,
      emails: [{ value: next, type: 'work', primary: true }],
    });
    expect(put.status, put.text).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect(mailsTo(next)).toHaveLength(1);
  });

  it("an address provisioned early and renamed to a victim's future address does not capture the victim's invitation", async () => {
    const decoy = address('decoy', 'evil.test');
    const future = address('newhire', 'victim.test');
    const { scimId, userId } = await provision(decoy);
    expect((await renameByEmails(scimId, future)).status).toBe(200);
    // The victim's partner invites its new hire: a new account, not the attacker's.
    const invited = await victimPartner.api.post('/users/invite', {
      email: future,
      name: 'New Hire',
      roleId: PARTNER_TECH,
    });
    expect(invited.status, invited.text).toBe(201);
    expect(invited.body.id).not.toBe(userId);
    expect((await account(userId)).email).toBe(decoy);
    // The pending link can no longer move the decoy onto the taken address.
    const stale = await confirm(linkToken(await proofMailTo(future)));
    expect(stale.status, stale.text).toBe(409);
    expect(stale.body.code).toBe('email_taken');
    expect((await account(userId)).email).toBe(decoy);
  });
});

describe('an address nobody proved is unverified until its link is opened; the link works once', () => {
  it('self-registration → unverified; the link → verified; the link again → 400; send again → nothing sent', async () => {
    const email = address('self');
    const reg = await t.client().post('/auth/register', { email, password: PASSWORD, name: 'Self Made' });
    expect(reg.status, reg.text).toBe(201);
    expect(reg.body.user.emailVerified).toBe(false);
    const api = t.client().withToken(reg.body.accessToken);
    expect((await api.get('/auth/me')).body.emailVerified).toBe(false);

    const sent = await api.post('/auth/verify-email/send', {});
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body).toEqual({ sent: true });
    const token = linkToken(await proofMailTo(email));
    const ok = await confirm(token);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toEqual({ email, emailVerified: true, changed: false });
    expect((await api.get('/auth/me')).body.emailVerified).toBe(true);
    expect((await api.get('/users/me')).body.emailVerified).toBe(true);

    const again = await confirm(token);
    expect(again.status).toBe(400);
    expect(again.body.code).toBe('verification_invalid');
    const forged = await confirm(randomBytes(24).toString('base64url'));
    expect(forged.body.code).toBe('verification_invalid');
    const resend = await api.post('/auth/verify-email/send', {});
    expect(resend.status).toBe(200);
    expect(resend.body).toEqual({ sent: false });
  });

  it('an expired link is refused', async () => {
    const email = address('late');
    const reg = await t.client().post('/auth/register', { email, password: PASSWORD, name: 'Late Comer' });
    const api = t.client().withToken(reg.body.accessToken);
    expect((await api.post('/auth/verify-email/send', {})).status).toBe(200);
    const token = linkToken(await proofMailTo(email));
    await t.deps.db
      .update(authFlows)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(authFlows.userId, reg.body.user.id));
    const res = await confirm(token);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('verification_invalid');
    expect((await account(reg.body.user.id)).emailVerified).toBe(false);
  });

  it('SCIM provisioning is unverified, except in a domain the token’s tenant proved', async () => {
    const { userId: loose } = await provision(address('loose'));
    expect((await account(loose)).emailVerified).toBe(false);
    const domain = `proof-${randomBytes(4).toString('hex')}.test`;
    await proveDomain(attacker.api, domain);
    const { userId: proven } = await provision(address('staff', domain));
    expect((await account(proven)).emailVerified).toBe(true);
  });
});

describe('an administrator’s or the user’s own change of address needs the new address’s proof', () => {
  async function member() {
    // A member of this partner only (joined and accepted), so the partner's admin has authority over the account.
    const user = await createUser(t, { password: PASSWORD, mfaEnabled: true });
    await addPartnerMember(t, { partnerId: attacker.partner.id, userId: user.id, roleId: PARTNER_TECH });
    return user;
  }

  it('PATCH /users/:id { email } leaves the login as it is until the new address opens its link', async () => {
    const user = await member();
    const next = address('moved');
    const res = await attacker.api.patch(`/users/${user.id}`, { email: next });
    expect(res.status, res.text).toBe(200);
    expect(res.body.email).toBe(user.email);
    await mail.waitFor(user.email, (m) => m.text.includes(next));
    const login = await t.client().post('/auth/login', { email: next, password: PASSWORD });
    expect(login.status).toBe(401);
    expect((await confirm(linkToken(await proofMailTo(next)))).status).toBe(200);
    expect((await account(user.id)).email).toBe(next);
  });

  it('an administrator of another partner cannot ask for it at all', async () => {
    const user = await member();
    const res = await victimPartner.api.patch(`/users/${user.id}`, { email: address('stolen', 'evil.test') });
    expect([403, 404]).toContain(res.status);
    expect(await t.deps.db.select().from(authFlows).where(eq(authFlows.userId, user.id))).toHaveLength(0);
  });

  it('an administrator’s change whose link opens after the account joined another partner is refused', async () => {
    const user = await member();
    const next = address('moved-later');
    expect((await attacker.api.patch(`/users/${user.id}`, { email: next })).status).toBe(200);
    const token = linkToken(await proofMailTo(next));
    // Meanwhile the account joins another partner: the requesting admin no longer speaks for all of it.
    await addPartnerMember(t, { partnerId: victimPartner.partner.id, userId: user.id, roleId: PARTNER_TECH });
    const res = await confirm(token);
    expect(res.status, res.text).toBe(403);
    expect(res.body.code).toBe('account_outside_authority');
    expect((await account(user.id)).email).toBe(user.email);
  });

  it('PATCH /users/me { email } shows the change pending at GET /auth/verify-email', async () => {
    const user = await member();
    const session = await sessionFor(
      t,
      user.id,
      { scope: 'partner', partnerId: attacker.partner.id, roleId: PARTNER_TECH },
      true,
    );
    const api = t.client().withToken(session.accessToken);
    const next = address('mine');
    const res = await api.patch('/users/me', { email: next });
    expect(res.status, res.text).toBe(200);
    expect(res.body.email).toBe(user.email);
    const status = await api.get('/auth/verify-email');
    expect(status.body).toMatchObject({ email: user.email, pendingEmail: next });
    await proofMailTo(next);
  });
});

describe('two changes to the same address confirmed at once: one wins, the other is told, no 500', () => {
  it('answers 200 and 409 email_taken', async () => {
    const target = address('contested');
    const apis: ApiClient[] = [];
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const user = await createUser(t, { password: PASSWORD });
      const session = await sessionFor(t, user.id, { scope: null });
      const api = t.client().withToken(session.accessToken);
      expect((await api.patch('/users/me', { email: target })).status).toBe(200);
      apis.push(api);
      ids.push(user.id);
    }
    await mail.waitFor(target, () => mailsTo(target).length >= 2);
    const tokens = mailsTo(target).map(linkToken);
    expect(tokens).toHaveLength(2);
    const results = await Promise.all(tokens.map(confirm));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(results.find((r) => r.status === 409)!.body.code).toBe('email_taken');
    const owners = (await Promise.all(ids.map(account))).filter((u) => u.email === target);
    expect(owners).toHaveLength(1);
  });
});

describe('a sign-in through an identity provider of the tenant that proved the domain proves the address', () => {
  it('an unverified member of that organisation signs in by SSO and is verified from then on', async () => {
    const s = await orgWithProvider(t, idp);
    const user = await createUser(t, { email: address('sso', s.domain), emailVerified: false });
    await addOrgMember(t, { orgId: s.org.id, userId: user.id, roleId: ORG_TECHNICIAN_ROLE_ID });
    expect((await account(user.id)).emailVerified).toBe(false);
    const r = await runSsoLogin(t, s.org.id, { idp, user: idpUser(user.email) });
    expect(r.error).toBeNull();
    const res = await exchange(t, r.ssoCode!);
    expect(res.status, res.text).toBe(200);
    expect(res.body.user.emailVerified).toBe(true);
    expect((await account(user.id)).emailVerified).toBe(true);
  });
});

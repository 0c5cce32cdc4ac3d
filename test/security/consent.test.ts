// Consent to a membership, as an attacker with a tenant of their own acts: an invitation, SCIM provisioning or SSO
// auto-provisioning that names an existing account only offers it a membership (pending). Until the account accepts,
// the membership grants nothing, and the inviting tenant sees only { id, email, status, invitedAt } of the account
// and may administer nothing of it but its own offer.
import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { organizationUsers, partnerUsers, users } from '../../src/db/schema/index.js';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import type { ApiClient, ApiResponse } from '../support/client.js';
import { proveDomain } from '../support/dns.js';
import {
  auditRecords,
  createPartner,
  createUser,
  partnerAdmin,
  sessionFor,
  signedInPartnerMember,
} from '../support/fixtures.js';
import { callbackFor, runSsoLogin, startOidcProvider, type TestIdp } from '../support/oidc.js';
import { issueScimToken, ScimClient } from '../support/scim.js';
import { linkToken, type MailCatcher, startMailCatcher } from '../support/smtp.js';
import { createActiveProvider, freshDomain, idpUser, tenant } from '../sso/helpers.js';

const [, PARTNER_TECH, , , ORG_TECH] = SYSTEM_ROLES.map((r) => r.id as string) as [
  string,
  string,
  string,
  string,
  string,
];
const PASSWORD = 'correct-horse-battery-staple-42';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';

let t: TestApp;
let mail: MailCatcher;
let idp: TestIdp;
beforeAll(async () => {
  mail = await startMailCatcher();
  t = await startApp({ SMTP_URL: mail.url, SSO_ALLOW_INSECURE_ISSUERS: 'true', RATE_LIMIT_LOGIN: '1000/900' });
  idp = await startOidcProvider({ redirectUris: [callbackFor(t.baseUrl)] });
});
afterAll(async () => {
  await t?.close();
  await mail?.close();
  await idp?.close();
});

const address = (tag: string) => `${tag}-${randomBytes(4).toString('hex')}@example.test`;
const offerMail = (to: string, not: string[] = []) =>
  mail.waitFor(to, (m) => m.text.includes('/invitations?token=') && not.every((tok) => !m.text.includes(tok)));

const expectRefused = (r: ApiResponse, what: string) => {
  expect(r.status, `${what}: ${r.text}`).toBe(403);
  expect(r.body.code, what).toBe('account_outside_authority');
};

/** Partner A's member with a password (no second factor), signed in to partner A. */
async function memberOfA(opts: { email?: string } = {}) {
  const a = await createPartner(t);
  const m = await signedInPartnerMember(t, a.id, {
    roleId: PARTNER_TECH,
    password: PASSWORD,
    mfaEnabled: false,
    email: opts.email,
    name: 'Alice Private',
  });
  return { partner: a, ...m };
}

const login = (email: string) => t.client().post('/auth/login', { email, password: PASSWORD });

async function membershipRows(userId: string) {
  const p = await t.deps.db
    .select({ partnerId: partnerUsers.partnerId, status: partnerUsers.status })
    .from(partnerUsers)
    .where(eq(partnerUsers.userId, userId));
  const o = await t.deps.db
    .select({ orgId: organizationUsers.orgId, status: organizationUsers.status })
    .from(organizationUsers)
    .where(eq(organizationUsers.userId, userId));
  return [...p, ...o];
}

async function pendingOffers(api: ApiClient) {
  const r = await api.get('/auth/invitations');
  expect(r.status, r.text).toBe(200);
  return r.body.data;
}

describe('partner B invites partner A’s member: the membership is pending and grants B nothing over the account', () => {
  it('B’s invitation answers pending; B sees only id, email, status and invitedAt of the account', async () => {
    const alice = await memberOfA();
    const mallory = await partnerAdmin(t);
    const inv = await mallory.api.post('/users/invite', {
      email: alice.user.email,
      name: 'Name Mallory Gave',
      roleId: PARTNER_TECH,
    });
    expect(inv.status, inv.text).toBe(201);
    expect(inv.body).toMatchObject({ id: alice.user.id, status: 'pending', name: 'Name Mallory Gave' });

    const one = await mallory.api.get(`/users/${alice.user.id}`);
    expect(one.status, one.text).toBe(200);
    expect(Object.keys(one.body).sort()).toEqual(['email', 'id', 'invitedAt', 'status']);
    expect(one.body).toMatchObject({ id: alice.user.id, status: 'pending' });
    const listed = (await mallory.api.get('/users')).body.data.find((u: { id: string }) => u.id === alice.user.id);
    expect(Object.keys(listed ?? {}).sort()).toEqual(['email', 'id', 'invitedAt', 'status']);
    // Searching by the account's own name finds nothing: the name is not B's to know.
    expect((await mallory.api.get('/users', { query: { search: 'Alice Private' } })).body.data).toEqual([]);
  });

  it('B cannot reset the MFA, end the sessions, rename, disable, re-role or read the identities of the account', async () => {
    const alice = await memberOfA();
    const mallory = await partnerAdmin(t);
    await mallory.api.post('/users/invite', { email: alice.user.email, name: 'Alice', roleId: PARTNER_TECH });
    const id = alice.user.id;
    const before = (await t.deps.db.select().from(users).where(eq(users.id, id)))[0];
    expectRefused(await mallory.api.post(`/users/${id}/mfa/reset`), 'MFA reset');
    expectRefused(await mallory.api.patch(`/users/${id}`, { name: 'Renamed' }), 'rename');
    expectRefused(await mallory.api.patch(`/users/${id}`, { status: 'disabled' }), 'disable');
    expectRefused(await mallory.api.get(`/users/${id}/sessions`), 'list sessions');
    expectRefused(await mallory.api.delete(`/users/${id}/sessions/${alice.session.sessionId}`), 'end a session');
    expectRefused(await mallory.api.post(`/users/${id}/role`, { roleId: PARTNER_TECH }), 'assign a role');
    expectRefused(await mallory.api.get('/sso/identities', { query: { userId: id } }), 'linked identities');
    expect((await t.deps.db.select().from(users).where(eq(users.id, id)))[0]).toEqual(before);
    // Alice’s session in partner A still works.
    expect((await alice.api.get('/users/me')).status).toBe(200);
    // What is B's own still works: re-sending and withdrawing its offer.
    expect((await mallory.api.post('/users/resend-invite', { userId: id })).status).toBe(200);
    expect((await mallory.api.delete(`/users/${id}`)).status).toBe(200);
    expect(await pendingOffers(alice.api)).toEqual([]);
  });

  it('until accepted, sign-in, /auth/memberships and switch-context know only partner A', async () => {
    const alice = await memberOfA();
    const mallory = await partnerAdmin(t);
    await mallory.api.post('/users/invite', { email: alice.user.email, name: 'Alice', roleId: PARTNER_TECH });
    const signIn = await login(alice.user.email);
    expect(signIn.status, signIn.text).toBe(200);
    const fresh = t.client().withToken(signIn.body.accessToken);
    expect((await fresh.get('/users/me')).body).toMatchObject({ partnerId: alice.partner.id });
    const mine = (await fresh.get('/auth/memberships')).body.data as { partnerId: string }[];
    expect(mine.map((m) => m.partnerId)).toEqual([alice.partner.id]);
    const sw = await fresh.post('/auth/switch-context', { partnerId: mallory.partner.id });
    expect(sw.status, sw.text).toBe(404);
  });

  it('A’s member sees the offer, accepts it, and only then acts in partner B', async () => {
    const alice = await memberOfA();
    const mallory = await partnerAdmin(t);
    await mallory.api.post('/users/invite', { email: alice.user.email, name: 'Alice', roleId: PARTNER_TECH });
    const [offer, ...rest] = await pendingOffers(alice.api);
    expect(rest).toEqual([]);
    expect(offer).toMatchObject({
      kind: 'partner',
      partnerId: mallory.partner.id,
      orgId: null,
      tenantName: mallory.partner.name,
      roleId: PARTNER_TECH,
      roleName: expect.any(String),
      invitedAt: expect.any(String),
      invitedBy: mallory.user.name,
    });
    const ok = await alice.api.post(`/auth/invitations/${offer!.id}/accept`);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ id: offer!.id, status: 'active', partnerId: mallory.partner.id });
    expect(await pendingOffers(alice.api)).toEqual([]);
    const sw = await alice.api.post('/auth/switch-context', { partnerId: mallory.partner.id });
    expect(sw.status, sw.text).toBe(200);
    expect((await mallory.api.get(`/users/${alice.user.id}`)).body).toMatchObject({ name: 'Alice Private' });
    // Accepted once: the same id answers 404 now.
    const again = await alice.api.post(`/auth/invitations/${offer!.id}/accept`);
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('invitation_not_found');
  });

  it('declining deletes the pending membership; B no longer lists the account', async () => {
    const alice = await memberOfA();
    const mallory = await partnerAdmin(t);
    await mallory.api.post('/users/invite', { email: alice.user.email, name: 'Alice', roleId: PARTNER_TECH });
    const [offer] = await pendingOffers(alice.api);
    const no = await alice.api.post(`/auth/invitations/${offer!.id}/decline`);
    expect(no.status, no.text).toBe(200);
    expect(await pendingOffers(alice.api)).toEqual([]);
    expect((await mallory.api.get(`/users/${alice.user.id}`)).status).toBe(404);
    expect(await membershipRows(alice.user.id)).toEqual([{ partnerId: alice.partner.id, status: 'active' }]);
    expect((await auditRecords(t, 'membership.invitation.decline', alice.user.id)).length).toBe(1);
  });

  it('someone else’s invitation id, or an unknown one, is 404 invitation_not_found and changes nothing', async () => {
    const alice = await memberOfA();
    const eve = await memberOfA();
    const mallory = await partnerAdmin(t);
    await mallory.api.post('/users/invite', { email: alice.user.email, name: 'Alice', roleId: PARTNER_TECH });
    const [offer] = await pendingOffers(alice.api);
    for (const r of [
      await eve.api.post(`/auth/invitations/${offer!.id}/accept`),
      await eve.api.post(`/auth/invitations/${offer!.id}/decline`),
    ]) {
      expect(r.status, r.text).toBe(404);
      expect(r.body.code).toBe('invitation_not_found');
    }
    const unknown = await alice.api.post('/auth/invitations/3f1c5e0e-0000-4000-8000-000000000000/accept');
    expect(unknown.body.code).toBe('invitation_not_found');
    expect(await pendingOffers(alice.api)).toHaveLength(1);
  });

  it('inviting the pending address again refreshes invitedAt and mails a new link (the old one stops working)', async () => {
    const alice = await memberOfA();
    const mallory = await partnerAdmin(t);
    await mallory.api.post('/users/invite', { email: alice.user.email, name: 'Alice', roleId: PARTNER_TECH });
    const first = linkToken(await offerMail(alice.user.email));
    const [before] = await pendingOffers(alice.api);
    const again = await mallory.api.post('/users/invite', {
      email: alice.user.email,
      name: 'Alice',
      roleId: PARTNER_TECH,
    });
    expect(again.status, again.text).toBe(201);
    const second = linkToken(await offerMail(alice.user.email, [encodeURIComponent(first)]));
    const [after, ...rest] = await pendingOffers(alice.api);
    expect(rest).toEqual([]);
    expect(after!.id).toBe(before!.id);
    expect(new Date(after!.invitedAt!).getTime()).toBeGreaterThanOrEqual(new Date(before!.invitedAt!).getTime());
    const old = await alice.api.post('/auth/invitations/accept-link', { token: first });
    expect(old.body.code).toBe('invitation_not_found');
    expect((await alice.api.post('/auth/invitations/accept-link', { token: second })).status).toBe(200);
  });
});

describe('a squatter who registered someone’s address unproven cannot take the role', () => {
  it('accepting by id is 403 email_unverified; a guessed or another account’s link is 404', async () => {
    const to = address('squatted');
    const squatter = await createUser(t, { email: to, password: PASSWORD, emailVerified: false });
    const session = await sessionFor(t, squatter.id, { scope: null });
    const api = t.client().withToken(session.accessToken);
    const mallory = await partnerAdmin(t);
    await mallory.api.post('/users/invite', { email: to, name: 'Victim', roleId: PARTNER_TECH });
    const [offer] = await pendingOffers(api);
    const r = await api.post(`/auth/invitations/${offer!.id}/accept`);
    expect(r.status, r.text).toBe(403);
    expect(r.body.code).toBe('email_unverified');
    expect(await membershipRows(squatter.id)).toEqual([{ partnerId: mallory.partner.id, status: 'pending' }]);
    const guessed = await api.post('/auth/invitations/accept-link', { token: randomBytes(32).toString('base64url') });
    expect(guessed.body.code).toBe('invitation_not_found');

    // Another account's mailed link does nothing for the squatter, and stays usable by its owner.
    const alice = await memberOfA();
    await mallory.api.post('/users/invite', { email: alice.user.email, name: 'Alice', roleId: PARTNER_TECH });
    const token = linkToken(await offerMail(alice.user.email));
    expect((await api.post('/auth/invitations/accept-link', { token })).body.code).toBe('invitation_not_found');
    expect((await alice.api.post('/auth/invitations/accept-link', { token })).status).toBe(200);
  });

  it('the address’s owner, signed in, accepts by the mailed link: that proves the address; the link works once', async () => {
    const to = address('unproven');
    const owner = await createUser(t, { email: to, password: PASSWORD, emailVerified: false });
    const api = t.client().withToken((await sessionFor(t, owner.id, { scope: null })).accessToken);
    const mallory = await partnerAdmin(t);
    await mallory.api.post('/users/invite', { email: to, name: 'Owner', roleId: PARTNER_TECH });
    const token = linkToken(await offerMail(to));
    const ok = await api.post('/auth/invitations/accept-link', { token });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ status: 'active', partnerId: mallory.partner.id });
    expect((await t.deps.db.select().from(users).where(eq(users.id, owner.id)))[0]!.emailVerified).toBe(true);
    expect(await membershipRows(owner.id)).toEqual([{ partnerId: mallory.partner.id, status: 'active' }]);
    expect((await api.post('/auth/invitations/accept-link', { token })).body.code).toBe('invitation_not_found');
  });
});

describe('SCIM provisioning of an existing account offers the membership', () => {
  it('B’s SCIM token creates A’s member: pending, mailed, listed for the account, nothing granted', async () => {
    const alice = await memberOfA();
    const mallory = await partnerAdmin(t);
    const tok = await issueScimToken(mallory.api, { defaultRoleId: PARTNER_TECH });
    const scim = new ScimClient(t.baseUrl, tok.token);
    const created = await scim.post('/Users', { schemas: [USER], userName: alice.user.email });
    expect(created.status, created.text).toBe(201);
    expect(await membershipRows(alice.user.id)).toContainEqual({ partnerId: mallory.partner.id, status: 'pending' });
    const seen = (await mallory.api.get(`/users/${alice.user.id}`)).body;
    expect(Object.keys(seen).sort()).toEqual(['email', 'id', 'invitedAt', 'status']);
    expectRefused(await mallory.api.post(`/users/${alice.user.id}/mfa/reset`), 'MFA reset');
    await offerMail(alice.user.email);
    expect((await pendingOffers(alice.api)).map((o) => o.partnerId)).toEqual([mallory.partner.id]);
    const mine = (await alice.api.get('/auth/memberships')).body.data as { partnerId: string }[];
    expect(mine.map((m) => m.partnerId)).toEqual([alice.partner.id]);
  });
});

describe('SSO auto-provisioning of an existing account offers the membership', () => {
  it('B’s organisation proves the domain and auto-provisions: the sign-in ends in invitation_pending, pending once', async () => {
    const b = await tenant(t);
    const domain = freshDomain();
    await proveDomain(b.api, domain, b.org.id);
    await createActiveProvider(b.api, idp, b.org.id, {
      allowedDomains: domain,
      autoProvision: true,
      defaultRoleId: ORG_TECH,
    });
    const alice = await memberOfA({ email: `alice-${randomBytes(3).toString('hex')}@${domain}` });
    const who = idpUser(alice.user.email);
    const first = await runSsoLogin(t, b.org.id, { idp, user: who });
    expect(first.location).toBe(`${t.deps.config.appUrl}/login?error=invitation_pending`);
    expect(await membershipRows(alice.user.id)).toContainEqual({ orgId: b.org.id, status: 'pending' });
    const second = await runSsoLogin(t, b.org.id, { idp, user: who });
    expect(second.location).toBe(`${t.deps.config.appUrl}/login?error=invitation_pending`);
    const offers = await pendingOffers(alice.api);
    expect(offers.map((o) => o.orgId)).toEqual([b.org.id]);
    expect((await b.api.get(`/users/${alice.user.id}`, { query: { orgId: b.org.id } })).body.status).toBe('pending');
    // Accepted, the organisation is the account's: its sign-in there goes on (the link to the IdP is confirmed).
    expect((await alice.api.post(`/auth/invitations/${offers[0]!.id}/accept`)).status).toBe(200);
    const third = await runSsoLogin(t, b.org.id, { idp, user: who });
    expect(third.location).not.toContain('error=');
  });
});

describe('one tenant’s invitation never touches another tenant’s', () => {
  it('B and C invite the same account; accepting B’s leaves C’s pending, and C’s link still works', async () => {
    const alice = await memberOfA();
    const b = await partnerAdmin(t);
    const c = await partnerAdmin(t);
    await b.api.post('/users/invite', { email: alice.user.email, name: 'Alice', roleId: PARTNER_TECH });
    const bLink = linkToken(await offerMail(alice.user.email));
    await c.api.post('/users/invite', { email: alice.user.email, name: 'Alice', roleId: PARTNER_TECH });
    const cLink = linkToken(await offerMail(alice.user.email, [encodeURIComponent(bLink)]));
    expect((await alice.api.post('/auth/invitations/accept-link', { token: bLink })).status).toBe(200);
    const left = await pendingOffers(alice.api);
    expect(left.map((o) => o.partnerId)).toEqual([c.partner.id]);
    expect((await c.api.get(`/users/${alice.user.id}`)).body.status).toBe('pending');
    expect((await alice.api.post('/auth/invitations/accept-link', { token: cLink })).status).toBe(200);
  });

  it('a brand-new address invited by B then by C: C’s offer waits, B’s invitation link still works', async () => {
    const to = address('fresh');
    const b = await partnerAdmin(t);
    const c = await partnerAdmin(t);
    await b.api.post('/users/invite', { email: to, name: 'Fresh', roleId: PARTNER_TECH });
    const bLink = linkToken(await mail.waitFor(to, (m) => m.text.includes('/accept-invite?token=')));
    const cInv = await c.api.post('/users/invite', { email: to, name: 'Fresh', roleId: PARTNER_TECH });
    expect(cInv.body.status).toBe('pending');
    const accepted = await t.client().post('/auth/accept-invite', { token: bLink, password: PASSWORD });
    expect(accepted.status, accepted.text).toBe(200);
    const api = t.client().withToken(accepted.body.accessToken);
    const [offer] = await pendingOffers(api);
    expect(offer!.partnerId).toBe(c.partner.id);
    // The invitation link proved the address: the account may accept C's offer by id.
    expect((await api.post(`/auth/invitations/${offer!.id}/accept`)).status).toBe(200);
  });
});

describe('accepting and declining one invitation at once', () => {
  it('exactly one answer wins; the membership is either active or gone', async () => {
    for (let i = 0; i < 3; i++) {
      const alice = await memberOfA();
      const mallory = await partnerAdmin(t);
      await mallory.api.post('/users/invite', { email: alice.user.email, name: 'Alice', roleId: PARTNER_TECH });
      const [offer] = await pendingOffers(alice.api);
      const [yes, no] = await Promise.all([
        alice.api.post(`/auth/invitations/${offer!.id}/accept`),
        alice.api.post(`/auth/invitations/${offer!.id}/decline`),
      ]);
      expect([yes.status, no.status].sort(), `${yes.text} ${no.text}`).toEqual([200, 404]);
      const rows = await t.deps.db
        .select({ status: partnerUsers.status })
        .from(partnerUsers)
        .where(and(eq(partnerUsers.userId, alice.user.id), eq(partnerUsers.partnerId, mallory.partner.id)));
      expect(rows).toEqual(yes.status === 200 ? [{ status: 'active' }] : []);
    }
  });

  it('two acceptances (by id and by link) at once: one wins, one membership', async () => {
    const alice = await memberOfA();
    const mallory = await partnerAdmin(t);
    await mallory.api.post('/users/invite', { email: alice.user.email, name: 'Alice', roleId: PARTNER_TECH });
    const token = linkToken(await offerMail(alice.user.email));
    const [offer] = await pendingOffers(alice.api);
    const rs = await Promise.all([
      alice.api.post(`/auth/invitations/${offer!.id}/accept`),
      alice.api.post('/auth/invitations/accept-link', { token }),
    ]);
    expect(rs.map((r) => r.status).sort()).toEqual([200, 404]);
    expect(await membershipRows(alice.user.id)).toContainEqual({ partnerId: mallory.partner.id, status: 'active' });
  });
});

// The SSO login flow against a real OpenID Provider (oidc-provider, in-process on loopback), driven through the
// whole redirect chain: /sso/login → IdP authorize → login and consent interactions → /sso/callback → /sso/exchange.
import { and, desc, eq, sql } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  auditLogs,
  organizationUsers,
  partnerUsers,
  ssoIdentities,
  ssoSessions,
  users,
} from '../../src/db/schema/index.js';
import { proveDomain } from '../support/dns.js';
import { startApp, type TestApp } from '../support/app.js';
import { accountOf, addOrgMember, createOrg, createUser } from '../support/fixtures.js';
import {
  BINDING_COOKIE,
  callbackFor,
  replayCallback,
  runSsoLogin,
  startOidcProvider,
  type TestIdp,
} from '../support/oidc.js';
import {
  createActiveProvider,
  exchange,
  freshDomain,
  idpUser,
  linkFlowOf,
  orgWithProvider,
  ORG_TECHNICIAN_ROLE_ID,
  PARTNER_TECHNICIAN_ROLE_ID,
  setStatus,
  tenant,
} from './helpers.js';

let t: TestApp;
let idp: TestIdp;
let otherIdp: TestIdp;

beforeAll(async () => {
  t = await startApp({ SSO_ALLOW_INSECURE_ISSUERS: 'true' });
  idp = await startOidcProvider({ redirectUris: [callbackFor(t.baseUrl)] });
  otherIdp = await startOidcProvider({ redirectUris: [callbackFor(t.baseUrl)] });
});
afterAll(async () => {
  await t?.close();
  await idp?.close();
  await otherIdp?.close();
});

const autoProvisioned = () => orgWithProvider(t, idp, { autoProvision: true, defaultRoleId: ORG_TECHNICIAN_ROLE_ID });

async function audit(action: string, actorUserId: string) {
  return t.deps.db
    .select()
    .from(auditLogs)
    .where(and(eq(auditLogs.action, action), eq(auditLogs.actorUserId, actorUserId)))
    .orderBy(auditLogs.seq);
}
async function failures(providerId: string) {
  return t.deps.db
    .select()
    .from(auditLogs)
    .where(and(eq(auditLogs.action, 'auth.login.failed'), eq(auditLogs.resourceId, providerId)))
    .orderBy(auditLogs.seq);
}
const usersWithEmail = async (email: string) =>
  t.deps.db.select().from(users).where(sql`lower(${users.email}) = lower(${email})`);
const identitiesOf = async (userId: string) =>
  t.deps.db.select().from(ssoIdentities).where(eq(ssoIdentities.userId, userId));

describe('first SSO login with auto-provisioning creates the account, its membership and its link', () => {
  it('runs the whole redirect chain, lands on the requested path with #ssoCode, and the code yields tokens for the new user', async () => {
    const s = await autoProvisioned();
    const who = idpUser(`new.user@${s.domain}`, { name: 'New User' });
    const r = await runSsoLogin(t, s.org.id, { idp, user: who, redirect: '/dashboard' });

    // The chain went through the real IdP: authorize, a login and a consent interaction, then back.
    expect(r.visited[1]).toMatch(new RegExp(`^${idp.issuer}/auth\\?`));
    const authorize = new URL(r.visited[1]!);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorize.searchParams.get('state')).toBeTruthy();
    expect(authorize.searchParams.get('nonce')).toBeTruthy();
    expect(authorize.searchParams.get('redirect_uri')).toBe(callbackFor(t.baseUrl));
    expect(r.visited.some((u) => u.includes('/interaction/'))).toBe(true);
    expect(r.binding).toMatch(/.{20,}/);

    expect(r.error).toBeNull();
    expect(r.location!.startsWith(`${t.deps.config.appUrl}/dashboard#ssoCode=`)).toBe(true);
    expect(r.path).toBe('/dashboard');

    const res = await exchange(t, r.ssoCode!);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      tokenType: 'Bearer',
      user: {
        email: who.email,
        name: 'New User',
        orgId: s.org.id,
        roleId: ORG_TECHNICIAN_ROLE_ID,
        scope: 'organization',
      },
    });
    expect(decodeJwt(res.body.accessToken)).toMatchObject({
      orgId: s.org.id,
      roleId: ORG_TECHNICIAN_ROLE_ID,
      mfa: false,
    });
    expect(res.headers.getSetCookie().some((c) => c.startsWith('service_refresh_token='))).toBe(true);
    const me = await t.client().withToken(res.body.accessToken).me();
    expect(me.status).toBe(200);
    expect(me.body.email).toBe(who.email);

    const [u] = await usersWithEmail(who.email);
    expect(u).toMatchObject({ status: 'active', passwordHash: null });
    const [membership] = await t.deps.db.select().from(organizationUsers).where(eq(organizationUsers.userId, u!.id));
    expect(membership).toMatchObject({ orgId: s.org.id, roleId: ORG_TECHNICIAN_ROLE_ID });
    const links = await identitiesOf(u!.id);
    expect(links).toHaveLength(1);
    expect(links[0]).toMatchObject({ providerId: s.provider.id, subject: who.sub });

    const provisioned = await audit('user.sso.provision', u!.id);
    expect(provisioned).toHaveLength(1);
    const logins = await audit('user.login', u!.id);
    expect(logins).toHaveLength(1);
    expect(logins[0]).toMatchObject({
      result: 'success',
      orgId: s.org.id,
      partnerId: s.partner.id,
      details: { method: 'sso', mfa: false },
    });
  });

  it('never writes the exchange code, the state or the IdP code to the log', async () => {
    const s = await autoProvisioned();
    const r = await runSsoLogin(t, s.org.id, { idp, user: idpUser(`quiet@${s.domain}`) });
    expect(r.ssoCode).toBeTruthy();
    const cb = new URL(r.callbackUrl!);
    const logs = t.logs();
    expect(logs).not.toContain(r.ssoCode!);
    expect(logs).not.toContain(cb.searchParams.get('state')!);
    expect(logs).not.toContain(cb.searchParams.get('code')!);
    expect(logs).not.toContain(r.binding!);
  });

  it('keeps the SSO session secrets out of the database in the clear (state hashed; nonce and verifier sealed)', async () => {
    const s = await autoProvisioned();
    const r = await runSsoLogin(t, s.org.id, { idp, user: idpUser(`sealed@${s.domain}`), stopBeforeCallback: true });
    const authorize = new URL(r.visited[1]!);
    const rows = await t.deps.db.select().from(ssoSessions).where(eq(ssoSessions.providerId, s.provider.id));
    expect(rows).toHaveLength(1);
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(authorize.searchParams.get('state')!);
    expect(dump).not.toContain(authorize.searchParams.get('nonce')!);
    expect(rows[0]!.expiresAt.getTime() - rows[0]!.createdAt.getTime()).toBeLessThanOrEqual(10 * 60 * 1000 + 5000);
  });
});

describe('two flows of one new user finishing together', () => {
  it('both end signed in to one account (the loser of the provisioning race finds the winner’s link), never a 500', async () => {
    const s = await autoProvisioned();
    for (let i = 0; i < 6; i++) {
      const who = idpUser(`race.${i}@${s.domain}`);
      const a = await runSsoLogin(t, s.org.id, { idp, user: who, stopBeforeCallback: true });
      const b = await runSsoLogin(t, s.org.id, { idp, user: who, stopBeforeCallback: true });
      const [ra, rb] = await Promise.all([
        replayCallback(a.callbackUrl!, a.jar),
        replayCallback(b.callbackUrl!, b.jar),
      ]);
      const [ea, eb] = await Promise.all([exchange(t, ra.ssoCode!), exchange(t, rb.ssoCode!)]);
      expect([ea.status, eb.status]).toEqual([200, 200]);
      expect(ea.body.user.id).toBe(eb.body.user.id);
      expect(await usersWithEmail(who.email)).toHaveLength(1);
      expect(await identitiesOf(ea.body.user.id)).toHaveLength(1);
    }
  });
});

describe('a returning user signs in through the existing link', () => {
  it('resolves the same account by (provider, subject), even after the email changed at the IdP, and creates nothing', async () => {
    const s = await autoProvisioned();
    const who = idpUser(`returning@${s.domain}`);
    const first = await runSsoLogin(t, s.org.id, { idp, user: who });
    const a = await exchange(t, first.ssoCode!);
    expect(a.status).toBe(200);

    const second = await runSsoLogin(t, s.org.id, { idp, user: { ...who, email: `renamed@${s.domain}` } });
    const b = await exchange(t, second.ssoCode!);
    expect(b.status, b.text).toBe(200);
    expect(b.body.user.id).toBe(a.body.user.id);
    expect(await usersWithEmail(`renamed@${s.domain}`)).toHaveLength(0);
    const links = await identitiesOf(a.body.user.id);
    expect(links).toHaveLength(1);
    expect(links[0]!.email).toBe(`renamed@${s.domain}`);
    expect(await audit('user.sso.provision', a.body.user.id)).toHaveLength(1);
    expect((await audit('user.login', a.body.user.id)).map((e) => (e.details as { method: string }).method)).toEqual([
      'sso',
      'sso',
    ]);
  });

  it('refuses a linked account that has been disabled', async () => {
    const s = await autoProvisioned();
    const who = idpUser(`gone@${s.domain}`);
    const first = await exchange(t, (await runSsoLogin(t, s.org.id, { idp, user: who })).ssoCode!);
    await t.deps.db.update(users).set({ status: 'disabled' }).where(eq(users.id, first.body.user.id));
    const r = await runSsoLogin(t, s.org.id, { idp, user: who });
    expect(r.error).toBe('account_disabled');
    expect(r.ssoCode).toBeNull();
  });
});

describe('links are bound to the issuer', () => {
  it('changing the issuer removes the links: the same subject at the new IdP is not the old account', async () => {
    const s = await autoProvisioned();
    const sub = `shared-sub-${crypto.randomUUID()}`;
    const old = await exchange(
      t,
      (await runSsoLogin(t, s.org.id, { idp, user: idpUser(`old.person@${s.domain}`, { sub }) })).ssoCode!,
    );
    expect(old.status).toBe(200);
    const q = { query: { orgId: s.org.id } };
    const moved = await s.api.patch(
      `/sso/providers/${s.provider.id}`,
      { issuer: otherIdp.issuer, clientId: otherIdp.clientId, clientSecret: otherIdp.clientSecret },
      q,
    );
    expect(moved.status, moved.text).toBe(200);
    expect(await identitiesOf(old.body.user.id)).toHaveLength(0);
    // The newest update of this provider (set-up may have updated it too): ordered, never the driver's row order.
    const [rec] = await t.deps.db
      .select()
      .from(auditLogs)
      .where(and(eq(auditLogs.action, 'sso.provider.update'), eq(auditLogs.resourceId, s.provider.id)))
      .orderBy(desc(auditLogs.seq))
      .limit(1);
    expect(rec!.details).toMatchObject({ identitiesUnlinked: 1 });

    const other = await exchange(
      t,
      (await runSsoLogin(t, s.org.id, { idp: otherIdp, user: idpUser(`new.person@${s.domain}`, { sub }) })).ssoCode!,
    );
    expect(other.status).toBe(200);
    expect(other.body.user.id).not.toBe(old.body.user.id);
    expect(other.body.user.email).toBe(`new.person@${s.domain}`);
  });
});

describe('auto-provisioning off', () => {
  it('answers error=user_not_found for an unknown user and creates nothing', async () => {
    const s = await orgWithProvider(t, idp, { autoProvision: false });
    const who = idpUser(`stranger@${s.domain}`);
    const r = await runSsoLogin(t, s.org.id, { idp, user: who });
    expect(r.location).toBe(`${t.deps.config.appUrl}/login?error=user_not_found`);
    expect(await usersWithEmail(who.email)).toHaveLength(0);
    const failed = await failures(s.provider.id);
    expect(failed.at(-1)).toMatchObject({
      result: 'failure',
      orgId: s.org.id,
      details: { method: 'sso', reason: 'user_not_found' },
    });
  });
});

describe('allowedDomains compares the exact domain after the last @', () => {
  it('refuses another domain with error=domain_not_allowed, before any account is created', async () => {
    const s = await autoProvisioned();
    const r = await runSsoLogin(t, s.org.id, { idp, user: idpUser(`someone@elsewhere-${s.domain}`) });
    expect(r.error).toBe('domain_not_allowed');
    expect(await usersWithEmail(`someone@elsewhere-${s.domain}`)).toHaveLength(0);
  });

  it('refuses a subdomain and a suffix trick: sub.example.com is not example.com', async () => {
    const s = await autoProvisioned();
    for (const email of [`a@sub.${s.domain}`, `a@${s.domain}.evil.test`, `a@x${s.domain}`]) {
      const r = await runSsoLogin(t, s.org.id, { idp, user: idpUser(email) });
      expect(r.error, email).toBe('domain_not_allowed');
    }
  });

  it('matches the domain case-insensitively', async () => {
    const s = await autoProvisioned();
    const r = await runSsoLogin(t, s.org.id, { idp, user: idpUser(`Mixed.Case@${s.domain.toUpperCase()}`) });
    expect(r.ssoCode).toBeTruthy();
  });

  it('uses the last @ of an address with two: an allowed domain before the last @ does not count', async () => {
    const s = await orgWithProvider(t, idp, { autoProvision: false });
    const smuggled = await runSsoLogin(t, s.org.id, { idp, user: idpUser(`victim@${s.domain}@evil.test`) });
    expect(smuggled.error).toBe('domain_not_allowed');
    // The domain after the last @ is allowed: the domain rule passes, and the flow goes on to the account rules.
    const lastAllowed = await runSsoLogin(t, s.org.id, { idp, user: idpUser(`x@evil.test@${s.domain}`) });
    expect(lastAllowed.error).not.toBe('domain_not_allowed');
    expect(lastAllowed.error).not.toBeNull();
  });

  it('ends an address the account store cannot hold in a /login?error= redirect, not a server error', async () => {
    const s = await autoProvisioned();
    for (const email of [`x@evil.test@${s.domain}`, `${'a'.repeat(260)}@${s.domain}`]) {
      const r = await runSsoLogin(t, s.org.id, { idp, user: idpUser(email) });
      expect(r.ssoCode, email).toBeNull();
      expect(r.error, email).toBe('email_invalid');
    }
  });

  it('ends an over-long subject (OIDC caps sub at 255) in error=id_token_invalid, not a server error', async () => {
    const s = await autoProvisioned();
    const r = await runSsoLogin(t, s.org.id, { idp, user: idpUser(`long.sub@${s.domain}`, { sub: 's'.repeat(300) }) });
    expect(r.error).toBe('id_token_invalid');
  });
});

describe('the ID token and userinfo must carry a verified email', () => {
  it('answers error=email_unverified when the IdP says email_verified=false', async () => {
    const s = await autoProvisioned();
    const who = idpUser(`unverified@${s.domain}`, { email_verified: false });
    const r = await runSsoLogin(t, s.org.id, { idp, user: who });
    expect(r.error).toBe('email_unverified');
    expect(await usersWithEmail(who.email)).toHaveLength(0);
  });

  it('does not link an existing member by an unverified email', async () => {
    const s = await orgWithProvider(t, idp);
    const member = await createUser(t, { email: `invitee-unverified@${s.domain}`, status: 'invited' });
    await addOrgMember(t, { orgId: s.org.id, userId: member.id });
    const r = await runSsoLogin(t, s.org.id, { idp, user: idpUser(member.email, { email_verified: false }) });
    expect(r.error).toBe('email_unverified');
    expect(await identitiesOf(member.id)).toHaveLength(0);
    expect((await accountOf(t, member.id))!.status).toBe('invited');
  });
});

describe('identity resolution by verified email among the organisation members', () => {
  it('links a password-less invited member and activates the account', async () => {
    const s = await orgWithProvider(t, idp, { autoProvision: false });
    const member = await createUser(t, { email: `invitee@${s.domain}`, status: 'invited' });
    await addOrgMember(t, { orgId: s.org.id, userId: member.id, roleId: ORG_TECHNICIAN_ROLE_ID });
    const who = idpUser(member.email.toUpperCase());
    const r = await runSsoLogin(t, s.org.id, { idp, user: who });
    expect(r.error).toBeNull();
    const res = await exchange(t, r.ssoCode!);
    expect(res.status, res.text).toBe(200);
    expect(res.body.user).toMatchObject({ id: member.id, roleId: ORG_TECHNICIAN_ROLE_ID, status: 'active' });
    expect((await accountOf(t, member.id))!.status).toBe('active');
    expect(await identitiesOf(member.id)).toEqual([
      expect.objectContaining({ providerId: s.provider.id, subject: who.sub }),
    ]);
    expect(await usersWithEmail(member.email)).toHaveLength(1);
  });

  it('links a member who has a password at once when every membership lies in the organisation, and audits it', async () => {
    const s = await orgWithProvider(t, idp, { autoProvision: true, defaultRoleId: ORG_TECHNICIAN_ROLE_ID });
    const member = await createUser(t, {
      email: `has.password@${s.domain}`,
      password: 'correct horse battery staple 42',
    });
    await addOrgMember(t, { orgId: s.org.id, userId: member.id });
    const who = idpUser(member.email);
    const r = await runSsoLogin(t, s.org.id, { idp, user: who });
    expect(r.error).toBeNull();
    const res = await exchange(t, r.ssoCode!);
    expect(res.status, res.text).toBe(200);
    expect(res.body.user.id).toBe(member.id);
    expect(await identitiesOf(member.id)).toEqual([
      expect.objectContaining({ providerId: s.provider.id, subject: who.sub }),
    ]);
    expect(await usersWithEmail(member.email)).toHaveLength(1);
    const audit = await t.deps.db
      .select()
      .from(auditLogs)
      .where(and(eq(auditLogs.action, 'sso.identity.link'), eq(auditLogs.actorUserId, member.id)));
    expect(audit).toEqual([
      expect.objectContaining({ orgId: s.org.id, details: expect.objectContaining({ how: 'automatic' }) }),
    ]);
  });

  it('sends a member of another organisation too to the link page, and links nothing until the account confirms', async () => {
    // The same person is a member of two organisations; each organisation has its own IdP.
    const first = await orgWithProvider(t, idp, { autoProvision: true, defaultRoleId: ORG_TECHNICIAN_ROLE_ID });
    const secondOrg = await createOrg(t, first.partner.id);
    const second = await createActiveProvider(first.api, otherIdp, secondOrg.id, { allowedDomains: first.domain });
    const email = `two.orgs@${first.domain}`;
    const a = await exchange(t, (await runSsoLogin(t, first.org.id, { idp, user: idpUser(email) })).ssoCode!);
    expect(a.status).toBe(200);
    await addOrgMember(t, { orgId: secondOrg.id, userId: a.body.user.id });

    const r = await runSsoLogin(t, secondOrg.id, { idp: otherIdp, user: idpUser(email) });
    expect(linkFlowOf(r.location)).toBeTruthy();
    expect((await identitiesOf(a.body.user.id)).map((l) => l.providerId)).toEqual([first.provider.id]);
    expect(second.id).not.toBe(first.provider.id);
  });

  it("an organisation's IdP cannot claim a password-less account that also holds partner access", async () => {
    const s = await orgWithProvider(t, idp, { autoProvision: false });
    const member = await createUser(t, { email: `dual.role@${s.domain}`, status: 'invited' });
    await addOrgMember(t, { orgId: s.org.id, userId: member.id, roleId: ORG_TECHNICIAN_ROLE_ID });
    await t.deps.db
      .insert(partnerUsers)
      .values({ partnerId: s.partner.id, userId: member.id, roleId: PARTNER_TECHNICIAN_ROLE_ID, orgAccess: 'all' });
    const r = await runSsoLogin(t, s.org.id, { idp, user: idpUser(member.email) });
    expect(linkFlowOf(r.location)).toBeTruthy();
    expect(await identitiesOf(member.id)).toHaveLength(0);
  });

  it("does not take over a linked account when another subject at the same IdP presents the account's email", async () => {
    const s = await autoProvisioned();
    const email = `recycled@${s.domain}`;
    const owner = await exchange(t, (await runSsoLogin(t, s.org.id, { idp, user: idpUser(email) })).ssoCode!);
    expect(owner.status).toBe(200);
    const r = await runSsoLogin(t, s.org.id, { idp, user: idpUser(email) }); // a new subject, same email
    expect(linkFlowOf(r.location)).toBeTruthy();
    expect(await identitiesOf(owner.body.user.id)).toHaveLength(1);
  });

  it('an existing account that is no member, where the provider auto-provisions: a pending membership, error=invitation_pending, no link', async () => {
    const s = await autoProvisioned();
    const elsewhere = await createOrg(t, s.partner.id);
    const outsider = await createUser(t, { email: `outsider@${s.domain}`, status: 'invited' });
    await addOrgMember(t, { orgId: elsewhere.id, userId: outsider.id });
    const r = await runSsoLogin(t, s.org.id, { idp, user: idpUser(outsider.email) });
    expect(r.error).toBe('invitation_pending');
    expect(
      await t.deps.db
        .select({ status: organizationUsers.status })
        .from(organizationUsers)
        .where(and(eq(organizationUsers.userId, outsider.id), eq(organizationUsers.orgId, s.org.id))),
    ).toEqual([{ status: 'pending' }]);
    expect(await identitiesOf(outsider.id)).toHaveLength(0);
  });

  it('answers error=no_org_access when a linked user has since been removed from the organisation', async () => {
    const s = await autoProvisioned();
    const who = idpUser(`removed@${s.domain}`);
    const a = await exchange(t, (await runSsoLogin(t, s.org.id, { idp, user: who })).ssoCode!);
    await t.deps.db.delete(organizationUsers).where(eq(organizationUsers.userId, a.body.user.id));
    const r = await runSsoLogin(t, s.org.id, { idp, user: who });
    expect(r.error).toBe('no_org_access');
  });
});

describe('a provider that is not active cannot be used', () => {
  it('refuses to start a login when the provider is inactive or testing, or there is none', async () => {
    const s = await autoProvisioned();
    for (const status of ['inactive', 'testing'] as const) {
      expect((await setStatus(s.api, s.provider.id, status, s.org.id)).status).toBe(200);
      const r = await runSsoLogin(t, s.org.id, { idp });
      expect(r.location, status).toBe(`${t.deps.config.appUrl}/login?error=provider_not_found`);
      expect(r.visited).toHaveLength(1); // never sent to the IdP
    }
    const none = await createOrg(t, s.partner.id);
    expect((await runSsoLogin(t, none.id, { idp })).error).toBe('provider_not_found');
    expect((await runSsoLogin(t, 'not-a-uuid', { idp })).error).toBe('provider_not_found');
  });

  it('answers error=provider_not_found when the provider is deactivated during the flow', async () => {
    const s = await autoProvisioned();
    const who = idpUser(`midflow.off@${s.domain}`);
    const r = await runSsoLogin(t, s.org.id, {
      idp,
      user: who,
      beforeCallback: async () =>
        expect((await setStatus(s.api, s.provider.id, 'inactive', s.org.id)).status).toBe(200),
    });
    expect(r.error).toBe('provider_not_found');
    expect(await usersWithEmail(who.email)).toHaveLength(0);
  });

  it('answers error=provider_not_found when the provider is switched to testing during the flow', async () => {
    const s = await autoProvisioned();
    const r = await runSsoLogin(t, s.org.id, {
      idp,
      user: idpUser(`midflow.testing@${s.domain}`),
      beforeCallback: async () => expect((await setStatus(s.api, s.provider.id, 'testing', s.org.id)).status).toBe(200),
    });
    expect(r.error).toBe('provider_not_found');
  });

  it('answers error=provider_not_found when the provider is deleted during the flow', async () => {
    const s = await autoProvisioned();
    const who = idpUser(`midflow.deleted@${s.domain}`);
    const r = await runSsoLogin(t, s.org.id, {
      idp,
      user: who,
      beforeCallback: async () =>
        expect((await s.api.delete(`/sso/providers/${s.provider.id}`, { query: { orgId: s.org.id } })).status).toBe(
          200,
        ),
    });
    expect(r.error).toBe('provider_not_found');
    expect(await usersWithEmail(who.email)).toHaveLength(0);
  });

  it('refuses the exchange code when the provider is deactivated between callback and exchange', async () => {
    const s = await autoProvisioned();
    const r = await runSsoLogin(t, s.org.id, { idp, user: idpUser(`late.off@${s.domain}`) });
    expect(r.ssoCode).toBeTruthy();
    await setStatus(s.api, s.provider.id, 'inactive', s.org.id);
    const res = await exchange(t, r.ssoCode!);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('invalid_exchange_code');
  });
});

describe('an SSO session lives 10 minutes', () => {
  it('answers error=session_expired when the browser comes back after more than 10 minutes', async () => {
    const s = await autoProvisioned();
    const who = idpUser(`slow@${s.domain}`);
    const r = await runSsoLogin(t, s.org.id, {
      idp,
      user: who,
      beforeCallback: () => t.clock.advance(10 * 60 * 1000 + 1000),
    });
    expect(r.location).toBe(`${t.deps.config.appUrl}/login?error=session_expired`);
    expect(await usersWithEmail(who.email)).toHaveLength(0);
  });

  it('still completes after 9 minutes', async () => {
    const s = await autoProvisioned();
    const r = await runSsoLogin(t, s.org.id, {
      idp,
      user: idpUser(`patient@${s.domain}`),
      beforeCallback: () => t.clock.advance(9 * 60 * 1000),
    });
    expect(r.ssoCode).toBeTruthy();
  });
});

describe('the state is single-use and bound to the browser that started the flow', () => {
  it('refuses a replayed callback (state already used) with error=invalid_state, even from the same browser', async () => {
    const s = await autoProvisioned();
    const r = await runSsoLogin(t, s.org.id, { idp, user: idpUser(`replay@${s.domain}`) });
    expect(r.ssoCode).toBeTruthy();
    const sameBrowser = new Map([[BINDING_COOKIE, r.binding!]]);
    const again = await replayCallback(r.callbackUrl!, sameBrowser);
    expect(again.location).toBe(`${t.deps.config.appUrl}/login?error=invalid_state`);
    expect((await replayCallback(r.callbackUrl!, new Map())).error).toBe('invalid_state');
  });

  it('refuses the callback in a browser without the binding cookie, and that attempt does not burn the flow', async () => {
    const s = await autoProvisioned();
    const r = await runSsoLogin(t, s.org.id, { idp, user: idpUser(`bound@${s.domain}`), stopBeforeCallback: true });
    // A victim lured to the attacker's callback URL: no binding cookie, or another flow's cookie.
    expect((await replayCallback(r.callbackUrl!, new Map())).error).toBe('invalid_state');
    expect((await replayCallback(r.callbackUrl!, new Map([[BINDING_COOKIE, 'x'.repeat(43)]]))).error).toBe(
      'invalid_state',
    );
    const rightful = await replayCallback(r.callbackUrl!, r.jar);
    expect(rightful.error).toBeNull();
    expect(rightful.ssoCode).toBeTruthy();
  });

  it('refuses an unknown or missing state', async () => {
    const none = await replayCallback(`${t.baseUrl}/api/v1/sso/callback?code=abc`, new Map());
    expect(none.error).toBe('invalid_state');
    const unknown = await replayCallback(
      `${t.baseUrl}/api/v1/sso/callback?code=abc&state=nope`,
      new Map([[BINDING_COOKIE, 'whatever']]),
    );
    expect(unknown.error).toBe('invalid_state');
  });

  it('passes an IdP refusal on as error=access_denied, and any other IdP error as error=sso_failed', async () => {
    const s = await autoProvisioned();
    idp.denyNext('access_denied');
    expect((await runSsoLogin(t, s.org.id, { idp, user: idpUser(`denied@${s.domain}`) })).error).toBe('access_denied');
    idp.denyNext('temporarily_unavailable');
    expect((await runSsoLogin(t, s.org.id, { idp, user: idpUser(`unavailable@${s.domain}`) })).error).toBe(
      'sso_failed',
    );
  });

  it('ends in error=token_exchange_failed when the IdP refuses the code exchange (wrong client secret)', async () => {
    const tn = await tenant(t);
    const domain = freshDomain();
    await createActiveProvider(tn.api, { ...idp, clientSecret: 'not-the-secret' }, tn.org.id, {
      allowedDomains: domain,
      autoProvision: true,
      defaultRoleId: ORG_TECHNICIAN_ROLE_ID,
    });
    const r = await runSsoLogin(t, tn.org.id, { idp, user: idpUser(`bad.secret@${domain}`) });
    expect(r.error).toBe('token_exchange_failed');
  });

  it('binds the flow with an HttpOnly, SameSite=Lax cookie scoped to /api/v1/sso that lives 10 minutes', async () => {
    const s = await autoProvisioned();
    const res = await fetch(`${t.baseUrl}/api/v1/sso/login/${s.org.id}`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith(`${BINDING_COOKIE}=`));
    expect(cookie).toBeTruthy();
    expect(cookie).toMatch(/;\s*HttpOnly/i);
    expect(cookie).toMatch(/;\s*SameSite=Lax/i);
    expect(cookie).toMatch(/;\s*Path=\/api\/v1\/sso(;|$)/i);
    expect(cookie).toMatch(/;\s*Max-Age=600(;|$)/i);
  });
});

describe('the post-login redirect is a relative path only', () => {
  const cases: [string, string][] = [
    ['/dashboard', '/dashboard'],
    ['/devices/42?tab=patches', '/devices/42?tab=patches'],
    ['https://evil.test', '/'],
    ['//evil.test', '/'],
    ['/\\evil.test', '/'],
    ['\\\\evil.test', '/'],
    ['/\t/evil.test', '/'],
    ['javascript:alert(1)', '/'],
    ['dashboard', '/'],
    ['', '/'],
  ];
  it('keeps /dashboard and turns absolute, protocol-relative and backslash URLs into /', async () => {
    const s = await autoProvisioned();
    for (const [asked, landed] of cases) {
      const r = await runSsoLogin(t, s.org.id, {
        idp,
        user: idpUser(`redirect.${cases.findIndex((c) => c[0] === asked)}@${s.domain}`),
        redirect: asked,
      });
      expect(r.path, JSON.stringify(asked)).toBe(landed);
      expect(new URL(r.location!).origin).toBe(new URL(t.deps.config.appUrl).origin);
    }
  });

  it('percent-encodes characters a Location header cannot carry instead of failing the callback', async () => {
    const s = await autoProvisioned();
    const cases: [string, string][] = [
      ['/café/€', '/caf%C3%A9/%E2%82%AC'],
      ['/a\u0001b', '/a%01b'],
      ['/\u2215\u2215evil.test', '/%E2%88%95%E2%88%95evil.test'],
    ];
    for (const [i, [asked, landed]] of cases.entries()) {
      const r = await runSsoLogin(t, s.org.id, { idp, user: idpUser(`odd.path.${i}@${s.domain}`), redirect: asked });
      expect(r.path, JSON.stringify(asked)).toBe(landed);
      expect(new URL(r.location!).origin).toBe(new URL(t.deps.config.appUrl).origin);
    }
  });
});

describe("a partner-owned provider signs in the partner's technicians", () => {
  it('provisions a partner member with the default partner role, via /sso/login/:partnerId', async () => {
    const tn = await tenant(t);
    const domain = freshDomain();
    await proveDomain(tn.api, domain);
    const provider = await createActiveProvider(tn.api, idp, null, {
      allowedDomains: domain,
      autoProvision: true,
      defaultRoleId: PARTNER_TECHNICIAN_ROLE_ID,
    });
    expect(provider).toMatchObject({ orgId: null, partnerId: tn.partner.id });
    const r = await runSsoLogin(t, tn.partner.id, { idp, user: idpUser(`tech@${domain}`) });
    expect(r.error).toBeNull();
    const res = await exchange(t, r.ssoCode!);
    expect(res.status, res.text).toBe(200);
    expect(res.body.user).toMatchObject({
      scope: 'partner',
      partnerId: tn.partner.id,
      orgId: null,
      roleId: PARTNER_TECHNICIAN_ROLE_ID,
    });
    const [m] = await t.deps.db.select().from(partnerUsers).where(eq(partnerUsers.userId, res.body.user.id));
    expect(m).toMatchObject({ partnerId: tn.partner.id, roleId: PARTNER_TECHNICIAN_ROLE_ID });
    const [login] = await audit('user.login', res.body.user.id);
    expect(login).toMatchObject({ partnerId: tn.partner.id, orgId: null, details: { method: 'sso' } });
  });

  it("does not let an organisation's login URL use the partner-owned provider", async () => {
    const tn = await tenant(t);
    await createActiveProvider(tn.api, idp, null, { allowedDomains: freshDomain() });
    expect((await runSsoLogin(t, tn.org.id, { idp })).error).toBe('provider_not_found');
  });
});

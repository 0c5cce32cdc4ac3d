// enforceSSO turns password login and password reset off for the organisation's users; the public discovery
// endpoints (GET /sso/check/:orgId, POST /auth/sso-discovery) answer from the organisation or the email's domain only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ssoIdentities } from '../../src/db/schema/index.js';
import { startApp, type TestApp } from '../support/app.js';
import { proveDomain } from '../support/dns.js';
import { addOrgMember, addPartnerMember, createOrg, createPartner, createUser } from '../support/fixtures.js';
import { callbackFor, runSsoLogin, startOidcProvider, type TestIdp } from '../support/oidc.js';
import { linkToken, startMailCatcher, type MailCatcher } from '../support/smtp.js';
import {
  createActiveProvider,
  exchange,
  freshDomain,
  idpUser,
  orgWithProvider,
  PARTNER_TECHNICIAN_ROLE_ID,
  setStatus,
  tenant,
  uniq,
} from './helpers.js';

let t: TestApp;
let idp: TestIdp;
let mail: MailCatcher;
const PASSWORD = 'correct horse battery staple 42';

beforeAll(async () => {
  mail = await startMailCatcher();
  t = await startApp({
    SSO_ALLOW_INSECURE_ISSUERS: 'true',
    SMTP_URL: mail.url,
    RATE_LIMIT_LOGIN: '1000/900',
    RATE_LIMIT_FORGOT_PASSWORD: '1000/3600',
  });
  idp = await startOidcProvider({ redirectUris: [callbackFor(t.baseUrl)] });
});
afterAll(async () => {
  await t?.close();
  await idp?.close();
  await mail?.close();
});

const passwordLogin = (email: string, password = PASSWORD) => t.client().post('/auth/login', { email, password });
const isResetMail = (m: { subject: string }) => /reset your password/i.test(m.subject);

/** Waits until the reset mail of a fresh canary arrives: mails that earlier requests would have sent are out by then. */
async function mailBarrier() {
  const canary = await createUser(t, { password: PASSWORD });
  const tn = await createPartner(t);
  await addPartnerMember(t, { partnerId: tn.id, userId: canary.id, roleId: PARTNER_TECHNICIAN_ROLE_ID });
  expect((await t.client().post('/auth/forgot-password', { email: canary.email })).status).toBe(200);
  await mail.waitFor(canary.email, isResetMail);
  await new Promise((r) => setTimeout(r, 100));
}

describe('enforced SSO blocks password login and password reset for the organisation’s users', () => {
  it('refuses the right password with the same 401 invalid_credentials, while SSO still signs the user in', async () => {
    const s = await orgWithProvider(t, idp, { enforceSSO: false });
    const member = await createUser(t, { email: `pw.user@${s.domain}`, password: PASSWORD });
    await addOrgMember(t, { orgId: s.org.id, userId: member.id });
    // The member's account is already linked to a subject at the IdP.
    const subject = `sub-${uniq()}`;
    await t.deps.db
      .insert(ssoIdentities)
      .values({ providerId: s.provider.id, userId: member.id, subject, email: member.email });

    expect((await passwordLogin(member.email)).status).toBe(200);
    const link = await (async () => {
      expect((await t.client().post('/auth/forgot-password', { email: member.email })).status).toBe(200);
      return linkToken(await mail.waitFor(member.email, isResetMail));
    })();

    const on = await s.api.patch(
      `/sso/providers/${s.provider.id}`,
      { enforceSSO: true },
      { query: { orgId: s.org.id } },
    );
    expect(on.status).toBe(200);
    expect(on.body.enforceSSO).toBe(true);

    const refused = await passwordLogin(member.email);
    const wrong = await passwordLogin(member.email, 'an entirely wrong password');
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('invalid_credentials');
    expect(refused.text).toBe(wrong.text);
    expect(refused.headers.getSetCookie()).toEqual([]);

    // Reset: a link issued before enforcement no longer works, and no new link is mailed.
    const reset = await t
      .client()
      .post('/auth/reset-password', { token: link, newPassword: `Glacier-${uniq()}-Saffron!` });
    expect(reset.status).toBe(400);
    expect(reset.body.code).toBe('invalid_reset_token');
    const before = mail.countTo(member.email);
    expect((await t.client().post('/auth/forgot-password', { email: member.email })).status).toBe(200);
    await mailBarrier();
    expect(mail.countTo(member.email)).toBe(before);

    // SSO is the way in.
    const r = await runSsoLogin(t, s.org.id, { idp, user: idpUser(member.email, { sub: subject }) });
    expect(r.error).toBeNull();
    const tokens = await exchange(t, r.ssoCode!);
    expect(tokens.status).toBe(200);
    expect(tokens.body.user.id).toBe(member.id);

    expect((await t.client().get(`/sso/check/${s.org.id}`)).body.enforceSSO).toBe(true);
  });

  it('gives password login back when enforcement is switched off or the provider is deactivated', async () => {
    const s = await orgWithProvider(t, idp, { enforceSSO: true });
    const member = await createUser(t, { email: `member-${uniq()}@${s.domain}`, password: PASSWORD });
    await addOrgMember(t, { orgId: s.org.id, userId: member.id });
    expect((await passwordLogin(member.email)).status).toBe(401);
    expect((await setStatus(s.api, s.provider.id, 'testing', s.org.id)).status).toBe(200);
    expect((await passwordLogin(member.email)).status).toBe(200);
    expect((await setStatus(s.api, s.provider.id, 'active', s.org.id)).status).toBe(200);
    expect((await passwordLogin(member.email)).status).toBe(401);
    expect(
      (await s.api.patch(`/sso/providers/${s.provider.id}`, { enforceSSO: false }, { query: { orgId: s.org.id } }))
        .status,
    ).toBe(200);
    expect((await passwordLogin(member.email)).status).toBe(200);
  });

  it('a partner-owned enforcing provider blocks the partner’s technicians, not the members of its organisations', async () => {
    const tn = await tenant(t);
    const domain = freshDomain();
    await proveDomain(tn.api, domain);
    const tech = await createUser(t, { email: `tech-${uniq()}@${domain}`, password: PASSWORD });
    await addPartnerMember(t, { partnerId: tn.partner.id, userId: tech.id, roleId: PARTNER_TECHNICIAN_ROLE_ID });
    const orgUser = await createUser(t, { email: `user-${uniq()}@${domain}`, password: PASSWORD });
    await addOrgMember(t, { orgId: tn.org.id, userId: orgUser.id });
    await createActiveProvider(tn.api, idp, null, { allowedDomains: domain, enforceSSO: true });
    expect((await passwordLogin(tech.email)).status).toBe(401);
    expect((await passwordLogin(orgUser.email)).status).toBe(200);
  });

  it('applies only to addresses in a domain the provider’s tenant has proven', async () => {
    const s = await orgWithProvider(t, idp, { enforceSSO: true });
    const inside = await createUser(t, { email: `in-${uniq()}@${s.domain}`, password: PASSWORD });
    const outside = await createUser(t, { email: `out-${uniq()}@${freshDomain()}`, password: PASSWORD });
    for (const u of [inside, outside]) await addOrgMember(t, { orgId: s.org.id, userId: u.id });
    expect((await passwordLogin(inside.email)).status).toBe(401);
    expect((await passwordLogin(outside.email)).status).toBe(200);
    // The proof withdrawn, the provider enforces on nobody.
    const [proof] = (await s.api.get('/domains', { query: { orgId: s.org.id } })).body.data;
    expect((await s.api.delete(`/domains/${proof!.id}`)).status).toBe(200);
    expect((await passwordLogin(inside.email)).status).toBe(200);
  });

  it('does not touch another organisation’s users', async () => {
    const s = await orgWithProvider(t, idp, { enforceSSO: true });
    const elsewhere = await createOrg(t, s.partner.id);
    const user = await createUser(t, { password: PASSWORD });
    await addOrgMember(t, { orgId: elsewhere.id, userId: user.id });
    expect((await passwordLogin(user.email)).status).toBe(200);
  });
});

describe('GET /sso/check/:orgId (public)', () => {
  it('reports the active provider: name, type, enforcement and the login URL, and nothing secret', async () => {
    const s = await orgWithProvider(t, idp, { name: 'Contoso Entra', enforceSSO: true });
    const res = await t.client().get(`/sso/check/${s.org.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ssoEnabled: true,
      providerName: 'Contoso Entra',
      type: 'oidc',
      enforceSSO: true,
      loginUrl: `${t.deps.config.publicUrl}/api/v1/sso/login/${s.org.id}`,
      passwordSignIn: 'partner_admins_only',
    });
    expect(res.text).not.toContain(idp.clientId);
    expect(res.text).not.toContain(idp.issuer);
  });

  it('says ssoEnabled false without an active provider, for an unknown organisation, and 400 for a malformed id', async () => {
    const s = await orgWithProvider(t, idp);
    expect((await setStatus(s.api, s.provider.id, 'testing', s.org.id)).status).toBe(200);
    expect((await t.client().get(`/sso/check/${s.org.id}`)).body).toEqual({ ssoEnabled: false });
    expect((await t.client().get(`/sso/check/${crypto.randomUUID()}`)).body).toEqual({ ssoEnabled: false });
    const bad = await t.client().get('/sso/check/nope');
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
  });
});

describe('POST /auth/sso-discovery answers from the email’s domain only', () => {
  it('gives the same answer for a known member and an unknown address at that domain', async () => {
    const s = await orgWithProvider(t, idp, { name: 'Domain IdP' });
    const member = await createUser(t, { email: `known@${s.domain}`, password: PASSWORD });
    await addOrgMember(t, { orgId: s.org.id, userId: member.id });
    const known = await t.client().post('/auth/sso-discovery', { email: member.email });
    const unknown = await t.client().post('/auth/sso-discovery', { email: `nobody-${uniq()}@${s.domain}` });
    const shouting = await t.client().post('/auth/sso-discovery', { email: `KNOWN@${s.domain.toUpperCase()}` });
    expect(known.status).toBe(200);
    expect(known.body).toEqual({
      ssoEnabled: true,
      orgId: s.org.id,
      providerName: 'Domain IdP',
      type: 'oidc',
      enforceSSO: false,
      loginUrl: `${t.deps.config.publicUrl}/api/v1/sso/login/${s.org.id}`,
    });
    expect(unknown.text).toBe(known.text);
    expect(shouting.text).toBe(known.text);
  });

  it('says ssoEnabled false for an unconfigured domain, a subdomain, and a domain whose provider is not active', async () => {
    const s = await orgWithProvider(t, idp);
    for (const email of [`a@${freshDomain()}`, `a@sub.${s.domain}`]) {
      expect((await t.client().post('/auth/sso-discovery', { email })).body, email).toEqual({ ssoEnabled: false });
    }
    await setStatus(s.api, s.provider.id, 'inactive', s.org.id);
    expect((await t.client().post('/auth/sso-discovery', { email: `a@${s.domain}` })).body).toEqual({
      ssoEnabled: false,
    });
  });

  it('names the partner’s login URL for a partner-owned provider, without an orgId', async () => {
    const tn = await tenant(t);
    const domain = freshDomain();
    await proveDomain(tn.api, domain);
    await createActiveProvider(tn.api, idp, null, { allowedDomains: domain });
    const res = await t.client().post('/auth/sso-discovery', { email: `tech@${domain}` });
    expect(res.body).toMatchObject({
      ssoEnabled: true,
      loginUrl: `${t.deps.config.publicUrl}/api/v1/sso/login/${tn.partner.id}`,
    });
    expect(res.body.orgId).toBeUndefined();
  });

  it('refuses a body that is not an email address', async () => {
    const res = await t.client().post('/auth/sso-discovery', { email: 'not-an-email' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
  });
});

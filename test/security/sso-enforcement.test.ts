// SSO enforcement holds one membership, never the account: partner B invites partner A's technician into its
// organisation X, then switches on an enforcing provider at an identity provider it lets die. The account still signs
// in with its password to partner A and can still reset it; only the X membership needs SSO.
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import type { ApiClient } from '../support/client.js';
import { addOrgMember, addPartnerMember, createUser, signedInPartnerMember } from '../support/fixtures.js';
import { proveDomain } from '../support/dns.js';
import { callbackFor, startOidcProvider } from '../support/oidc.js';
import { startMailCatcher, type MailCatcher } from '../support/smtp.js';
import { createActiveProvider, freshDomain, tenant } from '../sso/helpers.js';

const PARTNER_TECH = SYSTEM_ROLES[1].id as string;
const ORG_VIEWER = SYSTEM_ROLES[5].id as string;
const PASSWORD = 'correct horse battery staple 42';

let t: TestApp;
let mail: MailCatcher;
beforeAll(async () => {
  mail = await startMailCatcher();
  t = await startApp({
    SSO_ALLOW_INSECURE_ISSUERS: 'true',
    SMTP_URL: mail.url,
    RATE_LIMIT_LOGIN: '1000/900',
    RATE_LIMIT_FORGOT_PASSWORD: '1000/3600',
  });
});
afterAll(async () => {
  await t?.close();
  await mail?.close();
});

const passwordLogin = (email: string) => t.client().post('/auth/login', { email, password: PASSWORD });

/** An invitation of an existing account: where the account must accept it first, it accepts. */
async function inviteAndJoin(inviter: ApiClient, invitee: ApiClient, body: Record<string, unknown>) {
  const inv = await inviter.raw.request('POST', '/users/invite', { body });
  expect(inv.status, inv.text).toBe(201);
  if (inv.body.status === 'pending') {
    const list = await invitee.raw.request('GET', '/auth/invitations');
    for (const offer of list.body.data as { id: string }[])
      expect((await invitee.raw.request('POST', `/auth/invitations/${offer.id}/accept`)).status).toBe(200);
  }
}

/**
 * Partner B's organisation X, which proved its domain (enforcement holds addresses of proven domains only), enforcing
 * SSO at an identity provider that is then shut down.
 */
async function deadIdpOrg() {
  const b = await tenant(t);
  const domain = freshDomain();
  await proveDomain(b.api, domain, b.org.id);
  const idp = await startOidcProvider({ redirectUris: [callbackFor(t.baseUrl)] });
  await createActiveProvider(b.api, idp, b.org.id, { allowedDomains: domain, enforceSSO: true });
  await idp.close();
  return { ...b, domain };
}

describe('an organisation’s enforced SSO stops password sign-in to that organisation only', () => {
  it('partner B enforces SSO at a dead IdP in org X: A’s technician still signs in to partner A with a password', async () => {
    const a = await tenant(t);
    const alice = await signedInPartnerMember(t, a.partner.id, {
      roleId: PARTNER_TECH,
      password: PASSWORD,
      mfaEnabled: false,
    });
    const b = await deadIdpOrg();
    await inviteAndJoin(b.api, alice.api, {
      email: alice.user.email,
      name: 'Alice',
      roleId: ORG_VIEWER,
      orgId: b.org.id,
    });

    const login = await passwordLogin(alice.user.email);
    expect(login.status, login.text).toBe(200);
    const claims = decodeJwt(login.body.accessToken as string);
    expect(claims).toMatchObject({ scope: 'partner', partnerId: a.partner.id });

    // The password is still hers to reset: the mail goes out.
    expect((await t.client().post('/auth/forgot-password', { email: alice.user.email })).status).toBe(200);
    await mail.waitFor(alice.user.email, (m) => /reset your password/i.test(m.subject));
  });

  it('the X membership needs SSO: a password session cannot switch into it', async () => {
    const a = await tenant(t);
    const b = await deadIdpOrg();
    const alice = await createUser(t, { email: `alice-${Date.now()}@${b.domain}`, password: PASSWORD });
    await addPartnerMember(t, { partnerId: a.partner.id, userId: alice.id, roleId: PARTNER_TECH });
    await addOrgMember(t, { orgId: b.org.id, userId: alice.id, roleId: ORG_VIEWER });
    const login = await passwordLogin(alice.email);
    expect(login.status, login.text).toBe(200);
    const api = t.client().withToken(login.body.accessToken as string);
    const into = await api.post('/auth/switch-context', { orgId: b.org.id });
    expect(into.status, into.text).toBe(403);
    expect(into.body.code).toBe('sso_enforced');
    // Back in partner A is fine.
    expect((await api.post('/auth/switch-context', { partnerId: a.partner.id })).status).toBe(200);
  });

  it('an account whose only membership is X still cannot use a password there', async () => {
    const b = await deadIdpOrg();
    const onlyX = await createUser(t, { email: `only-x@${b.domain}`, password: PASSWORD });
    await addOrgMember(t, { orgId: b.org.id, userId: onlyX.id, roleId: ORG_VIEWER });
    const refused = await passwordLogin(onlyX.email);
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('invalid_credentials');
  });
});

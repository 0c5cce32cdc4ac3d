// The built server's routes that load a package on first use, each driven over HTTP to a signed-in answer: a passkey
// registered and used at sign-in (WebAuthn), a phone number checked and confirmed by an SMS through a
// Twilio-compatible sink (phone numbers, outbound HTTP), OpenID Connect sign-in at a real provider, and SAML sign-in
// at a real IdP (SAML, XML signatures). A bundle that breaks any of these packages fails here, not in production.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDns, testDns } from '../support/dns.js';
import { callbackFor, runSsoLogin, startOidcProvider, type TestIdp } from '../support/oidc.js';
import { runSamlLogin, samlUser, startSamlIdp, type TestSamlIdp } from '../support/saml-idp.js';
import { startSmsSink, type SmsSink } from '../support/sms-sink.js';
import { createCredential, getAssertion } from '../support/webauthn.js';
import { expectSignedIn, firstAdmin, ORG_TECHNICIAN_ROLE_ID, uniq, type Admin } from './flows.js';
import { startBuiltServer, type BuiltServer } from './server.js';

let server: BuiltServer;
let sms: SmsSink;
let oidc: TestIdp;
let saml: TestSamlIdp;
let admin: Admin;
let dns: TestDns;

beforeAll(async () => {
  sms = await startSmsSink();
  dns = await testDns();
  server = await startBuiltServer({ ...sms.env(), SSO_ALLOW_INSECURE_ISSUERS: 'true', DNS_SERVERS: dns.address });
  oidc = await startOidcProvider({ redirectUris: [callbackFor(server.baseUrl)] });
  saml = await startSamlIdp();
  admin = await firstAdmin(server);
}, 240_000);
afterAll(async () => {
  await server?.close();
  await sms?.close();
  await oidc?.close();
  await saml?.close();
});

/**
 * A new organisation of the admin's partner that proves its domain by a TXT record at the test's DNS server, and whose
 * users sign in at the given IdP (auto-provisioned technicians).
 */
async function orgWithProvider(settings: Record<string, unknown>) {
  const org = await admin.api.raw.post('/orgs/organizations', { name: `Org ${uniq()}` });
  expect(org.status, org.text).toBe(201);
  const domain = `corp-${uniq()}.example.com`;
  const claim = await admin.api.raw.post('/domains', { domain, orgId: org.body.id });
  expect(claim.status, claim.text).toBe(201);
  dns.publish(claim.body.txtName, claim.body.txtValue);
  const proven = await admin.api.raw.post(`/domains/${claim.body.id}/verify`, {});
  expect(proven.status, proven.text).toBe(200);
  const created = await admin.api.raw.post('/sso/providers', {
    name: `IdP ${uniq()}`,
    orgId: org.body.id,
    autoProvision: true,
    defaultRoleId: ORG_TECHNICIAN_ROLE_ID,
    allowedDomains: domain,
    ...settings,
  });
  expect(created.status, created.text).toBe(201);
  const active = await admin.api.raw.post(
    `/sso/providers/${created.body.id}/status`,
    { status: 'active' },
    { query: { orgId: org.body.id } },
  );
  expect(active.status, active.text).toBe(200);
  return { orgId: org.body.id as string, domain };
}

describe('passkeys on the built server', () => {
  it('a passkey registered with the current password answers the sign-in challenge in place of TOTP', async () => {
    const opts = await admin.api.raw.post('/auth/passkeys/register/options', {
      currentPassword: admin.password,
      name: 'Laptop',
    });
    expect(opts.status, opts.text).toBe(200);
    const { response, credential } = createCredential(opts.body.options, server.baseUrl);
    const registered = await admin.api.raw.post('/auth/passkeys/register/verify', { credential: response });
    expect(registered.status, registered.text).toBe(201);

    const api = server.client();
    const login = await api.raw.post('/auth/login', { email: admin.email, password: admin.password });
    expect(login.body).toMatchObject({ mfaRequired: true, passkeyAvailable: true });
    const challenge = await api.raw.post('/auth/mfa/passkey/options', { tempToken: login.body.tempToken });
    expect(challenge.status, challenge.text).toBe(200);
    const assertion = getAssertion(challenge.body.options, server.baseUrl, credential);
    const res = await api.raw.post('/auth/mfa/passkey/verify', {
      tempToken: login.body.tempToken,
      credential: assertion,
    });
    expectSignedIn(api, res);
    expect((await api.raw.get('/auth/passkeys')).body.data).toHaveLength(1);
  });
});

describe('SMS on the built server', () => {
  it('a phone number is checked, a code goes out through the Twilio-compatible API, and confirming it verifies the phone', async () => {
    const phone = '+12025550143';
    const sent = await admin.api.raw.post('/auth/phone/verify', { phoneNumber: phone });
    expect(sent.status, sent.text).toBe(200);
    await sms.waitFor(phone, undefined, 15_000);
    const bad = await admin.api.raw.post('/auth/phone/verify', { phoneNumber: '+1202555' });
    expect(bad.status, bad.text).toBe(400);
    const confirmed = await admin.api.raw.post('/auth/phone/confirm', { code: sms.lastCode(phone) });
    expect(confirmed.status, confirmed.text).toBe(200);
    expect((await admin.api.raw.get('/users/me')).body).toMatchObject({ phoneVerified: true, phoneLast4: '0143' });
  });
});

describe('single sign-on on the built server', () => {
  it('OpenID Connect: the redirect chain through a real provider ends in a code that signs a new user in', async () => {
    const s = await orgWithProvider({ issuer: oidc.issuer, clientId: oidc.clientId, clientSecret: oidc.clientSecret });
    const email = `oidc.user@${s.domain}`;
    const r = await runSsoLogin(server, s.orgId, {
      idp: oidc,
      user: { sub: `sub-${randomUUID()}`, email, email_verified: true, name: 'OIDC User' },
      redirect: '/dashboard',
    });
    expect(r.error, r.location ?? '').toBeNull();
    expect(r.location!.startsWith(`${server.baseUrl}/dashboard#ssoCode=`)).toBe(true);
    const api = server.client();
    const res = await api.raw.post('/sso/exchange', { code: r.ssoCode });
    expectSignedIn(api, res);
    expect(res.body.user).toMatchObject({ email, orgId: s.orgId, roleId: ORG_TECHNICIAN_ROLE_ID });
  });

  it('SAML: the IdP form posted to the ACS ends in a code that signs a new user in', async () => {
    const s = await orgWithProvider({ type: 'saml', metadataXml: saml.metadataXml });
    saml.user = samlUser(`saml.user@${s.domain}`, { name: 'SAML User' });
    const r = await runSamlLogin(server, s.orgId, { redirect: '/dashboard' });
    expect(r.error, r.location ?? '').toBeNull();
    const api = server.client();
    const res = await api.raw.post('/sso/exchange', { code: r.ssoCode });
    expectSignedIn(api, res);
    expect(res.body.user).toMatchObject({ email: saml.user.email, orgId: s.orgId, roleId: ORG_TECHNICIAN_ROLE_ID });
  });
});

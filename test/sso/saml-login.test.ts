// SAML 2.0 sign-in against a real IdP (samlify, in-process on loopback, its own key pair): SP-initiated login through
// the whole chain (/sso/login → IdP → form POST to the ACS → 303 → /sso/saml/return → #ssoCode → /sso/exchange),
// auto-provisioning and linking through the same code paths as OIDC, provider administration from metadata,
// our SP metadata, /test with the certificates' expiry, and the SAML presets.
import { and, eq, sql } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogs, organizationUsers, ssoIdentities, users } from '../../src/db/schema/index.js';
import { startApp, type TestApp } from '../support/app.js';
import { addOrgMember, createUser } from '../support/fixtures.js';
import { runSamlLogin, samlUser, startSamlIdp, type TestSamlIdp } from '../support/saml-idp.js';
import { exchange, orgWithSamlProvider, ORG_TECHNICIAN_ROLE_ID } from './helpers.js';

let t: TestApp;
let idp: TestSamlIdp;

beforeAll(async () => {
  t = await startApp({ SSO_ALLOW_INSECURE_ISSUERS: 'true' });
  idp = await startSamlIdp();
});
afterAll(async () => {
  await t?.close();
  await idp?.close();
});

const usersWithEmail = async (email: string) =>
  t.deps.db.select().from(users).where(sql`lower(${users.email}) = lower(${email})`);
const audit = (action: string, userId: string) =>
  t.deps.db
    .select()
    .from(auditLogs)
    .where(and(eq(auditLogs.action, action), eq(auditLogs.actorUserId, userId)));

describe('SP-initiated SAML sign-in with auto-provisioning', () => {
  it('runs the chain through the IdP, lands on the requested path with #ssoCode, and the code yields tokens for the new account', async () => {
    const s = await orgWithSamlProvider(t, idp, { autoProvision: true, defaultRoleId: ORG_TECHNICIAN_ROLE_ID });
    idp.user = samlUser(`new.user@${s.domain}`, { name: 'New User' });
    const r = await runSamlLogin(t, s.org.id, { redirect: '/dashboard' });
    expect(r.error).toBeNull();
    expect(r.location!.startsWith(`${t.deps.config.appUrl}/dashboard#ssoCode=`)).toBe(true);

    const res = await exchange(t, r.ssoCode!);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      tokenType: 'Bearer',
      user: {
        email: idp.user.email,
        name: 'New User',
        orgId: s.org.id,
        roleId: ORG_TECHNICIAN_ROLE_ID,
        scope: 'organization',
      },
    });
    expect(decodeJwt(res.body.accessToken)).toMatchObject({ orgId: s.org.id, mfa: false });
    // The code is single-use.
    expect((await exchange(t, r.ssoCode!)).status).toBe(401);

    const [u] = await usersWithEmail(idp.user.email!);
    expect(u).toMatchObject({ status: 'active', passwordHash: null });
    const [membership] = await t.deps.db.select().from(organizationUsers).where(eq(organizationUsers.userId, u!.id));
    expect(membership).toMatchObject({ orgId: s.org.id, roleId: ORG_TECHNICIAN_ROLE_ID });
    const links = await t.deps.db.select().from(ssoIdentities).where(eq(ssoIdentities.userId, u!.id));
    expect(links).toEqual([expect.objectContaining({ providerId: s.provider.id, subject: idp.user.nameId })]);
    expect(await audit('user.sso.provision', u!.id)).toHaveLength(1);

    // The second sign-in finds the link: no second account.
    const again = await runSamlLogin(t, s.org.id);
    expect(again.ssoCode).toBeTruthy();
    expect(await usersWithEmail(idp.user.email!)).toHaveLength(1);
  });
});

describe('an existing member signs in through the SAML provider (the same linking rule as OIDC)', () => {
  it("a password member whose memberships all lie in the provider's organisation is linked at once and audited", async () => {
    const s = await orgWithSamlProvider(t, idp);
    const member = await createUser(t, { email: `member@${s.domain}`, password: 'a long and strong password 1!' });
    await addOrgMember(t, { orgId: s.org.id, userId: member.id, roleId: ORG_TECHNICIAN_ROLE_ID });
    idp.user = samlUser(member.email);
    const r = await runSamlLogin(t, s.org.id);
    expect(r.error).toBeNull();
    const res = await exchange(t, r.ssoCode!);
    expect(res.status, res.text).toBe(200);
    expect(res.body.user).toMatchObject({ id: member.id, orgId: s.org.id });
    const links = await t.deps.db.select().from(ssoIdentities).where(eq(ssoIdentities.userId, member.id));
    expect(links).toEqual([expect.objectContaining({ providerId: s.provider.id, subject: idp.user.nameId })]);
    expect(await audit('sso.identity.link', member.id)).toEqual([
      expect.objectContaining({ details: expect.objectContaining({ how: 'automatic' }) }),
    ]);
  });

  it("a member who also belongs elsewhere is sent to the console's link page, as with OIDC", async () => {
    const s = await orgWithSamlProvider(t, idp);
    const other = await orgWithSamlProvider(t, idp);
    const member = await createUser(t, { email: `twice@${s.domain}`, password: 'a long and strong password 1!' });
    await addOrgMember(t, { orgId: s.org.id, userId: member.id });
    await addOrgMember(t, { orgId: other.org.id, userId: member.id });
    idp.user = samlUser(member.email);
    const r = await runSamlLogin(t, s.org.id);
    expect(r.ssoCode).toBeNull();
    expect(new URL(r.location!).pathname).toBe('/sso/link');
  });

  it('without auto-provisioning an unknown person is refused with user_not_found', async () => {
    const s = await orgWithSamlProvider(t, idp);
    idp.user = samlUser(`stranger@${s.domain}`);
    expect((await runSamlLogin(t, s.org.id)).error).toBe('user_not_found');
  });

  it('an address outside allowedDomains is refused with domain_not_allowed', async () => {
    const s = await orgWithSamlProvider(t, idp, { autoProvision: true, defaultRoleId: ORG_TECHNICIAN_ROLE_ID });
    idp.user = samlUser('someone@elsewhere.example.org');
    expect((await runSamlLogin(t, s.org.id)).error).toBe('domain_not_allowed');
  });
});

describe('trustIdpMfa with SAML: an AuthnContextClassRef naming a second factor', () => {
  it('yields mfa:true when on, and mfa:false when off', async () => {
    for (const trust of [true, false]) {
      const s = await orgWithSamlProvider(t, idp, {
        autoProvision: true,
        defaultRoleId: ORG_TECHNICIAN_ROLE_ID,
        trustIdpMfa: trust,
      });
      idp.user = samlUser(`mfa-${trust}@${s.domain}`, {
        authnContext: 'http://schemas.microsoft.com/claims/multipleauthn',
      });
      const r = await runSamlLogin(t, s.org.id);
      const res = await exchange(t, r.ssoCode!);
      expect(decodeJwt(res.body.accessToken).mfa).toBe(trust);
    }
  });
});

describe('SAML provider administration', () => {
  it('creates from metadata by URL (entity id, SSO URL, certificates read from it) and shows what to register at the IdP', async () => {
    const s = await orgWithSamlProvider(t, idp, { byUrl: true });
    const got = await s.api.get(`/sso/providers/${s.provider.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      type: 'saml',
      issuer: idp.entityId,
      entityId: `${t.deps.config.publicUrl}/api/v1/sso/saml/${s.provider.id}/metadata`,
      spMetadataUrl: `${t.deps.config.publicUrl}/api/v1/sso/saml/${s.provider.id}/metadata`,
      acsUrl: `${t.deps.config.publicUrl}/api/v1/sso/saml/acs`,
      metadataUrl: idp.metadataUrl,
      ssoUrl: expect.stringMatching(/\/sso$/),
      hasClientSecret: false,
    });
    expect(got.body).not.toHaveProperty('metadataXml');
  });

  it('serves our SP metadata: entity id, the ACS (HTTP-POST), signed assertions wanted', async () => {
    const s = await orgWithSamlProvider(t, idp);
    const res = await fetch(`${t.baseUrl}/api/v1/sso/saml/${s.provider.id}/metadata`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/samlmetadata\+xml/);
    const xml = await res.text();
    expect(xml).toContain(`entityID="${t.deps.config.publicUrl}/api/v1/sso/saml/${s.provider.id}/metadata"`);
    expect(xml).toMatch(/WantAssertionsSigned="true"/);
    expect(xml).toContain(`Location="${t.deps.config.publicUrl}/api/v1/sso/saml/acs"`);
    expect((await fetch(`${t.baseUrl}/api/v1/sso/saml/00000000-0000-4000-8000-00000000dead/metadata`)).status).toBe(
      404,
    );
  });

  it("POST /test fetches and reads the metadata and reports each certificate's expiry; an IdP whose only certificate expired fails it", async () => {
    const s = await orgWithSamlProvider(t, idp, { byUrl: true });
    const ok = await s.api.post(`/sso/providers/${s.provider.id}/test`, {});
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      ok: true,
      type: 'saml',
      issuer: idp.entityId,
      certificates: [
        { expired: false, notAfter: expect.any(String), fingerprintSha256: expect.stringMatching(/^[0-9A-F:]+$/) },
      ],
    });
    expect(new Date(ok.body.certificates[0]!.notAfter).getTime()).toBeGreaterThan(Date.now());

    const stale = await startSamlIdp({ certNotAfter: new Date(Date.now() - 86_400_000) });
    try {
      const s2 = await orgWithSamlProvider(t, stale, { byUrl: true });
      const bad = await s2.api.post(`/sso/providers/${s2.provider.id}/test`, {});
      expect(bad.body).toMatchObject({ ok: false, error: expect.stringMatching(/expired/) });
    } finally {
      await stale.close();
    }
  });

  it("refuses SAML metadata that is not an IdP's, both metadata sources at once, and OIDC settings on a SAML provider", async () => {
    const s = await orgWithSamlProvider(t, idp);
    const notIdp = await s.api.post('/sso/providers', {
      type: 'saml',
      name: 'x',
      orgId: s.org.id,
      metadataXml: '<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"/>',
    });
    expect(notIdp.status).toBe(400);
    expect(notIdp.body.code).toBe('validation_failed');
    const both = await s.api.post('/sso/providers', {
      type: 'saml',
      name: 'x',
      orgId: s.org.id,
      metadataXml: idp.metadataXml,
      metadataUrl: idp.metadataUrl,
    });
    expect(both.status).toBe(400);
    const foreign = await s.api.patch(`/sso/providers/${s.provider.id}`, { clientId: 'abc' });
    expect(foreign.status).toBe(400);
    expect(foreign.body.code).toBe('validation_failed');
  });

  it('GET /sso/check names the SAML provider and its login URL', async () => {
    const s = await orgWithSamlProvider(t, idp);
    const res = await t.client().get(`/sso/check/${s.org.id}`);
    expect(res.body).toMatchObject({
      ssoEnabled: true,
      type: 'saml',
      loginUrl: `${t.deps.config.publicUrl}/api/v1/sso/login/${s.org.id}`,
    });
  });
});

describe('GET /sso/presets: SAML variants', () => {
  it('all eight IdPs offer SAML, each with a metadata URL pattern (or a download), the ACS URL and entity id to register, attribute names and a note', async () => {
    const s = await orgWithSamlProvider(t, idp);
    const res = await s.api.get('/sso/presets');
    const ids = ['entra', 'okta', 'google', 'auth0', 'keycloak', 'jumpcloud', 'onelogin', 'pingone'];
    for (const id of ids) {
      const p = res.body.data.find((x: { id: string }) => x.id === id)!;
      expect(p.saml, id).toMatchObject({
        acsUrl: `${t.deps.config.publicUrl}/api/v1/sso/saml/acs`,
        entityIdTemplate: `${t.deps.config.publicUrl}/api/v1/sso/saml/{providerId}/metadata`,
        emailAttribute: expect.any(String),
        nameAttribute: expect.any(String),
        notes: expect.stringMatching(/\S{3}/),
      });
      if (p.saml!.metadataUrlTemplate !== null) expect(p.saml!.metadataUrlTemplate).toMatch(/^https:\/\//);
    }
    expect(res.body.data.find((x: { id: string }) => x.id === 'generic')!.saml).toBeUndefined();
  });
});

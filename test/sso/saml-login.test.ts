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

const usersWithEmail = async (email: string) => t.deps.db.select().from(users).where(sql`lower(${users.email}) = lower(${email})`);
const audit = (action: string, userId: string) => t.deps.db.select().from(auditLogs).where(and(eq(auditLogs.action, action), eq(auditLogs.actorUserId, userId)));

describe('SP-initiated SAML sign-in with auto-provisioning', () => {
  it('runs the chain through the IdP, lands on the requested path with #ssoCode, and the code yields tokens for the new account', async () => {
    const s = await orgWithSamlProvider(t, idp, { autoProvision: true, defaultRoleId: ORG_TECHNICIAN_ROLE_ID });
    idp.user = samlUser(`new.user@${s.domain}`, { name: 'New User' });
    const r = await runSamlLogin(t, s.org.id, { redirect: '/dashboard' });
    expect(r.error).toBeNull();
    expect(r.location!.startsWith(`${t.deps.config.appUrl}/dashboard#ssoCode=`)).toBe(true);

    const res = await exchange(t, r.ssoCode!);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ tokenType: 'Bearer', user: { email: idp.user.email, name: 'New User', orgId: s.org.id, roleId: ORG_TECHNICIAN_ROLE_ID, scope: 'organization' } });
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

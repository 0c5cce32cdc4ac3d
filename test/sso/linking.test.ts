// Existing accounts and SSO: the link flow, sessions begun at an IdP, enforceSSO that cannot lock an
// organisation out, the user's own links, trustIdpMfa. Everything through HTTP against a real OpenID Provider.
import { decodeJwt } from 'jose';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogs, ssoIdentities, users } from '../../src/db/schema/index.js';
import { PARTNER_ADMIN_ROLE_ID } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import { addOrgMember, addPartnerMember, createOrg, createUser } from '../support/fixtures.js';
import { callbackFor, runSsoLogin, startOidcProvider, type TestIdp } from '../support/oidc.js';
import { exchange, idpUser, linkFlowOf, orgWithProvider, ORG_TECHNICIAN_ROLE_ID, setStatus } from './helpers.js';

let t: TestApp;
let idp: TestIdp;
const PASSWORD = 'correct horse battery staple 42';

beforeAll(async () => {
  t = await startApp({ SSO_ALLOW_INSECURE_ISSUERS: 'true', RATE_LIMIT_LOGIN: '1000/900' });
  idp = await startOidcProvider({ redirectUris: [callbackFor(t.baseUrl)] });
});
afterAll(async () => {
  await t?.close();
  await idp?.close();
});

const links = (userId: string) => t.deps.db.select().from(ssoIdentities).where(eq(ssoIdentities.userId, userId));
const audits = (action: string, userId: string) =>
  t.deps.db
    .select()
    .from(auditLogs)
    .where(and(eq(auditLogs.action, action), eq(auditLogs.actorUserId, userId)));

/** An organisation with a provider, and a member who also belongs to a second organisation (so no automatic link). */
async function memberOfTwo() {
  const s = await orgWithProvider(t, idp);
  const other = await createOrg(t, s.partner.id);
  const member = await createUser(t, { email: `two.orgs.${Date.now()}@${s.domain}`, password: PASSWORD });
  await addOrgMember(t, { orgId: s.org.id, userId: member.id, roleId: ORG_TECHNICIAN_ROLE_ID });
  await addOrgMember(t, { orgId: other.id, userId: member.id, roleId: ORG_TECHNICIAN_ROLE_ID });
  return { ...s, other, member };
}

describe('an account with access beyond the provider proves itself once on the link page', () => {
  it('leads the callback to APP_URL/sso/link?flow= and links only after the password; the flow is single-use', async () => {
    const s = await memberOfTwo();
    const who = idpUser(s.member.email);
    const r = await runSsoLogin(t, s.org.id, { idp, user: who });
    const flow = linkFlowOf(r.location)!;
    expect(r.location!.startsWith(`${t.deps.config.appUrl}/sso/link?flow=`)).toBe(true);
    expect(await links(s.member.id)).toHaveLength(0);

    const preview = await t.client().post('/sso/link/preview', { flow });
    expect(preview.status, preview.text).toBe(200);
    expect(preview.body).toMatchObject({ email: s.member.email, providerName: s.provider.name, codeRequired: false });

    const wrong = await t.client().post('/sso/link', { flow, password: 'not the password at all' });
    expect([wrong.status, wrong.body.code]).toEqual([401, 'invalid_credentials']);
    expect(await links(s.member.id)).toHaveLength(0);

    const ok = await t.client().post('/sso/link', { flow, password: PASSWORD });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.user.id).toBe(s.member.id);
    expect(decodeJwt(ok.body.accessToken)).toMatchObject({ scope: 'organization', orgId: s.org.id });
    expect(await links(s.member.id)).toEqual([
      expect.objectContaining({ providerId: s.provider.id, subject: who.sub }),
    ]);
    expect(await audits('sso.identity.link', s.member.id)).toEqual([
      expect.objectContaining({ details: expect.objectContaining({ how: 'confirmed' }) }),
    ]);

    const again = await t.client().post('/sso/link', { flow, password: PASSWORD });
    expect([again.status, again.body.code]).toEqual([400, 'sso_link_invalid']);
    // Linked now: the next sign-in goes straight through.
    const next = await runSsoLogin(t, s.org.id, { idp, user: who });
    expect((await exchange(t, next.ssoCode!)).status).toBe(200);
  });

  it('two confirmations of one flow at once: exactly one links and signs in', async () => {
    const s = await memberOfTwo();
    const flow = linkFlowOf((await runSsoLogin(t, s.org.id, { idp, user: idpUser(s.member.email) })).location)!;
    const answers = await Promise.all([1, 2, 3].map(() => t.client().post('/sso/link', { flow, password: PASSWORD })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400, 400]);
    expect(await links(s.member.id)).toHaveLength(1);
  });

  it('five wrong passwords end the flow', async () => {
    const s = await memberOfTwo();
    const flow = linkFlowOf((await runSsoLogin(t, s.org.id, { idp, user: idpUser(s.member.email) })).location)!;
    for (let i = 0; i < 5; i++)
      expect((await t.client().post('/sso/link', { flow, password: `wrong ${i} password` })).status).toBe(401);
    const late = await t.client().post('/sso/link', { flow, password: PASSWORD });
    expect([late.status, late.body.code]).toEqual([400, 'sso_link_invalid']);
  });

  it('the flow lives 10 minutes', async () => {
    const s = await memberOfTwo();
    const flow = linkFlowOf((await runSsoLogin(t, s.org.id, { idp, user: idpUser(s.member.email) })).location)!;
    t.clock.advance(10 * 60 * 1000 + 1000);
    try {
      const late = await t.client().post('/sso/link', { flow, password: PASSWORD });
      expect([late.status, late.body.code]).toEqual([400, 'sso_link_invalid']);
    } finally {
      t.clock.advance(-(10 * 60 * 1000 + 1000));
    }
  });
});

describe('a session begun at an organisation’s IdP acts in that organisation only', () => {
  it('switch-context to another membership asks for the password, then works', async () => {
    const s = await memberOfTwo();
    const flow = linkFlowOf((await runSsoLogin(t, s.org.id, { idp, user: idpUser(s.member.email) })).location)!;
    const signedIn = await t.client().post('/sso/link', { flow, password: PASSWORD });
    const api = t.client().withToken(signedIn.body.accessToken);
    const refused = await api.post('/auth/switch-context', { orgId: s.other.id });
    expect([refused.status, refused.body.code]).toEqual([403, 'password_confirmation_required']);
    const wrong = await api.post('/auth/switch-context', { orgId: s.other.id, password: 'not the password at all' });
    expect([wrong.status, wrong.body.code]).toEqual([400, 'invalid_credentials']);
    const moved = await api.post('/auth/switch-context', { orgId: s.other.id, password: PASSWORD });
    expect(moved.status, moved.text).toBe(200);
    expect(decodeJwt(moved.body.accessToken)).toMatchObject({ orgId: s.other.id });
  });
});

describe('enforceSSO can never lock the organisation out', () => {
  it('enforces only while the provider is active; deactivating lifts it at once', async () => {
    const s = await orgWithProvider(t, idp, { enforceSSO: true });
    const member = await createUser(t, { email: `enforced@${s.domain}`, password: PASSWORD });
    await addOrgMember(t, { orgId: s.org.id, userId: member.id });
    expect((await t.client().post('/auth/login', { email: member.email, password: PASSWORD })).status).toBe(401);
    expect((await setStatus(s.api, s.provider.id, 'testing', null)).status).toBe(200);
    expect((await t.client().post('/auth/login', { email: member.email, password: PASSWORD })).status).toBe(200);
    expect((await setStatus(s.api, s.provider.id, 'inactive', null)).status).toBe(200);
    expect((await t.client().post('/auth/login', { email: member.email, password: PASSWORD })).status).toBe(200);
  });

  it("the partner's admins keep password sign-in (break-glass); /sso/check answers only what a sign-in page needs", async () => {
    const s = await orgWithProvider(t, idp, { enforceSSO: true });
    const admin = await createUser(t, { email: `break.glass@${s.domain}`, password: PASSWORD });
    await addPartnerMember(t, { partnerId: s.partner.id, userId: admin.id, roleId: PARTNER_ADMIN_ROLE_ID });
    await addOrgMember(t, { orgId: s.org.id, userId: admin.id });
    const login = await t.client().post('/auth/login', { email: admin.email, password: PASSWORD });
    expect(login.status, login.text).toBe(200);
    const check = await t.client().get(`/sso/check/${s.org.id}`);
    expect(check.body).toEqual({
      ssoEnabled: true,
      providerName: expect.any(String),
      type: 'oidc',
      enforceSSO: true,
      loginUrl: `${t.deps.config.publicUrl}/api/v1/sso/login/${s.org.id}`,
    });
  });

  it('turning enforceSSO on for a provider never tested answers warnings: ["provider_untested"], not a refusal', async () => {
    const s = await orgWithProvider(t, idp);
    const on = await s.api.patch(`/sso/providers/${s.provider.id}`, { enforceSSO: true });
    expect(on.status, on.text).toBe(200);
    expect(on.body).toMatchObject({ enforceSSO: true, warnings: ['provider_untested'], lastTestedAt: null });
    const tested = await s.api.post(`/sso/providers/${s.provider.id}/test`);
    expect(tested.body.ok, tested.text).toBe(true);
    const again = await s.api.patch(`/sso/providers/${s.provider.id}`, { enforceSSO: true });
    expect(again.body.warnings).toBeUndefined();
    expect(typeof again.body.lastTestedAt).toBe('string');
  });
});

describe('users see and remove their own links; the last way in cannot be removed', () => {
  it('lists, unlinks with audit, and refuses to unlink the only sign-in method', async () => {
    const s = await orgWithProvider(t, idp, { autoProvision: true, defaultRoleId: ORG_TECHNICIAN_ROLE_ID });
    const res = await exchange(
      t,
      (await runSsoLogin(t, s.org.id, { idp, user: idpUser(`only.sso.${Date.now()}@${s.domain}`) })).ssoCode!,
    );
    const api = t.client().withToken(res.body.accessToken);
    const mine = await api.get('/auth/identities');
    expect(mine.status, mine.text).toBe(200);
    expect(mine.body.data).toEqual([expect.objectContaining({ providerId: s.provider.id, type: 'oidc' })]);
    const refused = await api.delete(`/auth/identities/${mine.body.data[0]!.id}`);
    expect([refused.status, refused.body.code]).toEqual([403, 'last_sign_in_method']);

    const adminView = await s.api.get('/sso/identities', { query: { userId: res.body.user.id, orgId: s.org.id } });
    expect(adminView.status, adminView.text).toBe(200);
    expect(adminView.body.data).toHaveLength(1);

    await t.deps.db.update(users).set({ passwordHash: 'x' }).where(eq(users.id, res.body.user.id)); // now another way in exists
    const ok = await api.delete(`/auth/identities/${mine.body.data[0]!.id}`);
    expect(ok.status, ok.text).toBe(200);
    expect(await links(res.body.user.id)).toHaveLength(0);
    expect(await audits('sso.identity.unlink', res.body.user.id)).toHaveLength(1);
  });

  it("another user's identity is 404", async () => {
    const s = await orgWithProvider(t, idp, { autoProvision: true, defaultRoleId: ORG_TECHNICIAN_ROLE_ID });
    const a = await exchange(
      t,
      (await runSsoLogin(t, s.org.id, { idp, user: idpUser(`a.${Date.now()}@${s.domain}`) })).ssoCode!,
    );
    const [linkOfA] = await links(a.body.user.id);
    const res = await s.api.delete(`/auth/identities/${linkOfA!.id}`);
    expect([res.status, res.body.code]).toEqual([404, 'not_found']);
  });
});

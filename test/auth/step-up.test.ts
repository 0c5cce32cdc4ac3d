// Step-up: risky routes need a password or second-factor proof made in the acting session within
// STEP_UP_MAX_AGE. The walk below is driven by STEP_UP_ROUTES: a listed route without a case fails the suite.
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessions } from '../../src/db/schema/index.js';
import { assertStepUpRoutes, STEP_UP_ROUTES } from '../../src/http/step-up.js';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import { testDns } from '../support/dns.js';
import { callbackFor, startOidcProvider, type TestIdp } from '../support/oidc.js';
import { type ApiClient, type ApiResponse, errorBody } from '../support/client.js';
import {
  auditRecords,
  createOrg,
  createPartner,
  createSite,
  sessionFor,
  signedInOrgMember,
  signedInPartnerMember,
  type SignedInMember,
} from '../support/fixtures.js';
import { expectError } from '../mfa/helpers.js';
import { CSRF_COOKIE } from './helpers.js';

const [PARTNER_ADMIN, PARTNER_TECH, PARTNER_VIEWER, ORG_ADMIN] = SYSTEM_ROLES.map((r) => r.id as string) as [
  string,
  string,
  string,
  string,
];
const PASSWORD = 'Glacier-7f3a9c-Saffron!';
const MAX_AGE_MS = 600_000;
const uniq = () => randomBytes(4).toString('hex');

let t: TestApp;
let partnerId: string;
let orgId: string;
let siteId: string;
let admin: SignedInMember;
let orgAdminId: string;
let idp: TestIdp;

beforeAll(async () => {
  t = await startApp({ SSO_ALLOW_INSECURE_ISSUERS: 'true' });
  idp = await startOidcProvider({ redirectUris: [callbackFor(t.baseUrl)] });
  const partner = await createPartner(t);
  partnerId = partner.id;
  orgId = (await createOrg(t, partnerId)).id;
  siteId = (await createSite(t, orgId)).id;
  admin = await signedInPartnerMember(t, partnerId, { password: PASSWORD });
  orgAdminId = (await signedInOrgMember(t, { id: orgId, partnerId }, { password: PASSWORD })).user.id;
});
afterAll(async () => {
  await t?.close();
  await idp?.close();
});

/** A fresh session of the admin, as a new sign-in gives (auth_time = now). */
async function freshAdmin(): Promise<ApiClient> {
  const s = await sessionFor(t, admin.user.id, { scope: 'partner', partnerId, roleId: PARTNER_ADMIN }, true);
  return t.client().withToken(s.accessToken);
}

/** Ages every session past STEP_UP_MAX_AGE (access tokens live 15 minutes, so they stay valid). */
const age = () => t.clock.advance(MAX_AGE_MS + 60_000);

interface Call {
  method: 'POST' | 'PATCH' | 'DELETE';
  path: string;
  body?: unknown;
  query?: Record<string, string>;
  /** The caller when it is not the partner's admin (an organisation's admin decides a relationship). */
  as?: ApiClient;
}
type Case = (api: ApiClient) => Promise<Call>;

const created = (res: ApiResponse) => {
  expect(res.status, res.text).toBeLessThan(300);
  return res.body.id as string;
};
const newRole = async (api: ApiClient) =>
  created(await api.post('/roles', { name: `Role ${uniq()}`, permissions: [{ resource: 'devices', action: 'read' }] }));
const newMember = async (roleId = PARTNER_TECH) =>
  (await signedInPartnerMember(t, partnerId, { roleId, password: PASSWORD })).user.id;
const newProvider = async (api: ApiClient) => created(await api.post('/sso/providers', providerBody()));
/** A public address literal: passes the outbound guard without DNS; no event matches, so nothing is sent. */
const webhookBody = () => ({ url: 'https://93.184.215.14/hook', events: ['nothing.'] });
const newWebhook = async (api: ApiClient) => created(await api.post('/webhooks', webhookBody()));
const newServiceAccount = async (api: ApiClient) =>
  created(await api.post('/service-accounts', { name: `SA ${uniq()}`, roleId: PARTNER_VIEWER }));
/** A domain claim whose TXT record the test's DNS server publishes, so the verify call can succeed. */
/** A relationship with the organisation, asked for by the partner's admin, and a fresh session of the organisation's admin. */
const pendingRelationship = async (api: ApiClient, verdict: 'approve' | 'decline'): Promise<Call> => {
  const draft = await api.post('/relationships', {
    orgId,
    name: `Rel ${uniq()}`,
    roleIds: [PARTNER_VIEWER],
    duration: 'P30D',
  });
  const id = created(draft);
  expect((await api.post(`/relationships/${id}/request`)).status).toBe(200);
  const s = await sessionFor(t, orgAdminId, { scope: 'organization', partnerId, orgId, roleId: ORG_ADMIN }, true);
  return { method: 'POST', path: `/relationships/${id}/${verdict}`, as: t.client().withToken(s.accessToken) };
};
const newDomainClaim = async (api: ApiClient) => {
  const claim = await api.post('/domains', { domain: `d${uniq()}.example.com`.toLowerCase() });
  expect(claim.status, claim.text).toBe(201);
  (await testDns()).publish(claim.body.txtName, claim.body.txtValue);
  return claim.body.id as string;
};
const providerBody = () => ({
  name: `IdP ${uniq()}`,
  issuer: idp.issuer,
  clientId: idp.clientId,
  clientSecret: idp.clientSecret,
});

/** One case per listed route: prepares what the route needs (with a fresh session), then names the call. */
const CASES: Record<string, Case> = {
  'POST /api/v1/domains/:id/verify': async (api) => ({
    method: 'POST',
    path: `/domains/${await newDomainClaim(api)}/verify`,
    body: {},
  }),
  'DELETE /api/v1/domains/:id': async (api) => ({ method: 'DELETE', path: `/domains/${await newDomainClaim(api)}` }),
  'POST /api/v1/relationships/:id/approve': (api) => pendingRelationship(api, 'approve'),
  'POST /api/v1/relationships/:id/decline': (api) => pendingRelationship(api, 'decline'),
  // Lifting a freeze (set first, which needs no step-up: a brake is never slowed down).
  'DELETE /api/v1/orgs/partners/me/freeze': async (api) => {
    expect((await api.post('/orgs/partners/me/freeze', { reason: 'step-up walk' })).status).toBe(200);
    return { method: 'DELETE', path: '/orgs/partners/me/freeze' };
  },
  'DELETE /api/v1/orgs/organizations/:id/freeze': async (api) => {
    const org = await createOrg(t, partnerId);
    expect((await api.post(`/orgs/organizations/${org.id}/freeze`, { reason: 'step-up walk' })).status).toBe(200);
    return { method: 'DELETE', path: `/orgs/organizations/${org.id}/freeze` };
  },
  'POST /api/v1/governor/co-signs/:id/approve': async () => {
    const member = await signedInPartnerMember(t, partnerId, { roleId: PARTNER_TECH });
    return {
      method: 'POST',
      path: `/governor/co-signs/${created(await member.api.post('/governor/co-signs', { reason: 'walk' }))}/approve`,
    };
  },
  'POST /api/v1/roles': async () => ({
    method: 'POST',
    path: '/roles',
    body: { name: `Role ${uniq()}`, permissions: [{ resource: 'devices', action: 'read' }] },
  }),
  'PATCH /api/v1/roles/:id': async (api) => ({
    method: 'PATCH',
    path: `/roles/${await newRole(api)}`,
    body: { description: 'changed' },
  }),
  'DELETE /api/v1/roles/:id': async (api) => ({ method: 'DELETE', path: `/roles/${await newRole(api)}` }),
  'POST /api/v1/roles/:id/clone': async () => ({
    method: 'POST',
    path: `/roles/${PARTNER_VIEWER}/clone`,
    body: { name: `Clone ${uniq()}` },
  }),
  'POST /api/v1/users/:id/role': async () => ({
    method: 'POST',
    path: `/users/${await newMember()}/role`,
    body: { roleId: PARTNER_VIEWER },
  }),
  'POST /api/v1/users/invite': async () => ({
    method: 'POST',
    path: '/users/invite',
    body: { email: `admin-${uniq()}@example.test`, name: 'New Admin', roleId: PARTNER_ADMIN },
  }),
  'POST /api/v1/users/:id/mfa/reset': async () => ({ method: 'POST', path: `/users/${await newMember()}/mfa/reset` }),
  'PATCH /api/v1/users/:id': async () => ({
    method: 'PATCH',
    path: `/users/${await newMember()}`,
    body: { email: `moved-${uniq()}@example.test` },
  }),
  'PATCH /api/v1/users/me': async () => ({
    method: 'PATCH',
    path: '/users/me',
    body: { email: `mine-${uniq()}@example.test` },
  }),
  'POST /api/v1/sso/providers': async () => ({ method: 'POST', path: '/sso/providers', body: providerBody() }),
  'PATCH /api/v1/sso/providers/:id': async (api) => ({
    method: 'PATCH',
    path: `/sso/providers/${await newProvider(api)}`,
    body: { name: `Renamed ${uniq()}` },
  }),
  'DELETE /api/v1/sso/providers/:id': async (api) => ({
    method: 'DELETE',
    path: `/sso/providers/${await newProvider(api)}`,
  }),
  'POST /api/v1/sso/providers/:id/status': async (api) => ({
    method: 'POST',
    path: `/sso/providers/${await newProvider(api)}/status`,
    body: { status: 'inactive' },
  }),
  'POST /api/v1/enrollment-keys': async () => ({
    method: 'POST',
    path: '/enrollment-keys',
    body: { orgId, siteId, name: `Key ${uniq()}` },
  }),
  'PATCH /api/v1/orgs/organizations/:id': async () => ({
    method: 'PATCH',
    path: `/orgs/organizations/${orgId}`,
    body: { settings: { security: { requireMfa: false } } },
  }),
  'PATCH /api/v1/orgs/partners/me': async () => ({
    method: 'PATCH',
    path: '/orgs/partners/me',
    body: { settings: { security: { requireMfa: false } } },
  }),
  'POST /api/v1/webhooks': async () => ({ method: 'POST', path: '/webhooks', body: webhookBody() }),
  'PATCH /api/v1/webhooks/:id': async (api) => ({
    method: 'PATCH',
    path: `/webhooks/${await newWebhook(api)}`,
    body: { description: 'changed' },
  }),
  'DELETE /api/v1/webhooks/:id': async (api) => ({ method: 'DELETE', path: `/webhooks/${await newWebhook(api)}` }),
  'POST /api/v1/service-accounts/:id/keys': async (api) => ({
    method: 'POST',
    path: `/service-accounts/${await newServiceAccount(api)}/keys`,
    body: { name: `Key ${uniq()}` },
  }),
  'PATCH /api/v1/service-accounts/:id': async (api) => ({
    method: 'PATCH',
    path: `/service-accounts/${await newServiceAccount(api)}`,
    body: { roleId: PARTNER_TECH },
  }),
  'POST /api/v1/scim-tokens': async () => ({
    method: 'POST',
    path: '/scim-tokens',
    body: { name: `IdP ${uniq()}`, defaultRoleId: PARTNER_VIEWER },
  }),
};

// Paths built per case (a table of routes): sent untyped.
const send = (api: ApiClient, c: Call) => api.raw.request(c.method, c.path, { body: c.body, query: c.query });

describe('the risky-route list is complete and enforced', () => {
  it('every route carrying requireStepUp is listed, and every listed route carries it', () => {
    const guarded = t.app.registeredRoutes
      .filter((r) => r.stepUp)
      .map((r) => `${r.method} ${r.url}`)
      .sort();
    expect(guarded).toEqual(STEP_UP_ROUTES.map((r) => `${r.method} ${r.url}`).sort());
  });

  it('the app refuses to start when a guarded route is missing from the list or a listed one is unguarded', () => {
    const listed = STEP_UP_ROUTES.map((r) => ({ method: r.method, url: r.url, stepUp: true }));
    expect(() =>
      assertStepUpRoutes([...listed, { method: 'POST', url: '/api/v1/new-risky-route', stepUp: true }]),
    ).toThrow(/unlisted POST \/api\/v1\/new-risky-route/);
    expect(() => assertStepUpRoutes(listed.slice(1))).toThrow(/unguarded POST \/api\/v1\/roles/);
    expect(() => assertStepUpRoutes(listed)).not.toThrow();
  });

  it('every listed route has a case in this walk', () => {
    expect(STEP_UP_ROUTES.map((r) => `${r.method} ${r.url}`).filter((k) => !CASES[k])).toEqual([]);
  });
});

describe('each risky route refuses a stale session with 403 step_up_required and accepts after step-up', () => {
  for (const route of STEP_UP_ROUTES) {
    const key = `${route.method} ${route.url}`;
    it(key, async () => {
      const setup = await freshAdmin();
      const call = await CASES[key]!(setup);
      const api = call.as ?? setup;
      age();
      const refused = await send(api, call);
      expectError(refused, 403, 'step_up_required');
      expect(errorBody(refused).methods).toEqual(['password']);
      const step = await api.post('/auth/step-up', { password: PASSWORD });
      expect(step.status, step.text).toBe(200);
      api.token = step.body.accessToken;
      const accepted = await send(api, call);
      expect(accepted.status, accepted.text).toBeLessThan(300);
    });
  }
});

describe('a fresh sign-in is a fresh proof; conditional routes are risky only when the condition holds', () => {
  it('a session younger than STEP_UP_MAX_AGE passes without step-up', async () => {
    const api = await freshAdmin();
    t.clock.advance(MAX_AGE_MS - 60_000);
    expect((await api.post('/roles', { name: `Role ${uniq()}`, permissions: [] })).status).toBe(201);
  });

  it('inviting to a non-admin role, changing an organisation without touching its settings, or a profile without its e-mail, needs no step-up', async () => {
    const api = await freshAdmin();
    age();
    const invite = await api.post('/users/invite', {
      email: `viewer-${uniq()}@example.test`,
      name: 'Viewer',
      roleId: PARTNER_VIEWER,
    });
    expect(invite.status, invite.text).toBe(201);
    const rename = await api.patch(`/orgs/organizations/${orgId}`, { name: `Org ${uniq()}` });
    expect(rename.status, rename.text).toBe(200);
    const ownName = await api.patch('/users/me', { name: `Me ${uniq()}` });
    expect(ownName.status, ownName.text).toBe(200);
    expectError(await api.patch('/users/me', { email: `me-${uniq()}@example.test` }), 403, 'step_up_required');
    expectError(
      await api.post('/users/invite', {
        email: `tech-${uniq()}@example.test`,
        name: 'Admin-ish',
        roleId: PARTNER_ADMIN,
      }),
      403,
      'step_up_required',
    );
  });
});

describe('auth_time: carried in the access token, kept across refresh, renewed by step-up only', () => {
  it('sign-in sets auth_time; refresh keeps it; POST /auth/step-up renews it on the session row and in the token', async () => {
    const m = await signedInPartnerMember(t, partnerId, {
      roleId: PARTNER_TECH,
      password: PASSWORD,
      mfaEnabled: false,
    });
    const api = t.client();
    const seconds = () => Math.floor(t.clock.now().getTime() / 1000);
    const before = seconds();
    const login = await api.post('/auth/login', { email: m.user.email, password: PASSWORD });
    expect(login.status, login.text).toBe(200);
    const first = decodeJwt(login.body.accessToken) as { auth_time?: number; sid: string };
    expect(first.auth_time).toBeGreaterThanOrEqual(before);
    expect(first.auth_time).toBeLessThanOrEqual(seconds());
    age();
    const refreshed = await api.post('/auth/refresh', undefined, {
      headers: { 'x-service-csrf': api.cookies.get(CSRF_COOKIE)! },
    });
    expect(refreshed.status, refreshed.text).toBe(200);
    expect((decodeJwt(refreshed.body.accessToken) as { auth_time?: number }).auth_time).toBe(first.auth_time);
    api.token = refreshed.body.accessToken;
    const stepStart = seconds();
    const step = await api.post('/auth/step-up', { password: PASSWORD });
    expect(step.status, step.text).toBe(200);
    const stepped = decodeJwt(step.body.accessToken) as { auth_time?: number; sid: string };
    expect(stepped.sid).toBe(first.sid);
    expect(stepped.auth_time).toBeGreaterThanOrEqual(stepStart);
    expect(stepped.auth_time).toBeLessThanOrEqual(seconds());
    expect(stepped.auth_time! - first.auth_time!).toBeGreaterThanOrEqual(MAX_AGE_MS / 1000);
    const [row] = await t.deps.db.select().from(sessions).where(eq(sessions.id, first.sid));
    expect(row!.authTime!.getTime()).toBe(new Date(step.body.authTime).getTime());
    expect((await auditRecords(t, 'auth.step_up', first.sid)).map((a) => a.details)).toEqual([{ method: 'password' }]);
  });

  it('a wrong password is 400 invalid_credentials and renews nothing; a method the account lacks is 403 mfa_method_not_allowed', async () => {
    const api = await freshAdmin();
    age();
    expectError(await api.post('/auth/step-up', { password: 'not the password at all' }), 400, 'invalid_credentials');
    expectError(await api.post('/roles', { name: `Role ${uniq()}`, permissions: [] }), 403, 'step_up_required');
    const totp = await api.post('/auth/step-up', { code: '123456' });
    expectError(totp, 403, 'mfa_method_not_allowed');
    expect(errorBody(totp).methods).toEqual(['password']);
  });

  it('bad bodies are 400 validation_failed: none or two proofs, unknown fields', async () => {
    const api = await freshAdmin();
    expectError(await api.post('/auth/step-up', {}), 400, 'validation_failed');
    expectError(await api.post('/auth/step-up', { password: PASSWORD, code: '123456' }), 400, 'validation_failed');
    expectError(await api.raw.post('/auth/step-up', { password: PASSWORD, extra: 1 }), 400, 'validation_failed');
    expectError(await api.post('/auth/step-up', { code: 'abc' }), 400, 'validation_failed');
  });

  it('STEP_UP_MAX_AGE is configurable', async () => {
    const short = await startApp({ STEP_UP_MAX_AGE: '60' });
    try {
      expect(short.deps.config.stepUpMaxAge).toBe(60);
      const partner = await createPartner(short);
      const m = await signedInPartnerMember(short, partner.id, { password: PASSWORD });
      short.clock.advance(90_000);
      expectError(await m.api.post('/roles', { name: `Role ${uniq()}`, permissions: [] }), 403, 'step_up_required');
    } finally {
      await short.close();
    }
  });
});

// Shared set-up for the MFA, phone and passkey tests: members created directly, everything under test via HTTP.
import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { expect } from 'vitest';
import { auditLogs, partners, organizations, users } from '../../src/db/schema/index.js';
import { ERROR_CATALOG } from '../../src/http/errors.js';
import { totpFor } from '../../src/modules/mfa/codes.js';
import { ORG_ADMIN_ROLE_ID, PARTNER_ADMIN_ROLE_ID } from '../../src/modules/roles/catalog.js';
import type { TestApp } from '../support/app.js';
import type { ApiClient, ApiResponse } from '../support/client.js';
import { addOrgMember, addPartnerMember, createOrg, createPartner, createUser } from '../support/fixtures.js';
import { createCredential, getAssertion, type SoftCredential } from '../support/webauthn.js';

export const PASSWORD = 'correct horse battery staple 42';
export const REFRESH_COOKIE = 'service_refresh_token';
export const CSRF_COOKIE = 'service_csrf_token';

export const claimsOf = (accessToken: string) =>
  decodeJwt(accessToken) as { mfa?: boolean; sid?: string; sub?: string };

/** The statuses of concurrent answers, sorted: order of arrival says nothing. */
export const statuses = (responses: ApiResponse[]) => responses.map((r) => r.status).sort((a, b) => a - b);

/** A non-2xx answer in the API's error envelope, with the catalogued status for its code. */
export function expectError(res: ApiResponse, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }, res.text).toEqual({ status, code });
  expect(res.body).toMatchObject({ error: expect.any(String), message: expect.any(String), code });
  const entry = (ERROR_CATALOG as Record<string, { status: number }>)[code];
  expect(entry, `code ${code} is not in the catalogue`).toBeDefined();
  if (code !== 'invalid_credentials') expect(entry!.status).toBe(status);
}

export interface Member {
  user: typeof users.$inferSelect;
  partnerId: string;
  orgId: string | null;
  email: string;
  password: string;
}

/**
 * A user with a password in a fresh partner (kind 'partner') or organisation (kind 'org', the default).
 * The default roles: Organization Admin (no Force MFA) and Partner Admin (Force MFA).
 */
export async function member(
  t: TestApp,
  opts: {
    kind?: 'org' | 'partner';
    roleId?: string;
    orgSettings?: object;
    partnerSettings?: object;
    partnerId?: string;
    orgId?: string;
  } = {},
): Promise<Member> {
  const email = `mfa-${randomBytes(5).toString('hex')}@example.test`;
  const user = await createUser(t, { email, password: PASSWORD });
  let partnerId = opts.partnerId;
  if (!partnerId) {
    const partner = await createPartner(t);
    partnerId = partner.id;
    if (opts.partnerSettings)
      await t.deps.db.update(partners).set({ settings: opts.partnerSettings }).where(eq(partners.id, partner.id));
  }
  if (opts.kind === 'partner') {
    await addPartnerMember(t, { partnerId, userId: user.id, roleId: opts.roleId ?? PARTNER_ADMIN_ROLE_ID });
    return { user, partnerId, orgId: null, email, password: PASSWORD };
  }
  const orgId = opts.orgId ?? (await createOrg(t, partnerId, undefined, opts.orgSettings ?? {})).id;
  await addOrgMember(t, { orgId, userId: user.id, roleId: opts.roleId ?? ORG_ADMIN_ROLE_ID });
  return { user, partnerId, orgId, email, password: PASSWORD };
}

export async function setOrgSettings(t: TestApp, orgId: string, settings: object) {
  await t.deps.db.update(organizations).set({ settings }).where(eq(organizations.id, orgId));
}

/** POST /auth/login with a fresh cookie jar; for an account without MFA the client carries the tokens. */
export async function signIn(t: TestApp, email: string, password = PASSWORD): Promise<ApiClient> {
  const api = t.client();
  const res = await api.post('/auth/login', { email, password });
  if (res.status !== 200 || !res.body.accessToken) throw new Error(`login did not sign in: ${res.status} ${res.text}`);
  api.token = res.body.accessToken;
  return api;
}

/** POST /auth/login expecting the MFA branch; returns the challenge body and the (cookie-less) client. */
export async function challenge(t: TestApp, email: string, password = PASSWORD) {
  const api = t.client();
  const res = await api.post('/auth/login', { email, password });
  if (res.status !== 200 || !res.body.tempToken)
    throw new Error(`login did not ask for MFA: ${res.status} ${res.text}`);
  return {
    api,
    body: res.body as {
      mfaRequired: true;
      mfaMethod: string;
      tempToken: string;
      passkeyAvailable?: true;
      phoneLast4?: string;
    },
  };
}

/** The code of the authenticator app at the app's clock, `steps` periods away. */
export const totpCode = (t: TestApp, secret: string, steps = 0) =>
  totpFor(secret).generate({ timestamp: t.clock.now().getTime() + steps * 30_000 });

/** A code for a time step no earlier request has used: moves the clock to the next period first. */
export function freshTotp(t: TestApp, secret: string) {
  t.clock.advance(30_000);
  return totpCode(t, secret);
}

/** Setup + enable through HTTP; the client then carries the replacement (mfa: true) tokens. */
export async function enrolTotp(t: TestApp, api: ApiClient) {
  const setup = await api.post('/auth/mfa/setup');
  expect(setup.status, setup.text).toBe(200);
  const enable = await api.post('/auth/mfa/enable', { code: totpCode(t, setup.body.secret) });
  expect(enable.status, enable.text).toBe(200);
  api.token = enable.body.accessToken;
  return {
    secret: setup.body.secret as string,
    recoveryCodes: enable.body.recoveryCodes as string[],
    setup: setup.body,
    enable: enable.body,
  };
}

/** Signs in with password and a fresh TOTP code; the client carries tokens and cookies. */
export async function signInWithTotp(
  t: TestApp,
  email: string,
  secret: string,
  password = PASSWORD,
): Promise<ApiClient> {
  const { api, body } = await challenge(t, email, password);
  const res = await api.post('/auth/mfa/verify', { tempToken: body.tempToken, code: freshTotp(t, secret) });
  if (res.status !== 200) throw new Error(`MFA verify failed: ${res.status} ${res.text}`);
  api.token = res.body.accessToken;
  return api;
}

/** A signed-in member with TOTP enrolled, holding a session that passed MFA (tokens and refresh cookie). */
export async function totpMember(t: TestApp, opts: Parameters<typeof member>[1] = {}) {
  const m = await member(t, opts);
  const first = await signIn(t, m.email);
  const enrolled = await enrolTotp(t, first);
  const api = await signInWithTotp(t, m.email, enrolled.secret);
  return { ...m, ...enrolled, api, first };
}

/** Passkey registration options → software authenticator → verify. */
export async function registerPasskey(t: TestApp, api: ApiClient, name = 'Laptop', password = PASSWORD) {
  const opts = await api.post('/auth/passkeys/register/options', { currentPassword: password, name });
  expect(opts.status, opts.text).toBe(200);
  const { response, credential } = createCredential(opts.body.options, t.deps.config.appUrl);
  const verify = await api.post('/auth/passkeys/register/verify', { credential: response });
  expect(verify.status, verify.text).toBe(201);
  return {
    credential,
    passkey: verify.body.passkey as { id: string; name: string },
    options: opts.body.options,
    response,
  };
}

/** Login options for a tempToken and an assertion from the credential. */
export async function passkeyAssertion(
  t: TestApp,
  api: ApiClient,
  tempToken: string,
  credential: SoftCredential,
  opts: Parameters<typeof getAssertion>[3] = {},
) {
  const res = await api.post('/auth/mfa/passkey/options', { tempToken });
  expect(res.status, res.text).toBe(200);
  return {
    options: res.body.options,
    assertion: getAssertion(res.body.options, t.deps.config.appUrl, credential, opts),
  };
}

export async function auditOf(t: TestApp, action: string, resourceId?: string) {
  return t.deps.db
    .select()
    .from(auditLogs)
    .where(
      resourceId
        ? and(eq(auditLogs.action, action), eq(auditLogs.resourceId, resourceId))
        : eq(auditLogs.action, action),
    )
    .orderBy(auditLogs.seq);
}

export async function userRow(t: TestApp, userId: string) {
  const [row] = await t.deps.db.select().from(users).where(eq(users.id, userId));
  return row!;
}

export const PROTECTED_ROUTE = '/roles';

// Shared set-up for the sign-in tests: members created directly, everything under test driven through HTTP.
import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { auditLogs } from '../../src/db/schema/index.js';
import { ORG_ADMIN_ROLE_ID } from '../../src/modules/roles/catalog.js';
import type { TestApp } from '../support/app.js';
import type { ApiClient, ApiResponse } from '../support/client.js';
import { addOrgMember, createOrg, createPartner, createUser } from '../support/fixtures.js';

export const PASSWORD = 'correct horse battery staple 42';
export const REFRESH_COOKIE = 'service_refresh_token';
export const CSRF_COOKIE = 'service_csrf_token';

/** A password zxcvbn scores 4, different on every call. */
export const strongPassword = () => `Glacier-${randomBytes(5).toString('hex')}-Saffron!`;

export async function orgMember(
  t: TestApp,
  opts: { status?: 'active' | 'invited' | 'disabled'; password?: string | null; roleId?: string; email?: string } = {},
) {
  const partner = await createPartner(t);
  const org = await createOrg(t, partner.id);
  const user = await createUser(t, {
    email: opts.email,
    password: opts.password === null ? undefined : (opts.password ?? PASSWORD),
    status: opts.status,
  });
  await addOrgMember(t, { orgId: org.id, userId: user.id, roleId: opts.roleId ?? ORG_ADMIN_ROLE_ID });
  return { partner, org, user };
}

/** Signs in through POST /auth/login with a fresh cookie jar; the client carries the access token. */
export async function signIn(
  t: TestApp,
  email: string,
  password = PASSWORD,
): Promise<ApiClient & { refreshToken: string }> {
  const api = t.client();
  const res = await api.post('/auth/login', { email, password });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${res.text}`);
  api.token = res.body.accessToken;
  return Object.assign(api, { refreshToken: api.cookies.get(REFRESH_COOKIE)! });
}

/** POST /auth/refresh the way the console does it: cookie plus the CSRF cookie's value in the header. */
export async function refresh(api: ApiClient, headers: Record<string, string> = {}): Promise<ApiResponse> {
  const csrf = api.cookies.get(CSRF_COOKIE);
  const res = await api.post('/auth/refresh', undefined, {
    token: null,
    headers: { ...(csrf ? { 'x-service-csrf': csrf } : {}), ...headers },
  });
  if (res.status === 200) api.token = res.body.accessToken;
  return res;
}

/** A client whose jar holds the given refresh token (and a matching CSRF pair). */
export function clientWithRefreshToken(t: TestApp, refreshToken: string): ApiClient {
  const api = t.client();
  api.cookies.set(REFRESH_COOKIE, refreshToken);
  api.cookies.set(CSRF_COOKIE, randomBytes(16).toString('hex'));
  return api;
}

export const claimsOf = (accessToken: string) => decodeJwt(accessToken);

export async function auditOf(t: TestApp, action: string, actorUserId?: string) {
  return t.deps.db
    .select()
    .from(auditLogs)
    .where(
      actorUserId
        ? and(eq(auditLogs.action, action), eq(auditLogs.actorUserId, actorUserId))
        : eq(auditLogs.action, action),
    )
    .orderBy(auditLogs.seq);
}

/** The statuses of concurrent answers, sorted: order of arrival says nothing. */
export const statuses = (responses: ApiResponse[]) => responses.map((r) => r.status).sort((a, b) => a - b);

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

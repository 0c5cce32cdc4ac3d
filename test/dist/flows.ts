// Steps the tests and benchmarks of the built server share, each over HTTP only, as a browser or the console would
// take them. Checked with node:assert (no vitest), so bench/ runs them from plain node.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import type { ApiClient, ApiResponse } from '../support/client.js';
import { tokenOf, type BuiltServer } from './launch.js';

export const REFRESH_COOKIE = 'service_refresh_token';
export const CSRF_COOKIE = 'service_csrf_token';
export const PARTNER_TECHNICIAN_ROLE_ID = '00000000-0000-4000-8000-000000000002';
export const ORG_TECHNICIAN_ROLE_ID = '00000000-0000-4000-8000-000000000005';

/** A password zxcvbn scores 4, different on every call. */
export const strongPassword = () => `Glacier-${randomBytes(5).toString('hex')}-Saffron!`;
export const uniq = () => randomBytes(4).toString('hex');

/** The code an authenticator app shows `offsetMs` from now (RFC 6238, SHA-1, 6 digits, 30 s). */
export function totp(secret: string, offsetMs = 0): string {
  const t = new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) });
  return t.generate({ timestamp: Date.now() + offsetMs });
}

/** A sign-in answer: tokens in the body and both cookies set; the client then carries the access token. */
export function expectSignedIn(api: ApiClient, res: ApiResponse) {
  assert.ok(res.status < 300, `${res.status}: ${res.text}`);
  assert.equal(res.body.tokenType, 'Bearer', res.text);
  assert.equal(typeof res.body.accessToken, 'string', res.text);
  assert.match(api.cookies.get(REFRESH_COOKIE) ?? '', /.{20,}/);
  assert.match(api.cookies.get(CSRF_COOKIE) ?? '', /.{10,}/);
  api.token = res.body.accessToken;
}

/** POST /auth/refresh as the console sends it: the refresh cookie and the CSRF cookie's value in the header. */
export async function refresh(api: ApiClient): Promise<ApiResponse> {
  const csrf = api.cookies.get(CSRF_COOKIE) ?? '';
  const res = await api.raw.post('/auth/refresh', undefined, { token: null, headers: { 'x-service-csrf': csrf } });
  if (res.status === 200) api.token = res.body.accessToken;
  return res;
}

export interface Admin {
  api: ApiClient;
  email: string;
  password: string;
  partnerId: string;
  secret: string;
  recoveryCodes: string[];
}

/** The first administrator, created through the printed setup link, with TOTP enrolled (a Partner Admin must). */
export async function firstAdmin(server: BuiltServer): Promise<Admin> {
  const link = server.setupLink();
  assert.match(link ?? '', new RegExp(`^${server.baseUrl}/setup\\?token=`), server.output());
  const api = server.client();
  const email = `admin-${uniq()}@first.test`;
  const password = strongPassword();
  const res = await api.raw.post('/setup', {
    token: tokenOf(link!),
    companyName: 'First MSP',
    email,
    password,
    name: 'First Admin',
  });
  assert.equal(res.status, 201, res.text);
  expectSignedIn(api, res);
  const { secret, recoveryCodes } = await enrolTotp(api);
  return { api, email, password, partnerId: res.body.partner.id, secret, recoveryCodes };
}

/** TOTP setup (with its QR code) then enable with the current code; the client then carries mfa: true tokens. */
export async function enrolTotp(api: ApiClient): Promise<{ secret: string; recoveryCodes: string[] }> {
  const setup = await api.raw.post('/auth/mfa/setup');
  assert.equal(setup.status, 200, setup.text);
  assert.match(setup.body.qrCodeDataUrl, /^data:image\/png;base64,[A-Za-z0-9+/]{200,}/);
  assert.match(setup.body.otpAuthUrl, /^otpauth:\/\/totp\//);
  const enable = await api.raw.post('/auth/mfa/enable', { code: totp(setup.body.secret) });
  assert.equal(enable.status, 200, enable.text);
  assert.equal(enable.body.recoveryCodes.length, 10);
  api.token = enable.body.accessToken;
  return { secret: setup.body.secret, recoveryCodes: enable.body.recoveryCodes };
}

/**
 * Password then the second step: by default the TOTP code of the next time step (enrolment used the current one; a
 * step is accepted once, and only one step either side), else the code given (a recovery code, one use each).
 */
export async function signInWithTotp(
  server: BuiltServer,
  admin: Pick<Admin, 'email' | 'password' | 'secret'>,
  code = totp(admin.secret, 30_000),
) {
  const api = server.client();
  const first = await api.raw.post('/auth/login', { email: admin.email, password: admin.password });
  assert.equal(first.status, 200, first.text);
  assert.equal(first.body.mfaRequired, true, first.text);
  assert.equal(first.body.mfaMethod, 'totp', first.text);
  assert.equal(typeof first.body.tempToken, 'string', first.text);
  assert.equal(api.cookies.size, 0);
  const res = await api.raw.post('/auth/mfa/verify', { tempToken: first.body.tempToken, code });
  expectSignedIn(api, res);
  return api;
}

// Steps the tests of the built server share, each over HTTP only, as a browser or the console would take them.
import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { expect } from 'vitest';
import type { ApiClient, ApiResponse } from '../support/client.js';
import { tokenOf, type BuiltServer } from './server.js';

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
  expect(res.status, res.text).toBeLessThan(300);
  expect(res.body).toMatchObject({ tokenType: 'Bearer', accessToken: expect.any(String) });
  expect(api.cookies.get(REFRESH_COOKIE)).toMatch(/.{20,}/);
  expect(api.cookies.get(CSRF_COOKIE)).toMatch(/.{10,}/);
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
}

/** The first administrator, created through the printed setup link, with TOTP enrolled (a Partner Admin must). */
export async function firstAdmin(server: BuiltServer): Promise<Admin> {
  const link = server.setupLink();
  expect(link, server.output()).toMatch(new RegExp(`^${server.baseUrl}/setup\\?token=`));
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
  expect(res.status, res.text).toBe(201);
  expectSignedIn(api, res);
  const secret = await enrolTotp(api);
  return { api, email, password, partnerId: res.body.partner.id, secret };
}

/** TOTP setup (with its QR code) then enable with the current code; the client then carries mfa: true tokens. */
export async function enrolTotp(api: ApiClient): Promise<string> {
  const setup = await api.raw.post('/auth/mfa/setup');
  expect(setup.status, setup.text).toBe(200);
  expect(setup.body.qrCodeDataUrl).toMatch(/^data:image\/png;base64,[A-Za-z0-9+/]{200,}/);
  expect(setup.body.otpAuthUrl).toMatch(/^otpauth:\/\/totp\//);
  const enable = await api.raw.post('/auth/mfa/enable', { code: totp(setup.body.secret) });
  expect(enable.status, enable.text).toBe(200);
  expect(enable.body.recoveryCodes).toHaveLength(10);
  api.token = enable.body.accessToken;
  return setup.body.secret as string;
}

/** Password then TOTP: the code of the next time step, so it never repeats the step enrolment used. */
export async function signInWithTotp(server: BuiltServer, email: string, password: string, secret: string) {
  const api = server.client();
  const first = await api.raw.post('/auth/login', { email, password });
  expect(first.status, first.text).toBe(200);
  expect(first.body).toMatchObject({ mfaRequired: true, mfaMethod: 'totp', tempToken: expect.any(String) });
  expect(api.cookies.size).toBe(0);
  const res = await api.raw.post('/auth/mfa/verify', { tempToken: first.body.tempToken, code: totp(secret, 30_000) });
  expectSignedIn(api, res);
  return api;
}

// POST /oauth/token, grant_type=client_credentials: both client authentication methods, the token's form (a sign-in's
// access token, sub = the service account), OAuth errors in the envelope, and a token that dies with its key.
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, startPeer, type TestApp } from '../support/app.js';
import type { ApiResponse } from '../support/client.js';
import { type OnboardingTenant, onboardingTenant } from '../support/fixtures.js';
import { serviceAccountWithKey, type ServiceAccountWithKey } from '../support/service-accounts.js';
import { expectError, ORG_VIEWER, PARTNER_VIEWER } from '../onboarding/helpers.js';

let t: TestApp;
let w: OnboardingTenant;
let sa: ServiceAccountWithKey;
beforeAll(async () => {
  t = await startApp({ TRUST_PROXY: 'true' });
  w = await onboardingTenant(t);
  sa = await serviceAccountWithKey(w.admin.api, { roleId: ORG_VIEWER, orgId: w.orgs[0].id });
});
afterAll(async () => t?.close());

const FORM = 'application/x-www-form-urlencoded';
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

function tokenRequest(fields: Record<string, string>, headers: Record<string, string> = {}, base = t.baseUrl) {
  return t
    .client()
    .fresh()
    .raw.request('POST', new URL('/api/v1/oauth/token', base).toString(), {
      rawBody: form(fields),
      contentType: FORM,
      headers,
      token: null,
    });
}

/** An OAuth error: the envelope with `error` = the OAuth code and an `error_description`. */
function expectOauthError(res: ApiResponse, status: number, code: string) {
  expectError(res, status, code);
  expect(res.body.error).toBe(code);
  expect(res.body.error_description).toEqual(expect.any(String));
  expect(res.headers.get('cache-control')).toBe('no-store');
}

describe('client_credentials with client_secret_basic and client_secret_post', () => {
  it('client_secret_basic: 200 { access_token, token_type, expires_in }, not cached', async () => {
    const res = await tokenRequest(
      { grant_type: 'client_credentials' },
      { authorization: basic(sa.account.clientId, sa.key.key) },
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 900 });
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('pragma')).toBe('no-cache');
  });

  it('client_secret_post: the same, with client_id and client_secret in the form', async () => {
    const res = await tokenRequest({
      grant_type: 'client_credentials',
      client_id: sa.account.clientId,
      client_secret: sa.key.key,
      scope: 'ignored',
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.token_type).toBe('Bearer');
  });

  it('the token has the sign-in form with sub = the service account, and acts in its scope', async () => {
    const res = await tokenRequest({
      grant_type: 'client_credentials',
      client_id: sa.account.clientId,
      client_secret: sa.key.key,
    });
    const token = res.body.access_token as string;
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: 'EdDSA', typ: 'at+jwt', kid: expect.any(String) });
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({
      sub: sa.account.id,
      sid: sa.key.id,
      client_id: sa.account.clientId,
      scope: 'organization',
      partnerId: w.partner.id,
      orgId: w.orgs[0].id,
      roleId: ORG_VIEWER,
      mfa: false,
      iss: t.baseUrl,
      aud: 'gatehouse-api',
    });
    expect(claims.exp! - claims.iat!).toBe(900);
    const api = t.client().withToken(token);
    const orgs = await api.get('/orgs/organizations');
    expect(orgs.status, orgs.text).toBe(200);
    expect(orgs.body.data.map((o: { id: string }) => o.id)).toEqual([w.orgs[0].id]);
    expectError(await api.get(`/orgs/organizations/${w.orgs[1].id}`), 404, 'not_found');
    expectError(await api.get('/auth/me'), 403, 'service_account_not_allowed');
  });
});

describe('OAuth errors (RFC 6749 5.2) in the envelope', () => {
  it('a wrong secret or a key of another account is 401 invalid_client (Basic: with WWW-Authenticate)', async () => {
    const other = await serviceAccountWithKey(w.admin.api, { roleId: PARTNER_VIEWER });
    const wrong = `${sa.key.key.slice(0, -1)}${sa.key.key.endsWith('A') ? 'B' : 'A'}`;
    const res = await tokenRequest(
      { grant_type: 'client_credentials' },
      { authorization: basic(sa.account.clientId, wrong) },
    );
    expectOauthError(res, 401, 'invalid_client');
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
    expectOauthError(
      await tokenRequest({
        grant_type: 'client_credentials',
        client_id: sa.account.clientId,
        client_secret: other.key.key,
      }),
      401,
      'invalid_client',
    );
    expectOauthError(
      await tokenRequest({ grant_type: 'client_credentials', client_id: 'sa_unknown', client_secret: sa.key.key }),
      401,
      'invalid_client',
    );
    expectOauthError(await tokenRequest({ grant_type: 'client_credentials' }), 401, 'invalid_client');
    expectOauthError(
      await tokenRequest({ grant_type: 'client_credentials' }, { authorization: 'Basic !!!' }),
      401,
      'invalid_client',
    );
  });

  it('another grant type is 400 unsupported_grant_type; a missing one, a repeated field or two methods 400 invalid_request', async () => {
    expectOauthError(
      await tokenRequest({ grant_type: 'password', username: 'a', password: 'b' }),
      400,
      'unsupported_grant_type',
    );
    expectOauthError(
      await tokenRequest({ client_id: sa.account.clientId, client_secret: sa.key.key }),
      400,
      'invalid_request',
    );
    const repeated = await t.client().request('POST', '/oauth/token', {
      rawBody: 'grant_type=client_credentials&grant_type=client_credentials',
      contentType: FORM,
    });
    expectOauthError(repeated, 400, 'invalid_request');
    expectOauthError(
      await tokenRequest(
        { grant_type: 'client_credentials', client_id: sa.account.clientId, client_secret: sa.key.key },
        { authorization: basic(sa.account.clientId, sa.key.key) },
      ),
      400,
      'invalid_request',
    );
  });

  it('a JSON body is 415 (the endpoint takes forms only)', async () => {
    const res = await t.client().post('/oauth/token', {
      grant_type: 'client_credentials',
      client_id: sa.account.clientId,
      client_secret: sa.key.key,
    });
    expectError(res, 415, 'unsupported_media_type');
  });
});

describe('a token obtained with a key dies with the key, on every instance', () => {
  it('revoking the key refuses its live token on the next request, here and on a peer', async () => {
    const own = await serviceAccountWithKey(w.admin.api, { roleId: PARTNER_VIEWER });
    const peer = await startPeer(t);
    try {
      const token = (
        await tokenRequest({
          grant_type: 'client_credentials',
          client_id: own.account.clientId,
          client_secret: own.key.key,
        })
      ).body.access_token as string;
      const onPeer = peer.client().withToken(token);
      expect((await onPeer.get('/orgs/organizations')).status).toBe(200);
      expect((await w.admin.api.delete(`/service-accounts/${own.account.id}/keys/${own.key.id}`)).status).toBe(200);
      expectError(await onPeer.get('/orgs/organizations'), 401, 'unauthenticated');
      expectError(await t.client().withToken(token).get('/orgs/organizations'), 401, 'unauthenticated');
      expectOauthError(
        await tokenRequest({
          grant_type: 'client_credentials',
          client_id: own.account.clientId,
          client_secret: own.key.key,
        }),
        401,
        'invalid_client',
      );
    } finally {
      await peer.close();
    }
  });

  it("the key's allow-list applies to the token request and to every use of the token", async () => {
    const fenced = await serviceAccountWithKey(w.admin.api, {
      roleId: PARTNER_VIEWER,
      keyOptions: { allowedCidrs: ['10.0.0.0/8'] },
    });
    const fields = {
      grant_type: 'client_credentials',
      client_id: fenced.account.clientId,
      client_secret: fenced.key.key,
    };
    expectOauthError(await tokenRequest(fields, { 'x-forwarded-for': '192.0.2.1' }), 401, 'invalid_client');
    const ok = await tokenRequest(fields, { 'x-forwarded-for': '10.0.0.7' });
    expect(ok.status, ok.text).toBe(200);
    const api = t.client().withToken(ok.body.access_token);
    expect((await api.get('/orgs/organizations', { headers: { 'x-forwarded-for': '10.2.3.4' } })).status).toBe(200);
    expectError(
      await api.get('/orgs/organizations', { headers: { 'x-forwarded-for': '192.0.2.1' } }),
      403,
      'ip_not_allowed',
    );
  });
});

// Every MFA route answers bad input with a catalogued 4xx in the envelope, never a 5xx:
// wrong code formats, expired or foreign tempTokens, foreign passkey ids, malformed WebAuthn credentials.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOG } from '../../src/http/errors.js';
import { startApp, type TestApp } from '../support/app.js';
import type { ApiClient, ApiResponse } from '../support/client.js';
import { createCredential, getAssertion } from '../support/webauthn.js';
import { challenge, expectError, member, PASSWORD, registerPasskey, signIn, totpCode, totpMember } from './helpers.js';

let t: TestApp;
let origin: string;
beforeAll(async () => {
  t = await startApp();
  origin = t.deps.config.appUrl;
});
afterAll(async () => t?.close());

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64url');
const clientData = (type: string, challengeValue: unknown) =>
  b64(JSON.stringify({ type, challenge: challengeValue, origin, crossOrigin: false }));

/** A 4xx whose code is in the catalogue with that status, in the error envelope. */
function expectCatalogued4xx(res: ApiResponse, label: string) {
  expect(res.status, `${label}: ${res.text}`).toBeGreaterThanOrEqual(400);
  expect(res.status, `${label}: ${res.text}`).toBeLessThan(500);
  expect(res.body, label).toMatchObject({
    error: expect.any(String),
    message: expect.any(String),
    code: expect.any(String),
  });
  const entry = (ERROR_CATALOG as Record<string, { status: number }>)[res.body.code!];
  expect(entry, `${label}: ${res.body.code} is not catalogued`).toBeDefined();
  if (res.body.code !== 'invalid_credentials') expect(entry!.status, label).toBe(res.status);
}

const BAD_CODES: unknown[] = [
  '',
  '12345',
  '1234567',
  '12a456',
  'abcdef',
  '12 456',
  '１２３４５６',
  123456,
  null,
  ['123456'],
  { code: '123456' },
  'x'.repeat(300),
];

describe('wrong code formats: 400 validation_failed', () => {
  it.each(BAD_CODES.map((c) => [JSON.stringify(c).slice(0, 30), c]))(
    'code %s on verify (login and setup), enable, disable, phone confirm',
    async (_label, code) => {
      const m = await totpMember(t);
      const { api: c, body } = await challenge(t, m.email);
      expectError(await c.raw.post('/auth/mfa/verify', { tempToken: body.tempToken, code }), 400, 'validation_failed');
      expectError(await m.api.raw.post('/auth/mfa/verify', { code }), 400, 'validation_failed');
      expectError(await m.api.raw.post('/auth/mfa/enable', { code }), 400, 'validation_failed');
      expectError(
        await m.api.raw.post('/auth/mfa/disable', { currentPassword: PASSWORD, code }),
        400,
        'validation_failed',
      );
      expectError(await m.api.raw.post('/auth/phone/confirm', { code }), 400, 'validation_failed');
      // None of these spent the tempToken or counted as a wrong guess.
      t.clock.advance(30_000);
      expect(
        (await c.post('/auth/mfa/verify', { tempToken: body.tempToken, code: totpCode(t, m.secret) })).status,
      ).toBe(200);
    },
  );

  it('a recovery code is not a 6-digit code where only 6 digits are taken (enable, phone confirm)', async () => {
    const m = await totpMember(t);
    expectError(await m.api.raw.post('/auth/mfa/enable', { code: m.recoveryCodes[0] }), 400, 'validation_failed');
    expectError(await m.api.raw.post('/auth/phone/confirm', { code: m.recoveryCodes[0] }), 400, 'validation_failed');
  });

  it('the validation error names the field', async () => {
    const m = await totpMember(t);
    const res = await m.api.post('/auth/mfa/enable', { code: '12' });
    expect(res.body.details.fieldErrors).toHaveProperty('code');
  });
});

describe('tempTokens: missing, malformed, unknown, expired or of another flow', () => {
  const PUBLIC_ROUTES: [string, (tempToken: unknown) => unknown][] = [
    ['/auth/mfa/verify', (tempToken) => ({ tempToken, code: '123456' })],
    ['/auth/mfa/sms/send', (tempToken) => ({ tempToken })],
    ['/auth/mfa/passkey/options', (tempToken) => ({ tempToken })],
  ];

  it.each(PUBLIC_ROUTES)(
    '%s: malformed → 400 validation_failed; unknown → 401 invalid_temp_token',
    async (path, bodyOf) => {
      const api = t.client();
      for (const bad of ['short', 'x'.repeat(513), 1e19, null, { a: 1 }])
        expectError(await api.raw.post(path, bodyOf(bad)), 400, 'validation_failed');
      const missing = bodyOf(undefined) as Record<string, unknown>;
      delete missing.tempToken;
      if (path !== '/auth/mfa/verify') expectError(await api.raw.post(path, missing), 400, 'validation_failed');
      expectError(await api.raw.post(path, bodyOf('A'.repeat(43))), 401, 'invalid_temp_token');
    },
  );

  it('the passkey verify route too', async () => {
    const api = t.client();
    const credential = {
      id: 'AAAA',
      rawId: 'AAAA',
      type: 'public-key',
      response: { clientDataJSON: 'AA', authenticatorData: 'AA', signature: 'AA' },
      clientExtensionResults: {},
    };
    expectError(
      await api.raw.post('/auth/mfa/passkey/verify', { tempToken: 'short', credential }),
      400,
      'validation_failed',
    );
    expectError(
      await api.raw.post('/auth/mfa/passkey/verify', { tempToken: 'A'.repeat(43), credential }),
      401,
      'invalid_temp_token',
    );
  });

  it('the token of another flow (a WebAuthn challenge, a refresh token) is not a tempToken', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const opts = await api.post('/auth/passkeys/register/options', { currentPassword: PASSWORD, name: 'K' });
    // Registration challenges are stored as flows under "reg:<challenge>": still not a login challenge.
    expectError(
      await t.client().post('/auth/mfa/passkey/options', { tempToken: `reg:${opts.body.options.challenge}` }),
      401,
      'invalid_temp_token',
    );
    const refreshToken = api.cookies.get('service_refresh_token')!;
    expectError(
      await t.client().post('/auth/mfa/verify', { tempToken: refreshToken, code: '123456' }),
      401,
      'invalid_temp_token',
    );
  });

  it('an expired tempToken: 401 invalid_temp_token on every route', async () => {
    const m = await totpMember(t);
    const { api, body } = await challenge(t, m.email);
    t.clock.advance(5 * 60_000 + 1000);
    expectError(
      await api.post('/auth/mfa/verify', { tempToken: body.tempToken, code: totpCode(t, m.secret) }),
      401,
      'invalid_temp_token',
    );
    expectError(await api.post('/auth/mfa/sms/send', { tempToken: body.tempToken }), 401, 'invalid_temp_token');
    expectError(await api.post('/auth/mfa/passkey/options', { tempToken: body.tempToken }), 401, 'invalid_temp_token');
  });

  it("another user's tempToken with this user's code: 401 invalid_mfa_code (the token names the account, not the code)", async () => {
    const a = await totpMember(t);
    const b = await totpMember(t);
    const { api, body } = await challenge(t, b.email);
    t.clock.advance(30_000);
    expectError(
      await api.post('/auth/mfa/verify', { tempToken: body.tempToken, code: totpCode(t, a.secret) }),
      401,
      'invalid_mfa_code',
    );
  });
});

describe('malformed WebAuthn credentials', () => {
  it('registration verify: every malformed credential is a 400 and the challenge survives schema errors', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const opts = await api.post('/auth/passkeys/register/options', { currentPassword: PASSWORD, name: 'K' });
    const { response } = createCredential(opts.body.options, origin);
    const schemaErrors: [string, unknown][] = [
      ['missing', undefined],
      ['a string', 'credential'],
      ['empty', {}],
      ['wrong type', { ...response, type: 'password' }],
      ['no attestationObject', { ...response, response: { clientDataJSON: response.response.clientDataJSON } }],
      ['not base64url', { ...response, id: 'a+b/c==' }],
      ['oversized', { ...response, response: { ...response.response, attestationObject: 'A'.repeat(70_000) } }],
      ['transports not strings', { ...response, response: { ...response.response, transports: [1, 2] } }],
    ];
    for (const [label, credential] of schemaErrors) {
      const res = await api.raw.post('/auth/passkeys/register/verify', credential === undefined ? {} : { credential });
      expectError(res, 400, 'validation_failed');
      void label;
    }
    expectError(
      await api.raw.post('/auth/passkeys/register/verify', { credential: response, extra: 1 }),
      400,
      'validation_failed',
    );
    // Schema errors consumed nothing: the genuine response still registers.
    expect((await api.post('/auth/passkeys/register/verify', { credential: response })).status).toBe(201);
  });

  it('registration verify: a readable challenge with a broken body is passkey_verification_failed; no readable challenge is invalid_challenge', async () => {
    // One account per attempt: each needs fresh options, and the password re-check is rate limited per user.
    const fresh = async () => {
      const m = await member(t);
      const api = await signIn(t, m.email);
      const o = await api.post('/auth/passkeys/register/options', { currentPassword: PASSWORD, name: 'K' });
      expect(o.status, o.text).toBe(200);
      return { api, r: createCredential(o.body.options, origin).response };
    };
    const cases: [string, (r: Awaited<ReturnType<typeof fresh>>['r']) => unknown, string][] = [
      [
        'clientDataJSON not JSON',
        (r) => ({ ...r, response: { ...r.response, clientDataJSON: b64('not json') } }),
        'invalid_challenge',
      ],
      [
        'challenge not a string',
        (r) => ({ ...r, response: { ...r.response, clientDataJSON: clientData('webauthn.create', 42) } }),
        'invalid_challenge',
      ],
      [
        'challenge never issued',
        (r) => ({ ...r, response: { ...r.response, clientDataJSON: clientData('webauthn.create', 'never-issued') } }),
        'invalid_challenge',
      ],
      [
        'attestationObject not CBOR',
        (r) => ({ ...r, response: { ...r.response, attestationObject: b64('garbage') } }),
        'passkey_verification_failed',
      ],
      ['id differs from rawId', (r) => ({ ...r, id: b64('another id') }), 'passkey_verification_failed'],
      [
        'clientData of an assertion',
        (r) => {
          const cdj = JSON.parse(Buffer.from(r.response.clientDataJSON, 'base64url').toString());
          return {
            ...r,
            response: { ...r.response, clientDataJSON: b64(JSON.stringify({ ...cdj, type: 'webauthn.get' })) },
          };
        },
        'passkey_verification_failed',
      ],
    ];
    for (const [label, mutate, code] of cases) {
      const { api, r } = await fresh();
      const res = await api.raw.post('/auth/passkeys/register/verify', { credential: mutate(r) });
      expect(res.body.code, label).toBe(code);
      expectError(res, 400, code);
    }
  });

  it('sign-in verify: schema errors are 400 validation_failed; broken assertions are 400 without spending the tempToken', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const { credential } = await registerPasskey(t, api);
    const { api: c, body } = await challenge(t, m.email);
    const assertionFor = async () => {
      const o = await c.post('/auth/mfa/passkey/options', { tempToken: body.tempToken });
      return getAssertion(o.body.options, origin, credential);
    };
    const good = await assertionFor();
    for (const bad of [
      undefined,
      'x',
      {},
      { ...good, type: 'nope' },
      { ...good, response: { clientDataJSON: good.response.clientDataJSON } },
      { ...good, rawId: '***' },
    ]) {
      expectError(
        await c.raw.post(
          '/auth/mfa/passkey/verify',
          bad === undefined ? { tempToken: body.tempToken } : { tempToken: body.tempToken, credential: bad },
        ),
        400,
        'validation_failed',
      );
    }
    expectError(
      await c.post('/auth/mfa/passkey/verify', {
        tempToken: body.tempToken,
        credential: { ...good, response: { ...good.response, clientDataJSON: b64('{') } },
      }),
      400,
      'invalid_challenge',
    );
    let a = await assertionFor();
    expectError(
      await c.post('/auth/mfa/passkey/verify', {
        tempToken: body.tempToken,
        credential: { ...a, response: { ...a.response, authenticatorData: b64('short') } },
      }),
      400,
      'passkey_verification_failed',
    );
    a = await assertionFor();
    expectError(
      await c.post('/auth/mfa/passkey/verify', {
        tempToken: body.tempToken,
        credential: { ...a, response: { ...a.response, signature: '' } },
      }),
      400,
      'passkey_verification_failed',
    );
    a = await assertionFor();
    expectError(
      await c.post('/auth/mfa/passkey/verify', {
        tempToken: body.tempToken,
        credential: { ...a, id: b64('unknown credential'), rawId: b64('unknown credential') },
      }),
      400,
      'passkey_verification_failed',
    );
    a = await assertionFor();
    const cdj = JSON.parse(Buffer.from(a.response.clientDataJSON, 'base64url').toString());
    expectError(
      await c.post('/auth/mfa/passkey/verify', {
        tempToken: body.tempToken,
        credential: {
          ...a,
          response: { ...a.response, clientDataJSON: b64(JSON.stringify({ ...cdj, type: 'webauthn.create' })) },
        },
      }),
      400,
      'passkey_verification_failed',
    );
    // The tempToken is still live.
    const ok = await c.post('/auth/mfa/passkey/verify', {
      tempToken: body.tempToken,
      credential: await assertionFor(),
    });
    expect(ok.status, ok.text).toBe(200);
  });
});

describe('foreign and malformed passkey ids', () => {
  it("PATCH and DELETE: another user's id or an unknown id → 404 not_found; a malformed id → 400", async () => {
    const owner = await member(t);
    const other = await member(t);
    const ownerApi = await signIn(t, owner.email);
    const otherApi = await signIn(t, other.email);
    const { passkey } = await registerPasskey(t, ownerApi);
    for (const id of [passkey.id, '00000000-0000-4000-8000-000000000000']) {
      expectError(await otherApi.patch(`/auth/passkeys/${id}`, { name: 'Mine now' }), 404, 'not_found');
      expectError(
        await otherApi.delete(`/auth/passkeys/${id}`, { body: { currentPassword: PASSWORD } }),
        404,
        'not_found',
      );
    }
    for (const id of ['123', 'not-a-uuid', `${passkey.id}x`, '%00']) {
      expectCatalogued4xx(await otherApi.patch(`/auth/passkeys/${id}`, { name: 'X' }), `PATCH ${id}`);
      expectCatalogued4xx(
        await otherApi.delete(`/auth/passkeys/${id}`, { body: { currentPassword: PASSWORD } }),
        `DELETE ${id}`,
      );
    }
    expectError(
      await ownerApi.raw.patch(`/auth/passkeys/${passkey.id}`, { name: 'X', extra: true }),
      400,
      'validation_failed',
    );
    expectError(
      await ownerApi.raw.delete(`/auth/passkeys/${passkey.id}`, { body: { currentPassword: PASSWORD, extra: true } }),
      400,
      'validation_failed',
    );
    expect((await ownerApi.get('/auth/passkeys')).body.data).toHaveLength(1);
  });
});

describe('no MFA route answers hostile bodies with a 5xx', () => {
  const ROUTES: [string, string][] = [
    ['POST', '/auth/mfa/verify'],
    ['POST', '/auth/mfa/setup'],
    ['POST', '/auth/mfa/enable'],
    ['POST', '/auth/mfa/disable'],
    ['POST', '/auth/mfa/recovery-codes'],
    ['POST', '/auth/phone/verify'],
    ['POST', '/auth/phone/confirm'],
    ['POST', '/auth/mfa/sms/enable'],
    ['POST', '/auth/mfa/sms/send'],
    ['POST', '/auth/passkeys/register/options'],
    ['POST', '/auth/passkeys/register/verify'],
    ['PATCH', '/auth/passkeys/00000000-0000-4000-8000-000000000000'],
    ['DELETE', '/auth/passkeys/00000000-0000-4000-8000-000000000000'],
    ['POST', '/auth/mfa/passkey/options'],
    ['POST', '/auth/mfa/passkey/verify'],
    ['POST', '/users/00000000-0000-4000-8000-000000000000/mfa/reset'],
  ];
  const HOSTILE: { label: string; rawBody: string; contentType: string }[] = [
    { label: 'invalid JSON', rawBody: '{"code":', contentType: 'application/json' },
    { label: 'JSON null', rawBody: 'null', contentType: 'application/json' },
    { label: 'JSON array', rawBody: '[1,2,3]', contentType: 'application/json' },
    { label: 'JSON string', rawBody: '"123456"', contentType: 'application/json' },
    {
      label: 'unknown fields',
      rawBody: '{"__proto__":{"admin":true},"constructor":{"prototype":{}}}',
      contentType: 'application/json',
    },
    { label: 'deep nesting', rawBody: `${'{"a":'.repeat(500)}1${'}'.repeat(500)}`, contentType: 'application/json' },
    { label: 'form body', rawBody: 'code=123456', contentType: 'application/x-www-form-urlencoded' },
    { label: 'text body', rawBody: '123456', contentType: 'text/plain' },
  ];

  // Routes without a request body ignore whatever is sent, as every bodiless route of the service does (logout).
  const BODILESS = new Set(['/auth/mfa/setup', '/auth/mfa/recovery-codes', '/auth/mfa/sms/enable']);

  it.each(ROUTES)('%s %s', async (method, path) => {
    const m = await totpMember(t, { kind: 'partner' });
    for (const h of HOSTILE) {
      for (const api of [m.api, t.client()] as ApiClient[]) {
        const res = await api.raw.request(method, path, { rawBody: h.rawBody, contentType: h.contentType });
        const label = `${method} ${path} with ${h.label}`;
        if (res.status < 300 && BODILESS.has(path) && api === m.api) continue;
        expectCatalogued4xx(res, label);
      }
    }
    expect(t.logs()).not.toContain('"code":"internal_error"');
  });
});

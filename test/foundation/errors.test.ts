// The error envelope and the order of refusals, through real HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOG } from '../../src/http/errors.js';
import { startApp, type TestApp } from '../support/app.js';
import type { ApiClient, ApiResponse } from '../support/client.js';
import { createUser, partnerAdmin, sessionFor } from '../support/fixtures.js';

let t: TestApp;
let admin: ApiClient;
beforeAll(async () => {
  t = await startApp();
  admin = (await partnerAdmin(t)).api;
});
afterAll(async () => t?.close());

/** Every non-2xx: the envelope, JSON, never cached, traceable by request id. */
function expectEnvelope(res: ApiResponse, status: number, code: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.body).toMatchObject({ error: expect.any(String), message: expect.any(String), code });
  expect(ERROR_CATALOG).toHaveProperty([code]);
  expect(res.body.error.length).toBeGreaterThan(0);
  expect(res.body.message.length).toBeGreaterThan(0);
  expect(res.headers.get('content-type')).toMatch(/^application\/json\b/);
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9._-]{1,64}$/);
}

describe('a malformed JSON body is 400 validation_failed with a form error', () => {
  it.each([
    ['truncated object', '{"name": "Ada"'],
    ['trailing comma', '{"name": "Ada",}'],
    ['single quotes', "{'name': 'Ada'}"],
    ['bare word', 'hello'],
    ['empty body', ''],
  ])('%s', async (_label, raw) => {
    const res = await admin.request('PATCH', '/users/me', { rawBody: raw, contentType: 'application/json' });
    expectEnvelope(res, 400, 'validation_failed');
    expect(res.body.details.formErrors.length).toBeGreaterThan(0);
    expect(res.body.details.fieldErrors).toEqual({});
  });

  it('prototype-pollution keys are refused as unreadable, not processed', async () => {
    for (const raw of [
      '{"__proto__": {"isAdmin": true}, "name": "x"}',
      '{"constructor": {"prototype": {"isAdmin": true}}, "name": "x"}',
    ]) {
      const res = await admin.request('PATCH', '/users/me', { rawBody: raw, contentType: 'application/json' });
      expectEnvelope(res, 400, 'validation_failed');
    }
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
  });
});

describe('an unsupported content type is 415 unsupported_media_type', () => {
  it.each([
    ['text/plain', 'name=Ada'],
    ['application/xml', '<user><name>Ada</name></user>'],
    ['application/x-www-form-urlencoded', 'name=Ada'],
    ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="name"\r\n\r\nAda\r\n--x--\r\n'],
  ])('%s', async (contentType, raw) => {
    const res = await admin.request('PATCH', '/users/me', { rawBody: raw, contentType });
    expectEnvelope(res, 415, 'unsupported_media_type');
  });

  it('application/json with a charset parameter is accepted (control)', async () => {
    const res = await admin.request('PATCH', '/users/me', {
      rawBody: JSON.stringify({ name: 'Ada' }),
      contentType: 'application/json; charset=utf-8',
    });
    expect(res.status, res.text).toBe(200);
  });
});

describe('a body over the limit is 413 payload_too_large', () => {
  const jsonOfSize = (bytes: number) => {
    const prefix = '{"name":"';
    const suffix = '"}';
    return prefix + 'a'.repeat(bytes - prefix.length - suffix.length) + suffix;
  };

  it("the app's configured limit (default 1 MiB) is enforced", async () => {
    const limit = t.deps.config.bodyLimit;
    const res = await admin.request('PATCH', '/users/me', {
      rawBody: jsonOfSize(limit + 1),
      contentType: 'application/json',
    });
    expectEnvelope(res, 413, 'payload_too_large');
  });

  describe('with BODY_LIMIT_BYTES=2048', () => {
    let small: TestApp;
    let api: ApiClient;
    beforeAll(async () => {
      small = await startApp({ BODY_LIMIT_BYTES: '2048' });
      api = (await partnerAdmin(small)).api;
    });
    afterAll(async () => small?.close());

    it('2049 bytes are refused, 2048 bytes are read (and then validated)', async () => {
      expect(small.deps.config.bodyLimit).toBe(2048);
      const over = await api.request('PATCH', '/users/me', {
        rawBody: jsonOfSize(2049),
        contentType: 'application/json',
      });
      expectEnvelope(over, 413, 'payload_too_large');
      // At the limit the body is parsed; the 300-char name then fails validation (max 255), proving it was read.
      const at = await api.request('PATCH', '/users/me', {
        rawBody: jsonOfSize(2048),
        contentType: 'application/json',
      });
      expectEnvelope(at, 400, 'validation_failed');
      expect(at.body.details.fieldErrors.name).toEqual(expect.arrayContaining([expect.any(String)]));
    });

    it('a chunked body without content-length is cut off at the limit', async () => {
      const session = await partnerAdmin(small);
      const chunk = new TextEncoder().encode('a'.repeat(1024));
      let sent = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent === 0) controller.enqueue(new TextEncoder().encode('{"name":"'));
          if (sent >= 8) return controller.close();
          sent++;
          controller.enqueue(chunk);
        },
      });
      const res = await fetch(`${small.baseUrl}/api/v1/users/me`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${session.session.accessToken}` },
        body: stream,
        duplex: 'half',
      } as RequestInit & { duplex: 'half' });
      const text = await res.text();
      expect(res.status, text).toBe(413);
      expect(JSON.parse(text)).toMatchObject({
        code: 'payload_too_large',
        error: expect.any(String),
        message: expect.any(String),
      });
      expect(res.headers.get('cache-control')).toBe('no-store');
    });
  });
});

describe('an unknown route is 404 not_found', () => {
  // Absolute URLs: the client would otherwise prefix /api/v1 to a root path.
  it.each([
    ['GET', '/no-such-thing'],
    ['POST', '/no-such-thing'],
    ['GET', '/api/v1/no-such-thing'],
    ['POST', '/api/v1/no-such-thing'],
    ['GET', '/api/v2/users/me'],
    ['GET', '/api/v1'],
  ])('%s %s', async (method, path) => {
    const res = await t
      .client()
      .raw.request(
        method,
        `${t.baseUrl}${path}`,
        method === 'GET' || method === 'DELETE' ? {} : { body: { name: 'x' } },
      );
    expectEnvelope(res, 404, 'not_found');
  });

  // A known path with a method it does not serve is 405 with Allow, not 404.
  it.each([
    ['DELETE', '/api/v1/auth/me', 'GET, HEAD'],
    ['PUT', '/api/v1/users/me', 'GET'],
  ])('%s %s is 405 method_not_allowed with Allow', async (method, path, allows) => {
    const res = await t
      .client()
      .raw.request(method, `${t.baseUrl}${path}`, method === 'DELETE' ? {} : { body: { name: 'x' } });
    expectEnvelope(res, 405, 'method_not_allowed');
    expect(res.headers.get('allow')).toContain(allows);
  });

  it('is the same 404 with a valid token (no route leaks through authentication)', async () => {
    expectEnvelope(await admin.raw.get('/api/v1/no-such-thing'), 404, 'not_found');
    expectEnvelope(await admin.raw.get(`${t.baseUrl}/no-such-thing`), 404, 'not_found');
  });

  // The router refuses these before any hook; without Fastify's `frameworkErrors` option wired to
  // onFrameworkError it answers its own body (code FST_ERR_BAD_URL, no request id, no no-store).
  it('a path with malformed percent-encoding is 400 validation_failed in the envelope', async () => {
    for (const path of ['/api/v1/%E0%A4%A', '/%ZZ', '/api/v1/users/%']) {
      const res = await t.client().raw.get(`${t.baseUrl}${path}`);
      expectEnvelope(res, 400, 'validation_failed');
      expect(res.body.details.formErrors.length, path).toBeGreaterThan(0);
    }
  });
});

describe('a body that fails validation is 400 validation_failed naming the field', () => {
  it('an unknown field is named by its own path', async () => {
    const res = await admin.raw.patch('/users/me', { name: 'Ada', isAdmin: true });
    expectEnvelope(res, 400, 'validation_failed');
    expect(res.body.details.fieldErrors).toEqual({ isAdmin: [expect.any(String)] });
    expect(Array.isArray(res.body.details.formErrors)).toBe(true);
  });

  it('several unknown fields are each named', async () => {
    const res = await admin.raw.patch('/users/me', { name: 'Ada', role: 'admin', partnerId: 'x' });
    expectEnvelope(res, 400, 'validation_failed');
    expect(Object.keys(res.body.details.fieldErrors).sort()).toEqual(['partnerId', 'role']);
  });

  it('an unknown field named like an Object.prototype member is named too (no crash in the error mapping)', async () => {
    for (const key of ['toString', 'constructor', 'hasOwnProperty', 'valueOf', '__defineGetter__']) {
      const res = await admin.request('PATCH', '/users/me', {
        rawBody: `{"name":"Ada",${JSON.stringify(key)}:1}`,
        contentType: 'application/json',
      });
      expectEnvelope(res, 400, 'validation_failed');
      expect(Object.keys(res.body.details.fieldErrors), key).toEqual([key]);
      expect(res.body.details.fieldErrors[key]).toEqual([expect.any(String)]);
    }
  });

  it('a wrong type is named by its field', async () => {
    for (const body of [{ name: 42 }, { name: ['Ada'] }, { avatarUrl: { href: 'https://x.test' } }, { name: null }]) {
      const res = await admin.raw.patch('/users/me', body);
      expectEnvelope(res, 400, 'validation_failed');
      const field = Object.keys(body)[0]!;
      expect(res.body.details.fieldErrors, JSON.stringify(body)).toHaveProperty([field]);
      expect(res.body.details.fieldErrors[field].length).toBeGreaterThan(0);
      expect(Array.isArray(res.body.details.formErrors)).toBe(true);
    }
  });

  it('a body of the wrong shape altogether (array, null, string) is a form error', async () => {
    for (const raw of ['[]', 'null', '"Ada"', '42']) {
      const res = await admin.request('PATCH', '/users/me', { rawBody: raw, contentType: 'application/json' });
      expectEnvelope(res, 400, 'validation_failed');
      expect(res.body.details.formErrors.length, raw).toBeGreaterThan(0);
    }
  });

  it('a NUL byte in a text field is refused at the edge (PostgreSQL text cannot hold it: no 500)', async () => {
    const res = await admin.patch('/users/me', { name: 'Ada\u0000Lovelace' });
    expectEnvelope(res, 400, 'validation_failed');
    expect(res.body.details.fieldErrors).toHaveProperty(['name']);
  });

  it('a rule across fields (give name or avatarUrl) is a form error', async () => {
    const res = await admin.patch('/users/me', {});
    expectEnvelope(res, 400, 'validation_failed');
    expect(res.body.details).toEqual({ fieldErrors: {}, formErrors: [expect.any(String)] });
  });
});

describe('a route that takes no body refuses one (unknown fields are refused)', () => {
  it('POST /auth/mfa/setup with a field is 400 validation_failed naming it; with {} or nothing it proceeds', async () => {
    const withField = await admin.raw.post('/auth/mfa/setup', { isAdmin: true });
    expect(withField.status).toBe(400);
    expect(withField.body).toMatchObject({
      code: 'validation_failed',
      details: { fieldErrors: { isAdmin: ['Unrecognized key'] } },
    });
    const asArray = await admin.raw.post('/auth/mfa/setup', [1]);
    expect(asArray.body.code).toBe('validation_failed');
    expect((await admin.raw.post('/auth/mfa/setup', {})).status).not.toBe(400);
  });

  it('an empty body labelled application/json counts as no body there; where a body is required it is 400', async () => {
    const post = (path: string) =>
      fetch(`${t.baseUrl}/api/v1${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${admin.token}` },
        body: '',
      });
    const noBody = await post('/auth/mfa/setup');
    expect(noBody.status).not.toBe(400);
    const needsBody = await post('/auth/mfa/enable');
    expect(needsBody.status).toBe(400);
    expect(((await needsBody.json()) as { code: string }).code).toBe('validation_failed');
  });
});

describe('an unexpected exception is 500 internal_error with an errorId that is in the log, never a stack', () => {
  let broken: TestApp;
  beforeAll(async () => {
    broken = await startApp();
  });
  afterAll(async () => broken?.close());

  it('the database vanishing under an authenticated request', async () => {
    const { api, session, user } = await partnerAdmin(broken);
    expect((await api.me()).status).toBe(200);
    // The database vanishes: every connection to it goes, the pool's and the liveness channel's (on PGlite closing the
    // database closes both; on PostgreSQL the channel holds its own connection, which a real outage takes down too).
    await broken.deps.authContext.liveness?.stop();
    await broken.testDb.database.close();

    const res = await api.me();
    expectEnvelope(res, 500, 'internal_error');
    expect(Object.keys(res.body).sort()).toEqual(['code', 'error', 'errorId', 'message']);
    const errorId = res.body.errorId!;
    expect(errorId).toMatch(/^[0-9a-f-]{36}$/);
    // Nothing of the failure on the wire: no stack frames, no SQL, no driver text.
    expect(res.text).not.toMatch(/\bat .+:\d+:\d+|\.ts\b|\.js\b|select|from\s+sessions|PGlite|pool|closed|stack/i);

    const line = broken
      .logs()
      .split('\n')
      .filter(Boolean)
      .map(
        (l) =>
          JSON.parse(l) as {
            errorId?: string;
            level?: number;
            reqId?: string;
            err?: { stack?: string; message?: string };
          },
      )
      .find((l) => l.errorId === errorId);
    expect(line, 'a log line carries the errorId').toBeDefined();
    expect(line!.level).toBeGreaterThanOrEqual(50);
    expect(line!.err?.stack).toMatch(/\n\s+at /);
    expect(line!.reqId).toBe(res.headers.get('x-request-id'));
    // The failed query's bound values (here the session and user ids; elsewhere password hashes) stay out of the log.
    const raw = broken
      .logs()
      .split('\n')
      .find((l) => l.includes(errorId))!;
    expect(raw).not.toContain(session.sessionId);
    expect(raw).not.toContain(user.id);
    expect(line!.err).not.toHaveProperty('params');

    // A second failure gets its own id.
    const again = await api.usersMe();
    expectEnvelope(again, 500, 'internal_error');
    expect(again.body.errorId).not.toBe(errorId);
  });
});

describe('every error answer is JSON, not cacheable, and carries x-request-id', () => {
  it('across 400, 401, 403, 404, 413, 415 and 428', async () => {
    const noScope = await createUser(t);
    const noScopeApi = t.client().withToken((await sessionFor(t, noScope.id, { scope: null })).accessToken);
    const pendingMfa = (await partnerAdmin(t, { mfaEnabled: false })).api;
    const cases: [Promise<ApiResponse>, number, string][] = [
      [admin.raw.patch('/users/me', { bogus: 1 }), 400, 'validation_failed'],
      [t.client().me(), 401, 'unauthenticated'],
      [noScopeApi.permissionCatalog(), 403, 'tenant_context_required'],
      [t.client().raw.get('/nowhere'), 404, 'not_found'],
      [t.client().raw.get(`${t.baseUrl}/nowhere`), 404, 'not_found'],
      [
        admin.request('PATCH', '/users/me', {
          rawBody: `{"name":"${'a'.repeat(t.deps.config.bodyLimit)}"}`,
          contentType: 'application/json',
        }),
        413,
        'payload_too_large',
      ],
      [admin.request('PATCH', '/users/me', { rawBody: 'x', contentType: 'text/plain' }), 415, 'unsupported_media_type'],
      [pendingMfa.permissionCatalog(), 428, 'mfa_enrollment_required'],
    ];
    for (const [res, status, code] of cases) expectEnvelope(await res, status, code);
  });

  it('echoes a well-formed x-request-id and replaces a malformed one', async () => {
    const given = await t.client().raw.get(`${t.baseUrl}/nowhere`, { headers: { 'x-request-id': 'trace-abc.123' } });
    expect(given.headers.get('x-request-id')).toBe('trace-abc.123');
    const bad = await t.client().raw.get(`${t.baseUrl}/nowhere`, { headers: { 'x-request-id': 'bad id<script>' } });
    expect(bad.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('order of refusals', () => {
  it('no token and an invalid body: 401, not 400', async () => {
    const anon = t.client();
    expectEnvelope(await anon.raw.patch('/users/me', { isAdmin: true }), 401, 'unauthenticated');
    expectEnvelope(
      await anon.request('PATCH', '/users/me', { rawBody: '{not json', contentType: 'application/json' }),
      401,
      'unauthenticated',
    );
    expectEnvelope(
      await anon.request('PATCH', '/users/me', { rawBody: '<x/>', contentType: 'application/xml' }),
      401,
      'unauthenticated',
    );
  });

  it('a garbage token and an invalid body: 401, not 400', async () => {
    expectEnvelope(
      await t.client().withToken('garbage.token.here').raw.patch('/users/me', { name: 7 }),
      401,
      'unauthenticated',
    );
  });

  it('a valid token without tenant context: 403 tenant_context_required before any permission check', async () => {
    const user = await createUser(t);
    const api = t.client().withToken((await sessionFor(t, user.id, { scope: null })).accessToken);
    expect((await api.me()).status).toBe(200);
    const res = await api.permissionCatalog();
    expectEnvelope(res, 403, 'tenant_context_required');
    expect(res.body.message).toBe('Partner or organization context required.');
  });

  it('Force MFA (428) comes before tenant and permission checks', async () => {
    const { api } = await partnerAdmin(t, { mfaEnabled: false });
    expectEnvelope(await api.permissionCatalog(), 428, 'mfa_enrollment_required');
  });
});

// Input shapes: every answer the HTTP layer produces itself carries the API's error envelope with a catalogued code
// (405 with Allow, 413, 414, 415, 431, malformed HTTP, bad percent-encoding, bad JSON), and hostile JSON bodies (45 MB
// of `[[[`, a small deeply nested one) are refused before JSON.parse runs, quickly, while /healthz keeps answering.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOG } from '../../src/http/errors.js';
import { MAX_JSON_DEPTH } from '../../src/http/input-limits.js';
import { startApp, type TestApp } from '../support/app.js';
import { createOrg, partnerAdmin } from '../support/fixtures.js';
import { expectResponsive, whilePolling } from './loop-latency.js';
import { rawExchange, type RawAnswer } from './raw-http.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp({ LOG_LEVEL: 'warn' });
});
afterAll(async () => t?.close());

function expectEnvelope(res: RawAnswer, status: number, code: string) {
  expect({ status: res.status, code: (res.body as { code?: string })?.code }, res.text).toEqual({ status, code });
  expect(res.body).toMatchObject({ error: expect.any(String), message: expect.any(String), code });
  const entry = (ERROR_CATALOG as Record<string, { status: number; error: string }>)[code];
  expect(entry, `${code} is catalogued`).toBeDefined();
  expect(entry!.status).toBe(status);
  expect((res.body as { error: string }).error).toBe(entry!.error);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
}

const get = (path: string, extra = '') =>
  rawExchange(t.baseUrl, `GET ${path} HTTP/1.1\r\nHost: localhost\r\n${extra}Connection: close\r\n\r\n`);

describe('a known path asked with a method it does not serve answers 405 method_not_allowed with Allow', () => {
  it.each([
    ['PUT', '/api/v1/users/me'],
    ['DELETE', '/healthz'],
    ['POST', '/api/v1/contacts/6f1c3f0e-8c53-4a57-9a51-1d8f3c1f2b7a'],
    ['OPTIONS', '/api/v1/auth/login'],
    ['PUT', '/api/v1/contacts/import'],
  ])('%s %s', async (method, path) => {
    const res = await rawExchange(
      t.baseUrl,
      `${method} ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
    );
    expectEnvelope(res, 405, 'method_not_allowed');
    const allow = res.headers.allow!.split(', ');
    expect(allow).not.toContain(method);
    expect(allow.length).toBeGreaterThan(0);
    // Every method named in Allow is really served there (not 404 / 405).
    for (const m of allow.filter((x) => x !== 'HEAD')) {
      const ok = await rawExchange(
        t.baseUrl,
        `${m} ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
      );
      expect([404, 405], `${m} ${path}`).not.toContain(ok.status);
    }
  });

  it('an unknown path is still 404 not_found', async () => {
    expectEnvelope(await get('/api/v1/no-such-thing'), 404, 'not_found');
    expectEnvelope(
      await rawExchange(
        t.baseUrl,
        'PUT /api/v1/no-such-thing HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n',
      ),
      404,
      'not_found',
    );
  });
});

describe('errors raised before a route runs carry the envelope and a catalogued code', () => {
  it('431 headers_too_large for a 20 KiB header (answered by Node before Fastify sees the request)', async () => {
    expectEnvelope(await get('/healthz', `X-Padding: ${'a'.repeat(20_000)}\r\n`), 431, 'headers_too_large');
  });

  it('414 uri_too_long for a 10 KiB URL, in the query or in a path parameter', async () => {
    expectEnvelope(await get(`/healthz?x=${'a'.repeat(10_000)}`), 414, 'uri_too_long');
    expectEnvelope(await get(`/api/v1/contacts/${'a'.repeat(10_000)}`), 414, 'uri_too_long');
  });

  it('400 for bytes that are not UTF-8 in the path, a malformed percent-encoding and a request that is not HTTP', async () => {
    const bytes = Buffer.concat([
      Buffer.from('GET /api/v1/contacts/'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from(' HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'),
    ]);
    expectEnvelope(await rawExchange(t.baseUrl, bytes), 400, 'malformed_request');
    expectEnvelope(await get('/api/v1/contacts/%E0%A4%A'), 400, 'validation_failed');
    expectEnvelope(await get('/api/v1/contacts/%C0%AF'), 400, 'validation_failed');
    expectEnvelope(await rawExchange(t.baseUrl, 'HELLO\r\n\r\n'), 400, 'malformed_request');
  });

  it('413 payload_too_large, 415 unsupported_media_type, 400 for JSON that does not parse', async () => {
    const post = (type: string, body: string, length = Buffer.byteLength(body)) =>
      rawExchange(
        t.baseUrl,
        `POST /api/v1/auth/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`,
        [body],
      );
    expectEnvelope(await post('application/json', '{"email":', 5_000_000), 413, 'payload_too_large');
    expectEnvelope(await post('application/xml', '<login/>'), 415, 'unsupported_media_type');
    expectEnvelope(await post('application/json', '{"email":'), 400, 'validation_failed');
  });
});

describe('JSON nesting is bounded before JSON.parse', () => {
  it(`a small body nested deeper than ${MAX_JSON_DEPTH} levels is refused with 400 json_too_deep; ${MAX_JSON_DEPTH} levels parse`, async () => {
    const post = (body: string) =>
      rawExchange(
        t.baseUrl,
        `POST /api/v1/auth/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`,
        [body],
      );
    expectEnvelope(await post('['.repeat(100_000) + ']'.repeat(100_000)), 400, 'json_too_deep');
    expectEnvelope(
      await post(`{"email":${'{"a":'.repeat(MAX_JSON_DEPTH)}1${'}'.repeat(MAX_JSON_DEPTH)}}`),
      400,
      'json_too_deep',
    );
    // Brackets inside strings do not count; a body at the limit reaches validation.
    expectEnvelope(
      await post(JSON.stringify({ email: '[[[[[[[[[['.repeat(100), password: '{{{{' })),
      400,
      'validation_failed',
    );
    const atLimit = `${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`;
    expectEnvelope(await post(atLimit), 400, 'validation_failed');
  });

  it('45 MB of `[[[` to the contacts import, five at once, are refused quickly while /healthz stays responsive (p95 < 500 ms, none ≥ 2 s)', {
    timeout: 120_000,
  }, async () => {
    const { api, partner } = await partnerAdmin(t);
    await createOrg(t, partner.id);
    const size = 45 * 1024 * 1024;
    const piece = Buffer.alloc(1024 * 1024, '[');
    const pieces = function* () {
      for (let sent = 0; sent < size; sent += piece.length) yield piece;
    };
    const head = (framing: string) =>
      `POST /api/v1/contacts/import HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${api.token}\r\nContent-Type: application/json\r\n${framing}Connection: close\r\n\r\n`;
    const chunked = function* () {
      for (const p of pieces())
        yield Buffer.concat([Buffer.from(`${p.length.toString(16)}\r\n`), p, Buffer.from('\r\n')]);
      yield Buffer.from('0\r\n\r\n');
    };
    const started = performance.now();
    const { result, latency } = await whilePolling(t.baseUrl, () =>
      Promise.all([
        ...Array.from({ length: 3 }, () => rawExchange(t.baseUrl, head(`Content-Length: ${size}\r\n`), pieces())),
        ...Array.from({ length: 2 }, () => rawExchange(t.baseUrl, head('Transfer-Encoding: chunked\r\n'), chunked())),
      ]),
    );
    for (const res of result) expectEnvelope(res, 413, 'payload_too_large');
    expect(performance.now() - started, 'all five refused within 5 s').toBeLessThan(5_000);
    expectResponsive(latency, 'five 45 MB uploads');
  });
});

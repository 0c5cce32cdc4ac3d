// The OpenAPI document is generated from the route schemas (STYLE 1): it must list every route the app
// serves, and every API operation must say what it answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_ROUTE_URLS } from '../../src/modules/console/routes.js';
import { ERROR_CATALOG } from '../../src/http/errors.js';
import { startApp, type TestApp } from '../support/app.js';

type Json = Record<string, any>;
interface OpenApiDoc {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, Json>>;
  components?: { schemas?: Record<string, Json>; responses?: Record<string, Json> };
  tags?: { name: string; description?: string }[];
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

let t: TestApp;
let doc: OpenApiDoc;
beforeAll(async () => {
  t = await startApp();
  const res = await fetch(`${t.baseUrl}/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json\b/);
  doc = (await res.json()) as OpenApiDoc;
});
afterAll(async () => t?.close());

/** Fastify `/users/:id` and OpenAPI `/users/{id}` to one form; `*` is a wildcard in both. */
const normalise = (url: string) =>
  url
    .replace(/:([A-Za-z0-9_]+)(\([^)]*\))?/g, '{$1}')
    .replace(/\{\*\}|\*/g, '{*}')
    .replace(/(.)\/$/, '$1');

const documented = () =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((m) => METHODS.includes(m))
      .map((m) => `${m.toUpperCase()} ${normalise(path)}`),
  );

/** Only the interactive reference's own files and the document itself stay out of the document. */
/** A response as declared, or the shared one its `$ref` names (`#/components/responses/...`). */
const resolved = (r: Json): Json =>
  typeof r.$ref === 'string' ? (doc.components?.responses?.[r.$ref.split('/').pop()!] ?? {}) : r;

const undocumentedByDesign = (url: string) =>
  url === '/openapi.json' ||
  url === '/docs' ||
  url.startsWith('/docs/') ||
  (CONSOLE_ROUTE_URLS as readonly string[]).includes(url);

describe('/openapi.json is an OpenAPI 3.1 document of every registered route', () => {
  it('is OpenAPI 3.1 with a title and version', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
    expect(Object.keys(doc.paths).length).toBeGreaterThan(0);
  });

  it('lists exactly the registered routes (besides /docs* and /openapi.json)', () => {
    const registered = t.app.registeredRoutes;
    expect(registered.length).toBeGreaterThan(0);
    expect(registered).toContainEqual(expect.objectContaining({ method: 'GET', url: '/api/v1/auth/me' }));
    const expected = [
      ...new Set(registered.filter((r) => !undocumentedByDesign(r.url)).map((r) => `${r.method} ${normalise(r.url)}`)),
    ].sort();
    const listed = [...new Set(documented())].sort();
    // Both directions: a hidden route is missing from the document; a documented one that does not exist is a lie.
    expect(
      expected.filter((r) => !listed.includes(r)),
      'registered but not in /openapi.json',
    ).toEqual([]);
    expect(
      listed.filter((r) => !expected.includes(r)),
      'in /openapi.json but not registered',
    ).toEqual([]);
    expect(listed).toContain('GET /api/v1/auth/me');
  });

  it('the exclusions are only the reference UI and the document (no other route escapes the comparison)', () => {
    const excluded = t.app.registeredRoutes.filter((r) => undocumentedByDesign(r.url)).map((r) => r.url);
    expect(excluded).toContain('/openapi.json');
    for (const url of excluded)
      if (!(CONSOLE_ROUTE_URLS as readonly string[]).includes(url))
        expect(url).toMatch(/^\/(openapi\.json|docs(\/.*)?)$/);
  });

  // A redirect endpoint (SSO login and callback) documents its 3xx instead: it has no body to describe.
  it('every operation under /api/v1 declares a 200 or 201 response schema (or, for a redirect, its 3xx)', () => {
    const missing: string[] = [];
    let checked = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      if (!path.startsWith('/api/v1/')) continue;
      for (const [method, op] of Object.entries(item)) {
        if (!METHODS.includes(method)) continue;
        checked++;
        const responses = (op.responses ?? {}) as Record<string, Json>;
        const ok =
          ['200', '201'].some((s) => {
            // JSON for most routes; the audit export documents text/csv and application/x-ndjson.
            return Object.values((responses[s]?.content ?? {}) as Record<string, Json>).some((c) => {
              const schema = c?.schema;
              return schema && typeof schema === 'object' && Object.keys(schema).length > 0;
            });
          }) || Object.keys(responses).some((s) => /^3\d\d$/.test(s));
        if (!ok) missing.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(checked).toBeGreaterThan(0);
    expect(missing).toEqual([]);
  });

  it('every $ref points at a schema or a shared answer the document defines', () => {
    const refs: string[] = [];
    const visit = (v: unknown): void => {
      if (Array.isArray(v)) for (const x of v) visit(x);
      else if (v && typeof v === 'object')
        for (const [k, x] of Object.entries(v)) {
          // Example values are data (a SCIM resource has a `$ref` field of its own), not references.
          if (k === 'example' || k === 'examples') continue;
          if (k === '$ref' && typeof x === 'string') refs.push(x);
          else visit(x);
        }
    };
    visit(doc);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of new Set(refs)) {
      const [, , kind, name] = ref.split('/');
      expect(ref).toMatch(/^#\/components\/(schemas|responses)\/[A-Za-z]+$/);
      expect((doc.components as Json)?.[kind!], ref).toHaveProperty([name!]);
    }
  });

  it('every operation under /api/v1 documents its error answers with the envelope', () => {
    const errorRef = '#/components/schemas/Error';
    for (const [path, item] of Object.entries(doc.paths)) {
      if (!path.startsWith('/api/v1/')) continue;
      for (const [method, op] of Object.entries(item)) {
        if (!METHODS.includes(method)) continue;
        for (const [status, declared] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
          if (Number(status) < 400) continue;
          const response = resolved(declared);
          expect(response.content?.['application/json']?.schema?.$ref, `${method} ${path} ${status}`).toBe(errorRef);
        }
      }
    }
  });
});

const operations = () =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([m]) => METHODS.includes(m))
      .map(([m, op]) => ({ key: `${m.toUpperCase()} ${path}`, path, method: m, op })),
  );
const op = (method: string, path: string) => doc.paths[path]?.[method] as Json;

describe('every operation is documented as a product (operationId, summary, description, tags)', () => {
  it('every route declares its own summary in its schema (no fallback exists for it)', () => {
    const declared = t.app.openApiDeclarations;
    expect(declared.length).toBeGreaterThan(100);
    expect(declared.filter((d) => !d.summary?.trim()).map((d) => `${d.method} ${d.url}`)).toEqual([]);
  });

  it('every operation has a unique camelCase operationId, a summary, a description and a tag', () => {
    const ids = new Map<string, string>();
    const problems: string[] = [];
    for (const { key, op } of operations()) {
      if (typeof op.operationId !== 'string' || !/^[a-z][A-Za-z0-9]*$/.test(op.operationId))
        problems.push(`${key}: operationId ${op.operationId}`);
      else if (ids.has(op.operationId))
        problems.push(`${key}: operationId ${op.operationId} also on ${ids.get(op.operationId)}`);
      else ids.set(op.operationId, key);
      if (!op.summary?.trim()) problems.push(`${key}: no summary`);
      if (!op.description?.trim() || op.description.trim() === op.summary?.trim())
        problems.push(`${key}: no description beyond the summary`);
      if (!Array.isArray(op.tags) || !op.tags.length) problems.push(`${key}: no tag`);
    }
    expect(problems).toEqual([]);
  });

  it('the description states the access rule the guards enforce', () => {
    expect(op('get', '/api/v1/users').description).toMatch(/`users:read`/);
    expect(op('post', '/api/v1/auth/login').description).toMatch(/^[\s\S]*Public: no access token/);
    expect(op('post', '/api/v1/roles').description).toMatch(/step-up/);
  });

  it('every response has a description (never "Default Response")', () => {
    const bad = operations().flatMap(({ key, op }) =>
      Object.entries((op.responses ?? {}) as Json)
        .filter(([, r]) => !resolved(r).description || resolved(r).description === 'Default Response')
        .map(([s]) => `${key} ${s}`),
    );
    expect(bad).toEqual([]);
  });
});

describe('error answers are declared from the route guards, with one envelope whose code is the catalogue', () => {
  it('the Error component: code is the enum of the error catalogue; details, errorId and retryAfter are described', () => {
    const error = doc.components!.schemas!.Error!;
    expect([...error.properties.code.enum].sort()).toEqual(Object.keys(ERROR_CATALOG).sort());
    expect(error.required).toEqual(expect.arrayContaining(['error', 'message', 'code']));
    for (const f of ['details', 'errorId', 'retryAfter']) expect(error.properties, f).toHaveProperty(f);
  });

  it('every operation declares 400, 500 and 503; authenticated ones 401, 403 and 428; one with a path parameter 404; one with a body 413 and 415', () => {
    const problems: string[] = [];
    for (const { key, path, op } of operations()) {
      const has = (s: number) => Boolean(op.responses?.[String(s)]);
      const need = [400, 500, 503];
      if (op.security === undefined) need.push(401, 403, 428);
      if (/\{[^}]+\}/.test(path)) need.push(404);
      if (op.requestBody) need.push(413, 415);
      for (const s of need) if (!has(s)) problems.push(`${key}: ${s}`);
    }
    expect(problems).toEqual([]);
  });

  it('rate-limited routes declare 429', () => {
    expect(op('post', '/api/v1/auth/login').responses).toHaveProperty('429');
    expect(op('post', '/api/v1/agents/enroll').responses).toHaveProperty('429');
  });
});

describe('security, content types and document metadata', () => {
  it('probes and public routes declare security: []; a protected route inherits the bearer scheme', () => {
    for (const [m, p] of [
      ['get', '/healthz'],
      ['get', '/readyz'],
      ['post', '/api/v1/auth/login'],
      ['post', '/api/v1/auth/register'],
      ['post', '/api/v1/auth/refresh'],
      ['get', '/api/v1/sso/callback'],
      ['get', '/api/v1/.well-known/jwks.json'],
    ] as const) {
      expect(op(m, p)?.security, `${m} ${p}`).toEqual([]);
    }
    expect(op('get', '/api/v1/users').security).toBeUndefined();
    expect((doc as Json).security).toEqual([{ bearer: [] }]);
    // The scrape: the METRICS_TOKEN bearer when the operator sets one, else nothing.
    expect(op('get', '/metrics').security).toEqual([{ metricsToken: [] }, {}]);
  });

  it('the agent routes use the agent token scheme, not the JWT one', () => {
    const schemes = (doc.components as Json).securitySchemes;
    expect(schemes.agentToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(op('post', '/api/v1/agents/inventory').security).toEqual([{ agentToken: [] }]);
  });

  it('/metrics is text/plain', () => {
    expect(Object.keys(op('get', '/metrics').responses['200'].content)).toEqual(['text/plain']);
  });

  it('info.license and servers are set', () => {
    expect((doc.info as Json).license?.name).toBeTruthy();
    expect((doc as Json).servers?.[0]?.url).toBe(t.baseUrl);
  });
});

describe('request schemas carry the constraints the server enforces', () => {
  const bodyOf = (m: string, p: string) => {
    let s = op(m, p).requestBody.content['application/json'].schema as Json;
    if (s.$ref) s = doc.components!.schemas![s.$ref.split('/').pop()!]!;
    return s;
  };

  it('"nothing to change" PATCH bodies say minProperties: 1', () => {
    for (const p of [
      '/api/v1/orgs/organizations/{id}',
      '/api/v1/users/{id}',
      '/api/v1/roles/{id}',
      '/api/v1/contacts/{id}',
      '/api/v1/users/me',
    ]) {
      expect(bodyOf('patch', p).minProperties, p).toBe(1);
    }
    expect(bodyOf('post', '/api/v1/auth/switch-context').minProperties).toBe(1);
    expect(bodyOf('post', '/api/v1/auth/step-up')).toMatchObject({ minProperties: 1, maxProperties: 1 });
  });

  it('strings in request bodies and parameters refuse NUL (as refuseNulBytes does); cursors are base64url', () => {
    const name = bodyOf('post', '/api/v1/auth/register').properties.name;
    expect(new RegExp(name.pattern).test('a\u0000b')).toBe(false);
    expect(new RegExp(name.pattern).test('Ada')).toBe(true);
    const cursor = (op('get', '/api/v1/users').parameters as Json[]).find((p) => p.name === 'cursor')!;
    expect(cursor.schema.pattern).toBe('^[A-Za-z0-9_-]+$');
  });

  it('time zones are the IANA enum; the MFA phone number is E.164', () => {
    const phone = bodyOf('post', '/api/v1/auth/phone/verify').properties.phoneNumber;
    expect(new RegExp(phone.pattern).test('+12025550123')).toBe(true);
    expect(new RegExp(phone.pattern).test('2025550123')).toBe(false);
    const tz = JSON.stringify(doc).match(/"enum":\[[^\]]*"Europe\/Berlin"[^\]]*\]/);
    expect(tz?.[0]).toContain('"UTC"');
  });
});

describe('/docs is the interactive API reference', () => {
  it('works over plain http on any host: its CSP does not send upgrade-insecure-requests', async () => {
    const res = await fetch(`${t.baseUrl}/docs/static/index.html`);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/default-src 'self'/);
    expect(csp).not.toMatch(/upgrade-insecure-requests/);
  });

  it('answers HTML that loads Swagger UI, with or without the trailing slash', async () => {
    for (const path of ['/docs', '/docs/']) {
      const res = await fetch(`${t.baseUrl}${path}`, { redirect: 'follow' });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html\b/);
      const html = await res.text();
      expect(html).toMatch(/swagger-ui/i);
      expect(html).toMatch(/<div id="swagger-ui">/);
    }
  });

  it('the UI assets it references are served', async () => {
    for (const asset of ['swagger-ui-bundle.js', 'swagger-initializer.js']) {
      const res = await fetch(`${t.baseUrl}/docs/static/${asset}`);
      expect(res.status, asset).toBe(200);
    }
  });

  it('the UI is fed the same document as /openapi.json', async () => {
    const res = await fetch(`${t.baseUrl}/docs/json`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(doc);
  });
});

describe('a reference an integrator can use: examples, field descriptions, declared tags, shared answers', () => {
  const jsonMedia = (content: Json | undefined): Json | undefined =>
    content?.['application/json'] ?? content?.['application/scim+json'];

  it('every JSON request body and every successful JSON answer carries an example', () => {
    const missing: string[] = [];
    let bodies = 0;
    let answers = 0;
    for (const { key, op } of operations()) {
      const body = jsonMedia(op.requestBody?.content);
      if (body) {
        bodies++;
        if (body.example === undefined && body.examples === undefined) missing.push(`${key} request body`);
      }
      for (const [status, r] of Object.entries((op.responses ?? {}) as Json)) {
        const media = /^2\d\d$/.test(status) ? jsonMedia(resolved(r).content) : undefined;
        if (!media) continue;
        answers++;
        if (media.example === undefined && media.examples === undefined) missing.push(`${key} ${status}`);
      }
    }
    expect(bodies).toBeGreaterThan(50);
    expect(answers).toBeGreaterThan(100);
    expect(missing).toEqual([]);
  });

  it('at least 80 % of the properties in the document have a description', () => {
    const named = doc.components?.schemas ?? {};
    let properties = 0;
    let described = 0;
    const seen = new Set<unknown>();
    const visit = (s: unknown): void => {
      if (!s || typeof s !== 'object' || seen.has(s)) return;
      seen.add(s);
      const o = s as Json;
      if (o.properties && typeof o.properties === 'object' && !Array.isArray(o.properties))
        for (const p of Object.values(o.properties as Json)) {
          properties++;
          const target = typeof p.$ref === 'string' ? named[p.$ref.split('/').pop()!] : undefined;
          if (p.description?.trim() || target?.description?.trim()) described++;
        }
      for (const v of Object.values(o)) visit(v);
    };
    visit(doc.paths);
    visit(doc.components);
    expect(properties).toBeGreaterThan(1000);
    expect(described / properties).toBeGreaterThanOrEqual(0.8);
  });

  it('every tag an operation uses is declared once, with a description', () => {
    const declared = doc.tags ?? [];
    expect(new Set(declared.map((t) => t.name)).size).toBe(declared.length);
    for (const t of declared) expect(t.description?.trim(), t.name).toBeTruthy();
    const names = new Set(declared.map((t) => t.name));
    const undeclared = operations().flatMap(({ key, op }) =>
      ((op.tags ?? []) as string[]).filter((tag) => !names.has(tag)).map((tag) => `${key}: ${tag}`),
    );
    expect(undeclared).toEqual([]);
  });

  it('the catalogue’s error answers are shared components, so the document stays small', () => {
    const shared = doc.components?.responses ?? {};
    for (const name of ['BadRequest', 'Unauthorized', 'Forbidden', 'NotFound', 'InternalError', 'Unavailable'])
      expect(shared, name).toHaveProperty(name);
    const refs = operations().flatMap(({ op }) =>
      Object.values((op.responses ?? {}) as Json).filter((r) => typeof r.$ref === 'string'),
    );
    expect(refs.length).toBeGreaterThan(500);
    // Each shared answer's example is an envelope of its own status.
    // SCIM's error answers are shared too, in SCIM's own error shape and media type.
    for (const [name, r] of Object.entries(shared)) {
      if (name.startsWith('Scim')) {
        expect(r.content['application/scim+json'].schema.$ref, name).toBe('#/components/schemas/ScimError');
        continue;
      }
      const example = r.content['application/json'].example;
      expect(Object.keys(ERROR_CATALOG)).toContain(example.code);
    }
    expect(Object.keys(shared)).toContain('ScimBadRequest');
    expect(JSON.stringify(doc).length).toBeLessThan(850_000);
  });
});

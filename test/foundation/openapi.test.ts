// The OpenAPI document is generated from the route schemas (STYLE 1): it must list every route the app
// serves, and every API operation must say what it answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_ROUTE_URLS } from '../../src/modules/console/routes.js';
import { startApp, type TestApp } from '../support/app.js';

type Json = Record<string, any>;
interface OpenApiDoc {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, Json>>;
  components?: { schemas?: Record<string, Json> };
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
const undocumentedByDesign = (url: string) =>
  url === '/openapi.json' || url === '/docs' || url.startsWith('/docs/') || (CONSOLE_ROUTE_URLS as readonly string[]).includes(url);

describe('/openapi.json is an OpenAPI 3.1 document of every registered route', () => {
  it('is OpenAPI 3.1 with a title and version', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
    expect(Object.keys(doc.paths).length).toBeGreaterThan(0);
  });

  it('lists exactly the registered routes (besides /docs* and /openapi.json)', () => {
    const registered = t.app.registeredRoutes;
    expect(registered.length).toBeGreaterThan(0);
    expect(registered).toContainEqual({ method: 'GET', url: '/api/v1/auth/me' });
    const expected = [...new Set(registered.filter((r) => !undocumentedByDesign(r.url)).map((r) => `${r.method} ${normalise(r.url)}`))].sort();
    const listed = [...new Set(documented())].sort();
    // Both directions: a hidden route is missing from the document; a documented one that does not exist is a lie.
    expect(expected.filter((r) => !listed.includes(r)), 'registered but not in /openapi.json').toEqual([]);
    expect(listed.filter((r) => !expected.includes(r)), 'in /openapi.json but not registered').toEqual([]);
    expect(listed).toContain('GET /api/v1/auth/me');
  });

  it('the exclusions are only the reference UI and the document (no other route escapes the comparison)', () => {
    const excluded = t.app.registeredRoutes.filter((r) => undocumentedByDesign(r.url)).map((r) => r.url);
    expect(excluded).toContain('/openapi.json');
    for (const url of excluded) if (!(CONSOLE_ROUTE_URLS as readonly string[]).includes(url)) expect(url).toMatch(/^\/(openapi\.json|docs(\/.*)?)$/);
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

  it('every $ref points at a schema the document defines', () => {
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of new Set(refs)) {
      expect(ref).toMatch(/^#\/components\/schemas\//);
      expect(doc.components?.schemas, ref).toHaveProperty([ref.split('/').pop()!]);
    }
  });

  it('every operation under /api/v1 documents its error answers with the envelope', () => {
    const errorRef = '#/components/schemas/Error';
    for (const [path, item] of Object.entries(doc.paths)) {
      if (!path.startsWith('/api/v1/')) continue;
      for (const [method, op] of Object.entries(item)) {
        if (!METHODS.includes(method)) continue;
        for (const [status, response] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
          if (Number(status) < 400) continue;
          expect(response.content?.['application/json']?.schema?.$ref, `${method} ${path} ${status}`).toBe(errorRef);
        }
      }
    }
  });
});

describe('/docs is the interactive API reference', () => {
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

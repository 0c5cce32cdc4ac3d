// The console is served by the same process at `/`: client routes get index.html under a strict CSP, hashed
// assets a year's cache, and the API, docs, metrics and probes are never shadowed.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installErrorHandling } from '../../src/http/error-handler.js';
import { consoleRoutes } from '../../src/modules/console/routes.js';
import { startApp, type TestApp } from '../support/app.js';
import { ensureConsoleBuilt } from './browser.js';

let t: TestApp;
beforeAll(async () => {
  ensureConsoleBuilt();
  t = await startApp();
});
afterAll(() => t?.close());

const get = (path: string, init?: RequestInit) => fetch(`${t.baseUrl}${path}`, init);

describe('the console is served at / under a strict Content-Security-Policy', () => {
  it('/ answers the app shell with script-src self, no inline script, frame-ancestors none, nosniff and no-referrer', async () => {
    const res = await get('/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const html = await res.text();
    // Every <script> of the shell loads from our origin; none carries inline code.
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/src="\/assets\//);
      expect(body?.trim()).toBe('');
    }
  });

  it('client routes (the links Gatehouse mails) answer the same shell to a browser navigation', async () => {
    for (const path of [
      '/login?error=sso_failed',
      '/reset-password?token=abc',
      '/accept-invite?token=abc',
      '/users',
      '/setup?token=x',
    ]) {
      const res = await get(path, {
        headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
      });
      expect(res.status, path).toBe(200);
      expect(await res.text(), path).toContain('<div id="root">');
    }
  });

  it('an unknown path asked for by an API client (no text/html in Accept) is the JSON 404, not the shell', async () => {
    const res = await get('/no-such-thing', { headers: { accept: 'application/json' } });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: 'not_found' });
  });

  it('hashed assets are cached for a year, immutable; a missing asset is a 404, not the shell', async () => {
    const html = await (await get('/')).text();
    const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(asset).toBeTruthy();
    const res = await get(asset!);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toMatch(/max-age=31536000.*immutable|immutable.*max-age=31536000/);
    expect(res.headers.get('content-type')).toMatch(/javascript/);
    expect((await get('/assets/nope-123.js')).status).toBe(404);
    expect((await get('/missing.png')).status).toBe(404);
  });
});

describe('the console never shadows the API, the docs, the document, metrics or probes', () => {
  it('unknown API paths keep the JSON 404 envelope and the JSON CSP', async () => {
    for (const path of ['/api/v1/nope', '/api/v2', '/api', '/api/v1/users/x/y/z']) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toMatch(/application\/json/);
      expect((await res.json()).code, path).toBe('not_found');
      expect(res.headers.get('content-security-policy'), path).toBe("default-src 'none'; frame-ancestors 'none'");
    }
  });

  it('operational endpoints answer as before', async () => {
    expect((await get('/healthz')).status).toBe(200);
    expect((await (await get('/openapi.json')).json()).openapi).toMatch(/^3\.1/);
    expect((await get('/metrics')).headers.get('content-type')).toMatch(/text\/plain/);
    expect((await get('/docs')).headers.get('content-type')).toMatch(/text\/html/);
    expect((await get('/docs/nope.js')).status).toBe(404);
    expect((await get('/readyz')).status).toBe(200);
  });
});

describe('without a built console the service still runs', () => {
  it('/ and client routes answer 503 console_not_built naming npm run build:web; the API is unaffected', async () => {
    const app = Fastify();
    installErrorHandling(app);
    app.get('/api/v1/ping', async () => ({ ok: true }));
    await app.register(consoleRoutes(join(mkdtempSync(join(tmpdir(), 'gh-noconsole-')), 'dist')));
    for (const url of ['/', '/login', '/assets/x.js']) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(503);
      expect(res.json()).toMatchObject({ code: 'console_not_built' });
      expect(res.json().message).toContain('npm run build:web');
    }
    expect((await app.inject({ url: '/api/v1/ping' })).json()).toEqual({ ok: true });
    expect((await app.inject({ url: '/api/v1/nope' })).statusCode).toBe(404);
    await app.close();
  });
});

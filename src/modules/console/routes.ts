// The admin console (web/, built by `npm run build:web` into web/dist) served by the same process at `/`.
// Hashed assets under /assets/ get a year's immutable cache; every other path that is not the API's answers
// index.html (client-side routes), never cached, under a strict Content-Security-Policy. API, docs, metrics and
// probes are never shadowed: their unknown paths keep the API's JSON 404. Without web/dist the service still runs
// and the console's paths answer 503 `console_not_built`.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../http/errors.js';

/** The routes this plugin registers: the console's pages, not API operations (so not in /openapi.json). */
export const CONSOLE_ROUTE_URLS = ['/', '/*', '/assets/*'] as const;

/** Paths that belong to the API and the operational endpoints: the console never answers them. */
const RESERVED = /^\/(api(\/|$)|docs(\/|$)|openapi\.json$|metrics$|healthz$|readyz$)/;

/**
 * Scripts only from our origin, no inline script or style, no framing, no plugins; the API is same-origin.
 * Mantine 9 ships its styles as a CSS file; its two runtime <style> tags (theme variables, responsive classes) are
 * turned off in web/src/main.tsx, so `style-src 'self'` holds (React sets style props through the CSSOM).
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** web/dist under the package root, found from this module whether it runs from src/ (tsx) or dist/ (compiled). */
export function consoleDistDir(from = dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return join(dir, 'web', 'dist');
    const parent = dirname(dir);
    if (parent === dir) return join(process.cwd(), 'web', 'dist');
    dir = parent;
  }
}

function secureHeaders(reply: FastifyReply) {
  reply.header('content-security-policy', CONSOLE_CSP);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('x-frame-options', 'DENY');
  reply.header('cross-origin-opener-policy', 'same-origin');
  reply.header(
    'permissions-policy',
    'camera=(), microphone=(), geolocation=(), publickey-credentials-get=(self), publickey-credentials-create=(self)',
  );
}

function acceptsHtml(req: FastifyRequest): boolean {
  const accept = req.headers.accept;
  return typeof accept === 'string' && /\btext\/html\b/i.test(accept);
}

export function consoleRoutes(dir = consoleDistDir()) {
  return async (app: FastifyInstance) => {
    const indexFile = join(dir, 'index.html');
    const built = existsSync(indexFile);
    app.addHook('onRequest', async (req, reply) => {
      if (!RESERVED.test(req.url)) secureHeaders(reply);
    });

    if (!built) {
      const notBuilt = async (req: FastifyRequest, reply: FastifyReply) => {
        if (RESERVED.test(req.url)) return reply.callNotFound();
        throw new AppError('console_not_built');
      };
      app.get('/', { schema: { hide: true } }, notBuilt);
      app.get('/*', { schema: { hide: true } }, notBuilt);
      app.get('/assets/*', { schema: { hide: true } }, notBuilt);
      return;
    }

    // index.html is small and changes only with a build: read once per process start.
    const index = readFileSync(indexFile);
    // Other top-level files of the build (favicon, robots.txt): served as they are, short cache.
    const topLevel = new Set(readdirSync(dir).filter((f) => f !== 'index.html' && statSync(join(dir, f)).isFile()));
    const sendIndex = (reply: FastifyReply) =>
      reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(index);

    await app.register(fastifyStatic, {
      root: join(dir, 'assets'),
      prefix: '/assets/',
      // Vite names every file under assets/ by its content hash: a changed file is a new URL.
      immutable: true,
      maxAge: '365d',
      index: false,
      redirect: false,
      list: false,
      schemaHide: true,
    });

    app.get('/', { schema: { hide: true } }, async (_req, reply) => sendIndex(reply));
    app.get('/*', { schema: { hide: true } }, async (req, reply) => {
      if (RESERVED.test(req.url)) return reply.callNotFound();
      const path = req.url.split('?')[0] ?? '/';
      const name = path.slice(1);
      if (topLevel.has(name)) return reply.header('cache-control', 'public, max-age=3600').sendFile(name, dir);
      // A missing file (has an extension) is a 404, not the app shell: a broken asset link must not load HTML.
      if (/\.[a-z0-9]{1,8}$/i.test(name)) return reply.callNotFound();
      // Only a page navigation (a browser asks for HTML) gets the shell; an API client asking for an unknown path
      // gets the API's JSON 404 envelope.
      if (!acceptsHtml(req)) return reply.callNotFound();
      return sendIndex(reply);
    });
  };
}

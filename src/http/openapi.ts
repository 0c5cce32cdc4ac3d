// The OpenAPI document says what the server does, by rules applied to every route (present and future) rather than
// by hand per route: error answers derived from the route's guards, security from its authentication, response
// descriptions, operation ids, and the constraints the central input guards enforce.
import type { FastifyInstance, RouteOptions } from 'fastify';
import { addExamples, applyGlossary, type Json } from './openapi-content.js';
import { TAGS } from './openapi-tags.js';
import { ERROR_CATALOG } from './errors.js';
import { errorEnvelope } from './schemas.js';
import { carriesStepUp } from './step-up.js';

type Hook = ((...args: never[]) => unknown) & { permissions?: readonly string[]; rateLimit?: string };

/** What a route declared itself (before the fallbacks below), for the completeness test. */
export interface OperationDeclaration {
  method: string;
  url: string;
  operationId?: string;
  summary?: string;
  description?: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    openApiDeclarations: OperationDeclaration[];
  }
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const hooksOf = (r: RouteOptions): Hook[] =>
  ([r.onRequest, r.preValidation, r.preHandler] as unknown[]).flat().filter((h): h is Hook => typeof h === 'function');

/** `GET /api/v1/users/:id/role` → `getUsersIdRole`: stable as long as the path is. */
export function deriveOperationId(method: string, url: string): string {
  const words = url
    .replace(/^\/api\/v1\//, '/')
    .split(/[/.\-_]+/)
    .filter(Boolean)
    .map((seg) => (seg.startsWith(':') ? `by ${seg.slice(1)}` : seg))
    .join(' ')
    .split(/\s+/)
    .filter(Boolean);
  return [method.toLowerCase(), ...words.map((w) => w[0]!.toUpperCase() + w.slice(1))].join('');
}

/**
 * Every status a route can answer besides its own success, derived from what it is made of:
 * authenticate → 401, 403 and 428; a body → 413 and 415; a path parameter → 404; a rate-limit guard → 429; every
 * route → 400 (a malformed URL or a NUL in the query string is refused before any route runs; a schema refuses the
 * rest), 500 and 503 (an unexpected failure, a database or store outage, shutting down).
 */
export function derivedErrorStatuses(r: RouteOptions): number[] {
  const hooks = hooksOf(r);
  const names = new Set(hooks.map((h) => h.name));
  const s = r.schema ?? {};
  const out = new Set<number>([400, 500, 503]);
  if (names.has('authenticate')) for (const c of [401, 403, 428]) out.add(c);
  if (
    ['requireTenant', 'requireFullOrgAccess', 'requirePermission', 'requireMfa'].some((n) => names.has(n)) ||
    carriesStepUp(r.onRequest) ||
    carriesStepUp(r.preHandler)
  )
    out.add(403);
  if (s.body) for (const c of [413, 415]) out.add(c);
  if (/\/:[A-Za-z]/.test(r.url)) out.add(404);
  if (hooks.some((h) => typeof h.rateLimit === 'string')) out.add(429);
  return [...out].sort();
}

/** The access paragraph of an operation's description, read from its guards so it cannot drift. */
function accessText(r: RouteOptions, isPublic: boolean): string {
  const hooks = hooksOf(r);
  const names = new Set(hooks.map((h) => h.name));
  const parts: string[] = [];
  if (isPublic) parts.push('Public: no access token.');
  else if (names.has('authenticate')) parts.push('Needs an access token (`Authorization: Bearer`).');
  if (names.has('requireFullOrgAccess')) parts.push('Partner callers need full organisation access.');
  else if (names.has('requireTenant')) parts.push('Needs a partner or organisation context.');
  const perms = hooks.flatMap((h) => h.permissions ?? []);
  if (perms.length) parts.push(`Needs permission ${perms.map((p) => `\`${p}\``).join(' and ')}.`);
  if (names.has('requireMfa')) parts.push('The acting session must have passed a second factor.');
  if (carriesStepUp(r.onRequest) || carriesStepUp(r.preHandler))
    parts.push('Needs a recent proof of presence (`POST /api/v1/auth/step-up`), else 403 `step_up_required`.');
  const limits = hooks.map((h) => h.rateLimit).filter((l): l is string => typeof l === 'string');
  if (limits.length)
    parts.push(
      `Rate limited (${limits.map((l) => `\`${l}\``).join(', ')}): 429 \`rate_limited\` with \`Retry-After\`.`,
    );
  return parts.join(' ');
}

/**
 * Installs the per-route rules. Call before registering @fastify/swagger and any route: onRoute hooks run in the
 * order they were added, and the document generator reads the route options the hooks leave.
 */
export function installOpenApiRules(app: FastifyInstance): void {
  const declarations: OperationDeclaration[] = [];
  app.decorate('openApiDeclarations', declarations);
  app.addHook('onRoute', (r) => {
    const schema = (r.schema ?? {}) as Json;
    if (schema.hide) return;
    const methods = [r.method].flat().filter((m) => m !== 'HEAD');
    for (const method of methods)
      declarations.push({
        method,
        url: r.url,
        operationId: schema.operationId,
        summary: schema.summary,
        description: schema.description,
      });
    const response: Json = { ...(schema.response ?? {}) };
    for (const status of derivedErrorStatuses(r)) response[status] ??= errorEnvelope;
    const isPublic =
      schema.security !== undefined ? schema.security.length === 0 : !hooksOf(r).some((h) => h.name === 'authenticate');
    const access = accessText(r, isPublic);
    const description = [schema.description ?? (schema.summary ? `${schema.summary}.` : undefined), access]
      .filter(Boolean)
      .join('\n\n');
    r.schema = {
      ...schema,
      operationId: schema.operationId ?? deriveOperationId(methods[0] ?? 'get', r.url),
      security: schema.security ?? (isPublic ? [] : undefined),
      description: description || undefined,
      response,
    };
    if (r.schema.security === undefined) delete r.schema.security;
  });
}

const SUCCESS_TEXT: Record<string, string> = {
  '200': 'Success.',
  '201': 'Created.',
  '202': 'Accepted.',
  '204': 'Done; no content.',
  '302': 'Redirect (Location header).',
  '303': 'Redirect (Location header).',
};

const STATUS_TEXT: Record<string, string> = {
  '400': 'The request is not valid',
  '401': 'Not authenticated, or a credential is wrong',
  '403': 'Not allowed',
  '404': 'Not found (or outside the caller’s tenant scope)',
  '405': 'Method not allowed',
  '409': 'Conflicts with the current state',
  '413': 'The request body is too large',
  '415': 'Unsupported content type',
  '428': 'A precondition is missing',
  '429': 'Too many requests; retry after `Retry-After` seconds',
  '500': 'Unexpected failure; `errorId` names the log line',
  '503': 'Temporarily unavailable (database or store unreachable, or shutting down); retry later',
};

function errorDescription(status: string): string {
  const codes = Object.entries(ERROR_CATALOG)
    .filter(([, e]) => String(e.status) === status)
    .map(([c]) => `\`${c}\``);
  const head = STATUS_TEXT[status] ?? 'Error';
  return codes.length ? `${head}. \`code\` is one of ${codes.join(', ')}.` : `${head}.`;
}

/** PostgreSQL text cannot hold U+0000 and refuseNulBytes (input-guards.ts) refuses it in every request string. */
const NUL_FREE = '^[^\\u0000]*$';

function forbidNul(schema: unknown, components: Json, seen: Set<unknown>): void {
  if (!schema || typeof schema !== 'object' || seen.has(schema)) return;
  seen.add(schema);
  const s = schema as Json;
  if (typeof s.$ref === 'string') {
    forbidNul(components[s.$ref.split('/').pop()!], components, seen);
    return;
  }
  const types = [s.type].flat();
  if (
    types.includes('string') &&
    s.pattern === undefined &&
    s.format === undefined &&
    s.enum === undefined &&
    s.const === undefined
  )
    s.pattern = NUL_FREE;
  for (const key of ['properties', 'patternProperties', '$defs'])
    for (const v of Object.values((s[key] ?? {}) as Json)) forbidNul(v, components, seen);
  for (const key of ['items', 'additionalProperties', 'not', 'propertyNames']) forbidNul(s[key], components, seen);
  for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems'])
    for (const v of (s[key] ?? []) as unknown[]) forbidNul(v, components, seen);
}

/** Drops component schemas nothing refers to (zod registers an input and an output variant of each). */
function pruneComponents(doc: Json): void {
  const schemas = (doc.components?.schemas ?? {}) as Json;
  const used = new Set<string>();
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) {
      for (const x of v) visit(x);
      return;
    }
    if (!v || typeof v !== 'object') return;
    for (const [k, child] of Object.entries(v as Json)) {
      if (k === '$ref' && typeof child === 'string' && child.startsWith('#/components/schemas/')) {
        const name = child.slice('#/components/schemas/'.length);
        if (!used.has(name)) {
          used.add(name);
          visit(schemas[name]);
        }
      } else visit(child);
    }
  };
  visit(doc.paths);
  for (const name of Object.keys(schemas)) if (!used.has(name)) delete schemas[name];
}

/** Names of the shared error answers, `#/components/responses/<name>`. */
const ERROR_RESPONSE_NAMES: Record<string, string> = {
  '400': 'BadRequest',
  '401': 'Unauthorized',
  '403': 'Forbidden',
  '404': 'NotFound',
  '405': 'MethodNotAllowed',
  '409': 'Conflict',
  '413': 'PayloadTooLarge',
  '415': 'UnsupportedMediaType',
  '428': 'PreconditionRequired',
  '429': 'TooManyRequests',
  '500': 'InternalError',
  '503': 'Unavailable',
};

/** An error envelope as the server answers it, for the first catalogued code of a status. */
function errorExample(status: string): Json | undefined {
  const entry = Object.entries(ERROR_CATALOG).find(([, e]) => String(e.status) === status);
  if (!entry) return undefined;
  const [code, e] = entry as [string, { error: string; message: string }];
  const example: Json = { error: e.error, message: e.message, code };
  if (status === '500') example.errorId = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
  if (status === '429' || status === '503') example.retryAfter = 30;
  return example;
}

/**
 * Error answers whose text is the catalogue's (every route's, unless it declared its own) become one shared
 * response per status under components.responses, referred to by every operation: the document states each list of
 * codes once instead of once per operation.
 */
function shareErrorResponses(doc: Json): void {
  const shared: Json = {};
  for (const item of Object.values((doc.paths ?? {}) as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      if (!HTTP_METHODS.includes(method)) continue;
      for (const [status, res] of Object.entries((op.responses ?? {}) as Json)) {
        const base = ERROR_RESPONSE_NAMES[status];
        if (!base || res.description !== errorDescription(status)) continue;
        const media = res.content?.['application/json'];
        const types = Object.keys(res.content ?? {});
        // The API's envelope, or SCIM's error (the same catalogue text, served as application/scim+json too).
        const scim = media?.schema?.$ref === '#/components/schemas/ScimError';
        if (scim) {
          const other = res.content['application/scim+json'];
          if (types.length !== 2 || other?.schema?.$ref !== media.schema.$ref || other.example || media.example)
            continue;
        } else if (types.length !== 1 || media?.schema?.$ref !== '#/components/schemas/Error') continue;
        const name = scim ? `Scim${base}` : base;
        if (!shared[name]) {
          const example = scim ? undefined : errorExample(status);
          shared[name] = { description: res.description, content: structuredClone(res.content) };
          if (example) shared[name].content['application/json'].example = example;
        }
        op.responses[status] = { $ref: `#/components/responses/${name}` };
      }
    }
  }
  doc.components = { ...doc.components, responses: { ...doc.components?.responses, ...shared } };
}

/** Declares the tags the operations use, with their descriptions; an undeclared tag is a mistake in a route. */
function declareTags(doc: Json): void {
  const known = new Set(TAGS.map((t) => t.name));
  const used = new Set<string>();
  for (const item of Object.values((doc.paths ?? {}) as Json))
    for (const [method, op] of Object.entries(item as Json)) {
      if (!HTTP_METHODS.includes(method)) continue;
      for (const tag of (op.tags ?? []) as string[]) {
        if (!known.has(tag))
          throw new Error(`The OpenAPI tag "${tag}" is not declared in src/http/openapi-glossary.ts`);
        used.add(tag);
      }
    }
  doc.tags = TAGS.filter((t) => used.has(t.name));
}

/** Document-wide rules, applied after generation (the `transformObject` step of @fastify/swagger). */
export function finishDocument(doc: Json): Json {
  pruneComponents(doc);
  const components = (doc.components?.schemas ?? {}) as Json;
  const seen = new Set<unknown>();
  for (const item of Object.values((doc.paths ?? {}) as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      if (!HTTP_METHODS.includes(method)) continue;
      for (const [status, res] of Object.entries((op.responses ?? {}) as Json)) {
        if (res.description && res.description !== 'Default Response') continue;
        res.description = Number(status) >= 400 ? errorDescription(status) : (SUCCESS_TEXT[status] ?? 'Success.');
      }
      for (const p of (op.parameters ?? []) as Json[]) {
        // Cursors are opaque: the `nextCursor` of the previous page, base64url (src/http/pagination.ts).
        if (p.in === 'query' && p.name === 'cursor' && p.schema && !p.schema.pattern) {
          p.schema = { ...p.schema, pattern: '^[A-Za-z0-9_-]+$' };
          p.description ??= 'Opaque: the `nextCursor` of the previous page.';
        }
        forbidNul(p.schema, components, seen);
      }
      for (const media of Object.values((op.requestBody?.content ?? {}) as Json))
        forbidNul((media as Json).schema, components, seen);
    }
  }
  declareTags(doc);
  applyGlossary(doc);
  addExamples(doc);
  shareErrorResponses(doc);
  return doc;
}

import { randomUUID } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { AppError } from './errors.js';
import { MAX_URL_LENGTH } from './input-limits.js';
import { methodTable } from './method-not-allowed.js';
import { classifyOutage, OUTAGE_RETRY_AFTER_SECONDS } from './outage.js';

interface FieldErrors {
  fieldErrors: Record<string, string[]>;
  formErrors: string[];
}

function validationDetails(err: FastifyError): FieldErrors {
  // No prototype: a client-chosen key such as `toString` or `constructor` must not resolve to an inherited member.
  const out: FieldErrors = { fieldErrors: Object.create(null) as Record<string, string[]>, formErrors: [] };
  for (const issue of err.validation ?? []) {
    const params = (issue.params ?? {}) as { keys?: string[] };
    const path = (issue.instancePath ?? '').split('/').filter(Boolean);
    // An unknown key in a strict object: name the key itself, not its parent.
    const keys = params.keys?.length ? params.keys.map((k) => [...path, k].join('.')) : [path.join('.')];
    const message = issue.message ?? 'Invalid value';
    for (const key of keys) {
      if (!key) out.formErrors.push(message);
      else (out.fieldErrors[key] ??= []).push(message);
    }
  }
  return out;
}

/**
 * A protocol with its own error schema (SCIM, RFC 7644 3.12) answers under its URL prefix with the same catalogued
 * codes, the envelope's fields kept and its own added, in its own media type.
 */
export type ErrorFormat = (
  status: number,
  body: Record<string, unknown>,
) => { contentType: string; body: Record<string, unknown> };
const errorFormats = new Map<string, ErrorFormat>();
export function registerErrorFormat(prefix: string, format: ErrorFormat): void {
  errorFormats.set(prefix, format);
}
function answerBody(reply: FastifyReply, status: number, body: Record<string, unknown>) {
  reply.request.errorCode = typeof body.code === 'string' ? body.code : null;
  const url = reply.request.url;
  for (const [prefix, format] of errorFormats) {
    if (url === prefix || url.startsWith(`${prefix}/`) || url.startsWith(`${prefix}?`)) {
      const out = format(status, body);
      return reply.type(out.contentType).send(out.body);
    }
  }
  return reply.send(body);
}

// An error answer describes one request at one moment: never let a cache keep it.
const send = (reply: FastifyReply, err: AppError) =>
  answerBody(reply.code(err.status).header('cache-control', 'no-store'), err.status, err.toBody());

const unreadable = (message: string) =>
  new AppError('validation_failed', message, { details: { fieldErrors: {}, formErrors: [message] } });

/**
 * Fastify's `frameworkErrors` option: the router refuses a malformed percent-encoded URL (FST_ERR_BAD_URL) or an
 * over-long path parameter (FST_ERR_MAX_PARAM_LENGTH) before any hook runs, and would otherwise answer with its
 * own body (code FST_ERR_..., no request id). Pass this to the Fastify constructor.
 */
export function onFrameworkError(error: FastifyError, req: FastifyRequest, reply: FastifyReply) {
  reply.header('x-request-id', req.id).header('x-content-type-options', 'nosniff');
  if (req.url.length > MAX_URL_LENGTH) return send(reply, new AppError('uri_too_long'));
  if (error.code === 'FST_ERR_BAD_URL') return send(reply, unreadable('The URL is not valid.'));
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return send(reply, unreadable('A path parameter is too long.'));
  return internal(error, req, reply);
}

export function installErrorHandling(app: FastifyInstance): void {
  const methodsAt = methodTable(() => app.registeredRoutes ?? []);
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0]!;
    const allowed = methodsAt(path);
    if (allowed.length && !allowed.includes(req.method)) {
      reply.header('allow', allowed.join(', '));
      return send(
        reply,
        new AppError(
          'method_not_allowed',
          `${req.method} is not allowed on ${path}; it answers ${allowed.join(', ')}.`,
        ),
      );
    }
    return send(reply, new AppError('not_found', `No route ${req.method} ${path}.`));
  });

  app.setErrorHandler((error: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    // A bug in the mapping below must still end in the envelope, not in Fastify's fallback body.
    try {
      return answer(error, req, reply);
    } catch (failure) {
      return internal(failure, req, reply);
    }
  });
}

function answer(error: FastifyError, req: FastifyRequest, reply: FastifyReply) {
  if (typeof error !== 'object' || error === null) return internal(error, req, reply); // `throw 'text'`
  if (error instanceof AppError) {
    if (error.status === 429 && typeof error.extra.retryAfter === 'number')
      reply.header('Retry-After', String(error.extra.retryAfter));
    if (error.status === 503) reply.header('Retry-After', String(OUTAGE_RETRY_AFTER_SECONDS));
    return send(reply, error);
  }
  // The database or the shared store is unreachable: the one place connection errors become 503 (src/http/outage.ts).
  const outage = classifyOutage(error);
  if (outage) {
    req.server.outages?.report(outage);
    reply.header('Retry-After', String(OUTAGE_RETRY_AFTER_SECONDS));
    return send(
      reply,
      new AppError('service_unavailable', 'A service this request needs is unavailable; try again shortly.', {
        retryAfter: OUTAGE_RETRY_AFTER_SECONDS,
      }),
    );
  }
  if (hasZodFastifySchemaValidationErrors(error)) {
    return send(reply, new AppError('validation_failed', undefined, { details: validationDetails(error) }));
  }
  if (isResponseSerializationError(error)) return internal(error, req, reply);
  // Row-level security refused a write outside the caller's tenant (migration 0020): the repositories' filters let
  // it through, which is a defect to fix, logged as an error; the caller learns no more than for any id outside its
  // Scope.
  if ((error.cause as { code?: unknown } | undefined)?.code === '42501') {
    req.log.error({ err: forLog(error), errorId: randomUUID() }, 'row-level security refused a statement');
    return send(reply, new AppError('not_found'));
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return send(reply, unreadable('The request body is not valid JSON.'));
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return send(reply, new AppError('payload_too_large'));
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return send(reply, unreadable('The request body does not match its Content-Length.'));
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return send(reply, new AppError('unsupported_media_type'));
  }
  if (error.validation)
    return send(reply, new AppError('validation_failed', undefined, { details: validationDetails(error) }));
  // Other client errors raised by Fastify itself (a __proto__ key in a JSON body, ...).
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    if (error.statusCode === 413) return send(reply, new AppError('payload_too_large'));
    if (error.statusCode === 415) return send(reply, new AppError('unsupported_media_type'));
    return send(reply, unreadable('The request could not be read.'));
  }
  return internal(error, req, reply);
}

/**
 * drizzle's DrizzleQueryError carries the bound parameters (password and token hashes, sealed secrets, ...) in its
 * message and in `params`: log the query, the driver's reason and the stack, never the values.
 */
function forLog(error: unknown): unknown {
  if (!(error instanceof Error) || !('query' in error) || !('params' in error)) return error;
  const cause = error.cause as { message?: unknown; code?: unknown } | undefined;
  const reason = typeof cause?.message === 'string' ? `: ${cause.message}` : '';
  const safe = Object.assign(new Error(`Failed query${reason}`), {
    query: String(error.query),
    sqlState: typeof cause?.code === 'string' ? cause.code : undefined,
  });
  const frames = (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
  safe.stack = [`${error.name}: ${safe.message}`, ...frames].join('\n');
  return safe;
}

function internal(error: unknown, req: FastifyRequest, reply: FastifyReply) {
  const errorId = randomUUID();
  req.log.error({ err: forLog(error), errorId }, 'unexpected error');
  const body = new AppError('internal_error').toBody();
  return answerBody(reply.code(500).header('cache-control', 'no-store'), 500, { ...body, errorId });
}

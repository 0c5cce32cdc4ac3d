// Input guards run before validation on every route. PostgreSQL text cannot hold U+0000: refuse it in any body, query or path value before validation, with the
// field named, instead of letting the database turn it into a 500.
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { AppError } from './errors.js';

function findNul(value: unknown, path: string[], depth = 0): string | null {
  if (depth > 64) return null;
  if (typeof value === 'string') return value.includes('\u0000') ? path.join('.') || '(body)' : null;
  if (value === null || typeof value !== 'object' || typeof (value as { pipe?: unknown }).pipe === 'function')
    return null;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (k.includes('\u0000')) return [...path, k.replace(/\u0000/g, '\\0')].join('.');
    const hit = findNul(v, [...path, k], depth + 1);
    if (hit) return hit;
  }
  return null;
}

export function refuseNulBytes(req: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const field = findNul(req.params, []) ?? findNul(req.query, []) ?? findNul(req.body, []);
  done(
    field
      ? new AppError('validation_failed', 'Text may not contain NUL characters.', {
          details: { fieldErrors: { [field]: ['contains a NUL character'] }, formErrors: [] },
        })
      : undefined,
  );
}

/** Routes that take no body accept none, or an empty JSON object: anything else is an unknown field. */
export function refuseUnexpectedBody(req: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  done(unexpectedBody(req));
}

function unexpectedBody(req: FastifyRequest): AppError | undefined {
  if (req.is404 || req.routeOptions.schema?.body || req.body === undefined) return undefined;
  const b = req.body;
  if (b !== null && typeof b === 'object' && !Array.isArray(b) && Object.keys(b).length === 0) return undefined;
  const keys = b !== null && typeof b === 'object' && !Array.isArray(b) ? Object.keys(b) : [];
  return new AppError('validation_failed', 'This route takes no request body.', {
    details: {
      fieldErrors: Object.fromEntries(keys.map((k) => [k, ['Unrecognized key']])),
      formErrors: keys.length ? [] : ['This route takes no request body'],
    },
  });
}

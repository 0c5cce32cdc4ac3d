// Limits applied before any route code runs: JSON bodies are scanned for nesting depth before JSON.parse, over-long
// URLs answer 414, and errors Node's HTTP parser raises before Fastify sees a request (a header block over 16 KiB,
// bytes that are not HTTP, a request that never finishes) still answer with the API's error envelope.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type {
  FastifyBodyParser,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
} from 'fastify';
import { AppError, type ErrorCode } from './errors.js';

/** Deepest JSON nesting accepted in a request body; the deepest route schema needs 5. */
export const MAX_JSON_DEPTH = 32;
/** Longest request target (path and query) accepted; past Node's 16 KiB header limit the answer is 431. */
export const MAX_URL_LENGTH = 8 * 1024;

/**
 * True when brackets outside strings nest deeper than `max`. One pass over the text, no allocation: a body of
 * `[[[[...` is refused in microseconds per KiB instead of making JSON.parse recurse and allocate gigabytes.
 */
export function nestedDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** Replaces Fastify's JSON parser with one that checks the depth first, then parses as Fastify does. */
export function installJsonDepthLimit(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, depthLimitedJsonParser(app));
}

/** The JSON parser of every JSON media type (application/json, and application/scim+json under /scim/v2). */
export function depthLimitedJsonParser(app: FastifyInstance): FastifyBodyParser<string> {
  const parse = app.getDefaultJsonParser('error', 'error');
  return (req, body, done) => {
    // Many clients label every POST as JSON: a route that takes no body treats an empty one as absent.
    if (body === '' && !req.routeOptions.schema?.body) {
      done(null, undefined);
      return;
    }
    if (typeof body === 'string' && nestedDeeperThan(body, MAX_JSON_DEPTH)) {
      done(
        new AppError('json_too_deep', `The JSON body is nested more than ${MAX_JSON_DEPTH} levels deep.`),
        undefined,
      );
      return;
    }
    parse(req, body as string, done);
  };
}

export function refuseLongUrl(req: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  done(req.url.length > MAX_URL_LENGTH ? new AppError('uri_too_long') : undefined);
}

/**
 * Fastify's `clientErrorHandler`: Node's parser refused the bytes before any request exists, so no hook or error
 * handler runs. Answer with the envelope on the raw socket and close it, as Node itself would (without a body).
 */
export function onClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const code: ErrorCode =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? 'headers_too_large'
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'request_timeout'
        : 'malformed_request';
  const e = new AppError(code);
  const body = JSON.stringify(e.toBody());
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${e.status} ${STATUS_CODES[e.status]}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        `cache-control: no-store\r\nx-content-type-options: nosniff\r\nconnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

// The refresh cookie and its CSRF companion, and the checks on refresh.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import { AppError } from '../../http/errors.js';
import { randomToken, safeEqual } from '../../platform/crypto.js';

export const REFRESH_COOKIE = 'service_refresh_token';
export const CSRF_COOKIE = 'service_csrf_token';
export const CSRF_HEADER = 'x-service-csrf';
export const REFRESH_COOKIE_PATH = '/api/v1/auth';

export function setSessionCookies(
  reply: FastifyReply,
  config: Config,
  refreshToken: string,
  maxAgeSeconds: number,
): void {
  const base = {
    sameSite: 'lax' as const,
    secure: config.secureCookies,
    maxAge: Math.max(0, Math.floor(maxAgeSeconds)),
  };
  reply.setCookie(REFRESH_COOKIE, refreshToken, { ...base, httpOnly: true, path: REFRESH_COOKIE_PATH });
  reply.setCookie(CSRF_COOKIE, randomToken(24), { ...base, httpOnly: false, path: '/' });
}

export function clearSessionCookies(reply: FastifyReply, config: Config): void {
  const base = { sameSite: 'lax' as const, secure: config.secureCookies };
  reply.clearCookie(REFRESH_COOKIE, { ...base, httpOnly: true, path: REFRESH_COOKIE_PATH });
  reply.clearCookie(CSRF_COOKIE, { ...base, path: '/' });
}

/** Double-submit CSRF check plus an Origin check: a cookie-borne credential needs both. */
export function assertCsrf(req: FastifyRequest, config: Config): void {
  const header = req.headers[CSRF_HEADER];
  const cookie = req.cookies[CSRF_COOKIE];
  if (typeof header !== 'string' || !cookie || !safeEqual(header, cookie)) throw new AppError('csrf_failed');
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== config.publicUrl && origin !== config.appUrl) {
    throw new AppError('csrf_failed', 'The request comes from an origin that is not allowed.');
  }
}

import type { FastifyRequest } from 'fastify';
import type { AuditRequestMeta } from '../access/audit.js';

/** Client IP (X-Forwarded-For only with TRUST_PROXY) and user agent, for sessions and the audit trail. */
export function metaOf(req: FastifyRequest): AuditRequestMeta {
  const ua = req.headers['user-agent'];
  return { ip: req.ip ?? null, userAgent: typeof ua === 'string' ? ua.slice(0, 1024) : null };
}

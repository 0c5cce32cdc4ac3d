// /audit-logs: authenticate → (full org access) → permission → schema → handler.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../../deps.js';
import { principalOf, requireFullOrgAccess, requirePermission } from '../../http/guards.js';
import { metaOf } from '../../http/meta.js';
import { authErrors, errors, page } from '../../http/schemas.js';
import { PERMISSIONS as PERMS } from '../../access/catalog.js';
import { auditExportQuery, auditListQuery, auditRecordJson, exportResponse, verifyResponse } from './schemas.js';
import { listAuditLogs, startExport, verifyOwnChain } from './service.js';

export function auditRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const auth = deps.authenticate();
    const tags = ['audit'];

    r.get(
      '/audit-logs',
      {
        onRequest: [auth, requirePermission(PERMS.AUDIT_READ)],
        schema: {
          tags,
          summary: "Audit records in the caller's scope, newest first (keyset pages)",
          querystring: auditListQuery,
          response: { 200: page(auditRecordJson), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => listAuditLogs(deps, principalOf(req), req.query),
    );

    r.get(
      '/audit-logs/export',
      {
        onRequest: [auth, requirePermission(PERMS.AUDIT_EXPORT)],
        schema: {
          tags,
          summary: 'Every matching record as CSV or JSON Lines, streamed; records audit.export',
          querystring: auditExportQuery,
          response: { 200: exportResponse, ...errors(400, 404), ...authErrors },
        },
      },
      async (req, reply) => {
        const { stream, contentType, filename } = await startExport(deps, principalOf(req), req.query, metaOf(req));
        // A stream is not serialised: the typed reply only knows the documented shapes.
        return (reply as FastifyReply)
          .header('content-type', contentType)
          .header('content-disposition', `attachment; filename="${filename}"`)
          .send(stream);
      },
    );

    r.get(
      '/audit-logs/verify',
      {
        onRequest: [auth, requireFullOrgAccess(), requirePermission(PERMS.AUDIT_READ)],
        schema: {
          tags,
          summary: "Recompute the partner's hash chain",
          response: { 200: verifyResponse, ...authErrors },
        },
      },
      async (req) => verifyOwnChain(deps, principalOf(req)),
    );
  };
}

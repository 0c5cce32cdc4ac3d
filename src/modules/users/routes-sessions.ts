// Admins list and end a member's sessions: authenticate → full org access → users:write → schema → handler.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { principalOf, requireFullOrgAccess, requirePermission } from '../../http/guards.js';
import { metaOf } from '../../http/meta.js';
import { authErrors, errors, idParam } from '../../http/schemas.js';
import { sessionJson } from '../auth/index.js';
import { PERMISSIONS as PERMS } from '../../access/catalog.js';
import { orgQuery } from '../roles/index.js';
import { resolveTarget } from '../tenants/index.js';
import { endMemberSessionAsAdmin, memberSessions } from './sessions-admin.js';

const sessionParams = z.strictObject({ id: z.uuid(), sid: z.uuid() });

export function userSessionRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const auth = deps.authenticate();
    const full = requireFullOrgAccess();
    const tags = ['users'];
    const target = (req: Parameters<typeof principalOf>[0], orgId: string | undefined) =>
      resolveTarget(deps.db, principalOf(req), orgId);

    r.get(
      '/users/:id/sessions',
      {
        onRequest: [auth, full, requirePermission(PERMS.USERS_WRITE)],
        schema: {
          tags,
          operationId: 'listUserSessions',
          summary: "A member's live sessions in the current scope",
          description:
            'Sessions the member holds in the scope addressed (not those in other tenants); the member must be within your ceiling.',
          params: idParam,
          querystring: orgQuery,
          response: { 200: z.object({ data: z.array(sessionJson) }), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => memberSessions(deps, principalOf(req), await target(req, req.query.orgId), req.params.id),
    );

    r.delete(
      '/users/:id/sessions/:sid',
      {
        onRequest: [auth, full, requirePermission(PERMS.USERS_WRITE)],
        schema: {
          tags,
          operationId: 'endUserSession',
          summary: "End a member's session",
          description: 'Audited as auth.session.revoke; the session fails on its next request on every instance.',
          params: sessionParams,
          querystring: orgQuery,
          response: { 200: z.object({ success: z.literal(true) }), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => {
        await endMemberSessionAsAdmin(
          deps,
          principalOf(req),
          await target(req, req.query.orgId),
          req.params.id,
          req.params.sid,
          metaOf(req),
        );
        return { success: true as const };
      },
    );
  };
}

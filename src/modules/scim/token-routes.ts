// SCIM bearer tokens (users:read|write). Each route: authenticate → full org access → permission → step-up (issuing a
// token) → schema → handler. A token by id goes through the one by-id rule.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../../deps.js';
import { principalOf, requireFullOrgAccess, requirePermission } from '../../http/guards.js';
import { metaOf } from '../../http/meta.js';
import { authErrors, errors, page, idParam } from '../../http/schemas.js';
import { requireStepUp } from '../../http/step-up.js';
import { PERMISSIONS as PERMS } from '../../access/catalog.js';
import { resolveTarget } from '../tenants/index.js';
import { createdScimToken, createScimTokenBody, scimTokenJson, scimTokenListQuery } from './token-schemas.js';
import { createScimToken, listScimTokens, revokeScimToken } from './tokens-service.js';

const SCOPE =
  'A token provisions the partner’s own staff (no orgId) or one organisation, through the SCIM 2.0 API at /scim/v2 (tag scim). A partner caller reaches an organisation’s token by id without ?orgId=.';

export function scimTokenRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const auth = deps.authenticate();
    const full = requireFullOrgAccess();
    const read = requirePermission(PERMS.USERS_READ);
    const write = requirePermission(PERMS.USERS_WRITE);
    const stepUp = requireStepUp(deps);
    const tags = ['scim-tokens'];
    const p = principalOf;

    r.post(
      '/scim-tokens',
      {
        onRequest: [auth, full, write],
        preHandler: [stepUp],
        schema: {
          tags,
          operationId: 'createScimToken',
          summary: 'Issue a SCIM bearer token (shown once)',
          description: `${SCOPE} The answer carries \`token\` (\`ghscim_\` + 256-bit secret, greppable by secret scanners) once; only its SHA-256 is kept. The default role must be a role of the scope within what you hold (403 permission_ceiling) and never one with *:*; the roles the identity provider later gives through mapped groups stay under your permissions as they are then.`,
          body: createScimTokenBody,
          response: { 201: createdScimToken, ...errors(400, 404), ...authErrors },
        },
      },
      async (req, reply) => {
        const { orgId, ...input } = req.body;
        return reply
          .code(201)
          .send(await createScimToken(deps, p(req), await resolveTarget(deps.db, p(req), orgId), input, metaOf(req)));
      },
    );

    r.get(
      '/scim-tokens',
      {
        onRequest: [auth, full, read],
        schema: {
          tags,
          operationId: 'listScimTokens',
          summary: 'SCIM tokens of the current scope (or of an organisation with ?orgId=)',
          description: `${SCOPE} Newest first, keyset paging; never the token itself.`,
          querystring: scimTokenListQuery,
          response: { 200: page(scimTokenJson), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => listScimTokens(deps, await resolveTarget(deps.db, p(req), req.query.orgId), req.query),
    );

    r.delete(
      '/scim-tokens/:id',
      {
        onRequest: [auth, full, write],
        schema: {
          tags,
          operationId: 'revokeScimToken',
          summary: 'Revoke a SCIM token',
          description:
            'The token is refused from its next request, on every instance. Revoking a revoked token answers it unchanged. Provisioned users and groups stay.',
          params: idParam,
          response: { 200: scimTokenJson, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => revokeScimToken(deps, p(req), req.params.id, metaOf(req)),
    );
  };
}

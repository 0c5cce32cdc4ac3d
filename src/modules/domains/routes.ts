// Domains (settings:read|write): claims and their DNS proof. Each route: authenticate → permission → step-up → schema.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { PERMISSIONS as PERMS } from '../../access/catalog.js';
import type { Deps } from '../../deps.js';
import { principalOf, requirePermission, scopeIn } from '../../http/guards.js';
import { metaOf } from '../../http/meta.js';
import { authErrors, errors, page, idParam } from '../../http/schemas.js';
import { requireStepUp } from '../../http/step-up.js';
import { createDomainBody, domainJson, domainListQuery } from './schemas.js';
import { createDomain, deleteDomain, listDomains, verifyDomain } from './service.js';

const tags = ['domains'];
const OWNER =
  "A partner-level domain (no orgId) is created, verified and deleted only by partner users with orgAccess all; an organisation's, by those who reach it.";

export function domainRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const auth = deps.authenticate();
    const stepUp = requireStepUp(deps);
    const p = principalOf;

    r.get(
      '/domains',
      {
        onRequest: [auth, requirePermission(PERMS.SETTINGS_READ)],
        schema: {
          tags,
          operationId: 'listDomains',
          summary: "Domain claims of the caller's tenant, with their TXT records",
          querystring: domainListQuery,
          response: { 200: page(domainJson), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => listDomains(deps, p(req), scopeIn(req), req.query),
    );
    r.post(
      '/domains',
      {
        onRequest: [auth, requirePermission(PERMS.SETTINGS_WRITE)],
        schema: {
          tags,
          operationId: 'createDomain',
          summary: 'Claim a domain: answers the TXT record to publish at _gatehouse-challenge.<domain>',
          description: `${OWNER} A domain another partner has proven answers 409 domain_taken.`,
          body: createDomainBody,
          response: { 201: domainJson, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req, reply) => reply.code(201).send(await createDomain(deps, p(req), req.body, metaOf(req))),
    );
    r.post(
      '/domains/:id/verify',
      {
        onRequest: [auth, requirePermission(PERMS.SETTINGS_WRITE)],
        preHandler: [stepUp],
        schema: {
          tags,
          operationId: 'verifyDomain',
          summary: 'Look the TXT record up now; verified when it is there',
          description: `${OWNER} 409 domain_not_verified while the record is missing; 409 domain_taken when another tenant proved the domain first.`,
          params: idParam,
          response: { 200: domainJson, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req) => verifyDomain(deps, p(req), req.params.id, metaOf(req)),
    );
    r.delete(
      '/domains/:id',
      {
        onRequest: [auth, requirePermission(PERMS.SETTINGS_WRITE)],
        preHandler: [stepUp],
        schema: {
          tags,
          operationId: 'deleteDomain',
          summary: 'Delete a claim; a proven domain stops routing sign-in to this tenant at once',
          description: OWNER,
          params: idParam,
          response: { 200: z.object({ success: z.literal(true) }), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => {
        await deleteDomain(deps, p(req), req.params.id, metaOf(req));
        return { success: true as const };
      },
    );
  };
}

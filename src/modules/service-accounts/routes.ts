// Service accounts and their API keys (api_keys:read|write). Each route: authenticate → full org access → permission
// → step-up (issuing a key; changing the role) → schema → handler. A record by id goes through the one by-id rule.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { principalOf, requireFullOrgAccess, requirePermission } from '../../http/guards.js';
import { metaOf } from '../../http/meta.js';
import { authErrors, errors, page, idParam } from '../../http/schemas.js';
import { requireStepUp } from '../../http/step-up.js';
import { PERMISSIONS as PERMS } from '../../access/catalog.js';
import { orgQuery } from '../roles/index.js';
import { resolveTarget } from '../tenants/index.js';
import { createKey, listKeys, revokeKey } from './keys-service.js';
import {
  apiKeyJson,
  createApiKeyBody,
  createdApiKey,
  createServiceAccountBody,
  keyListQuery,
  keyParams,
  serviceAccountJson,
  serviceAccountListQuery,
  updateServiceAccountBody,
} from './schemas.js';
import {
  accountJson,
  changesRole,
  createServiceAccount,
  deleteServiceAccount,
  findServiceAccount,
  listServiceAccounts,
  updateServiceAccount,
} from './service.js';

const SCOPE =
  'A service account belongs to the partner (no orgId) or to one of its organisations, and acts only there with its role. A partner caller reaches an organisation’s account by id without ?orgId=.';
const CEILING =
  'The role must be one of the scope’s roles, within what you hold (403 permission_ceiling), and never one with *:* (400).';

export function serviceAccountRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const auth = deps.authenticate();
    const full = requireFullOrgAccess();
    const read = requirePermission(PERMS.API_KEYS_READ);
    const write = requirePermission(PERMS.API_KEYS_WRITE);
    const stepUp = requireStepUp(deps);
    const stepUpOnRole = requireStepUp(deps, { when: (req) => changesRole(req.body) });
    const tags = ['service-accounts'];
    const p = principalOf;

    r.post(
      '/service-accounts',
      {
        onRequest: [auth, full, write],
        schema: {
          tags,
          operationId: 'createServiceAccount',
          summary: 'Create a service account holding a role',
          description: `${SCOPE} ${CEILING} It has no password and never signs in interactively; issue it a key next.`,
          body: createServiceAccountBody,
          response: { 201: serviceAccountJson, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req, reply) => {
        const { orgId, ...input } = req.body;
        return reply
          .code(201)
          .send(
            await createServiceAccount(deps, p(req), await resolveTarget(deps.db, p(req), orgId), input, metaOf(req)),
          );
      },
    );

    r.get(
      '/service-accounts',
      {
        onRequest: [auth, full, read],
        schema: {
          tags,
          operationId: 'listServiceAccounts',
          summary: 'Service accounts of the current scope (or of an organisation with ?orgId=)',
          description: `${SCOPE} Newest first, keyset paging.`,
          querystring: serviceAccountListQuery,
          response: { 200: page(serviceAccountJson), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => listServiceAccounts(deps, await resolveTarget(deps.db, p(req), req.query.orgId), req.query),
    );

    r.get(
      '/service-accounts/:id',
      {
        onRequest: [auth, full, read],
        schema: {
          tags,
          operationId: 'getServiceAccount',
          summary: 'A service account',
          description: SCOPE,
          params: idParam,
          querystring: orgQuery,
          response: { 200: serviceAccountJson, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => accountJson(deps.db, await findServiceAccount(deps.db, p(req), req.params.id), deps.clock.now()),
    );

    r.patch(
      '/service-accounts/:id',
      {
        onRequest: [auth, full, write],
        preHandler: [stepUpOnRole],
        schema: {
          tags,
          operationId: 'updateServiceAccount',
          summary: 'Change name, role, description or disabled',
          description: `${CEILING} Disabling refuses every key of the account on its next request; a new role applies on the next request. Changing the role needs a recent proof of presence.`,
          params: idParam,
          querystring: orgQuery,
          body: updateServiceAccountBody,
          response: { 200: serviceAccountJson, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req) => updateServiceAccount(deps, p(req), req.params.id, req.body, metaOf(req)),
    );

    r.delete(
      '/service-accounts/:id',
      {
        onRequest: [auth, full, write],
        schema: {
          tags,
          operationId: 'deleteServiceAccount',
          summary: 'Delete a service account and its keys',
          description: 'Every key of the account is refused from its next request, on every instance.',
          params: idParam,
          querystring: orgQuery,
          response: { 200: z.object({ success: z.literal(true) }), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => {
        await deleteServiceAccount(deps, p(req), req.params.id, metaOf(req));
        return { success: true as const };
      },
    );

    r.post(
      '/service-accounts/:id/keys',
      {
        onRequest: [auth, full, write],
        preHandler: [stepUp],
        schema: {
          tags,
          operationId: 'createApiKey',
          summary: 'Issue an API key (shown once)',
          description:
            'The answer carries `key` (`gh_<environment>_<id prefix>_<secret>`, 256-bit secret) once; only its SHA-256 is kept. Optional expiry and CIDR allow-list (IPv4 and IPv6). At most two keys are active at once (409 key_limit_reached), so a rotation overlaps: issue, deploy, revoke the old one. Use it as `Authorization: Bearer <key>`, or as client_secret at POST /oauth/token.',
          params: idParam,
          querystring: orgQuery,
          body: createApiKeyBody,
          response: { 201: createdApiKey, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req, reply) => reply.code(201).send(await createKey(deps, p(req), req.params.id, req.body, metaOf(req))),
    );

    r.get(
      '/service-accounts/:id/keys',
      {
        onRequest: [auth, full, read],
        schema: {
          tags,
          operationId: 'listApiKeys',
          summary: "A service account's keys (never the secret)",
          description:
            'Prefix, name, created, expiry, allow-list, last used at and from which address (written at most once a minute), revoked.',
          params: idParam,
          querystring: keyListQuery,
          response: { 200: page(apiKeyJson), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => listKeys(deps, p(req), req.params.id, req.query),
    );

    r.delete(
      '/service-accounts/:id/keys/:keyId',
      {
        onRequest: [auth, full, write],
        schema: {
          tags,
          operationId: 'revokeApiKey',
          summary: 'Revoke an API key',
          description:
            'The key, and access tokens obtained with it, are refused from the next request on every instance. Revoking a revoked key answers it unchanged.',
          params: keyParams,
          querystring: orgQuery,
          response: { 200: apiKeyJson, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => revokeKey(deps, p(req), req.params.id, req.params.keyId, metaOf(req)),
    );
  };
}

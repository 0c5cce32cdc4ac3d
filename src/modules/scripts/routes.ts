// Scripts (scripts:read|write|delete). Each route: authenticate → permission → schema → handler.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { principalOf, requirePermission } from '../../http/guards.js';
import { metaOf } from '../../http/meta.js';
import { authErrors, errors, page, idParam } from '../../http/schemas.js';
import { PERMISSIONS as PERMS } from '../../access/catalog.js';
import {
  createScriptBody,
  SCRIPT_BODY_LIMIT,
  scriptJson,
  scriptListQuery,
  scriptSummaryJson,
  updateScriptBody,
} from './schemas.js';
import { createScript, deleteScript, findScript, listScripts, scriptToJson, updateScript } from './service.js';

const ok = z.object({ success: z.literal(true) });
const OWNERSHIP =
  'Partner scripts (availability partner) are created, changed and deleted only by partner users with orgAccess all (403 full_org_access_required).';

export function scriptRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const auth = deps.authenticate();
    const can = requirePermission;
    const p = principalOf;

    r.get(
      '/scripts',
      {
        onRequest: [auth, can(PERMS.SCRIPTS_READ)],
        schema: {
          tags: ['scripts'],
          summary: "Scripts in force: the partner's library, plus the organisation's own when one is named",
          description: 'Rows carry source (partner | organization) and leave out content (GET /scripts/:id has it).',
          querystring: scriptListQuery,
          response: { 200: page(scriptSummaryJson), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => listScripts(deps.db, p(req), req.query),
    );
    r.post(
      '/scripts',
      {
        onRequest: [auth, can(PERMS.SCRIPTS_WRITE)],
        bodyLimit: SCRIPT_BODY_LIMIT,
        schema: {
          tags: ['scripts'],
          summary: 'Create a script (content at most 1 MiB)',
          description: OWNERSHIP,
          body: createScriptBody,
          response: { 201: scriptJson, ...errors(400, 404, 413), ...authErrors },
        },
      },
      async (req, reply) => reply.code(201).send(await createScript(deps, p(req), req.body, metaOf(req))),
    );
    r.get(
      '/scripts/:id',
      {
        onRequest: [auth, can(PERMS.SCRIPTS_READ)],
        schema: {
          tags: ['scripts'],
          summary: 'A script with its content',
          params: idParam,
          response: { 200: scriptJson, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => scriptToJson(await findScript(deps.db, p(req), req.params.id)),
    );
    r.patch(
      '/scripts/:id',
      {
        onRequest: [auth, can(PERMS.SCRIPTS_WRITE)],
        bodyLimit: SCRIPT_BODY_LIMIT,
        schema: {
          tags: ['scripts'],
          summary: 'Change a script (availability and orgId are fixed)',
          description: OWNERSHIP,
          params: idParam,
          body: updateScriptBody,
          response: { 200: scriptJson, ...errors(400, 404, 413), ...authErrors },
        },
      },
      async (req) => updateScript(deps, p(req), req.params.id, req.body, metaOf(req)),
    );
    r.delete(
      '/scripts/:id',
      {
        onRequest: [auth, can(PERMS.SCRIPTS_DELETE)],
        schema: {
          tags: ['scripts'],
          summary: 'Delete a script',
          description: OWNERSHIP,
          params: idParam,
          response: { 200: ok, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => {
        await deleteScript(deps, p(req), req.params.id, metaOf(req));
        return { success: true as const };
      },
    );
  };
}

// Partner-wide configuration: policies, alert templates, patch policies, maintenance windows.
// Each route: authenticate → permission (automations:*) → schema → handler (ownership rules in the service).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { principalOf, requirePermission } from '../../http/guards.js';
import { metaOf } from '../../http/meta.js';
import { authErrors, errors, page, idParam } from '../../http/schemas.js';
import { PERMISSIONS as PERMS } from '../../access/catalog.js';
import { configItemJson, configItemListQuery, createConfigItemBody, updateConfigItemBody } from './schemas.js';
import {
  configItemToJson,
  createConfigItem,
  deleteConfigItem,
  findConfigItem,
  listConfigItems,
  updateConfigItem,
} from './service.js';

const ok = z.object({ success: z.literal(true) });
const OWNERSHIP =
  'Partner-owned items (no orgId) are in force in every organisation of the partner and are created, changed and deleted only by partner users with orgAccess all (403 full_org_access_required).';

export function configItemRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const auth = deps.authenticate();
    const can = requirePermission;
    const p = principalOf;

    r.get(
      '/config-items',
      {
        onRequest: [auth, can(PERMS.AUTOMATIONS_READ)],
        schema: {
          tags: ['configuration'],
          summary: "Configuration items in force: partner-owned, plus the organisation's own when one is named",
          description: 'Each item carries source: partner | organization.',
          querystring: configItemListQuery,
          response: { 200: page(configItemJson), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => listConfigItems(deps.db, p(req), req.query),
    );
    r.post(
      '/config-items',
      {
        onRequest: [auth, can(PERMS.AUTOMATIONS_WRITE)],
        schema: {
          tags: ['configuration'],
          summary: 'Create a policy, alert template, patch policy or maintenance window',
          description: `body is validated per kind (see the *Body schemas). ${OWNERSHIP}`,
          body: createConfigItemBody,
          response: { 201: configItemJson, ...errors(400, 404), ...authErrors },
        },
      },
      async (req, reply) => reply.code(201).send(await createConfigItem(deps, p(req), req.body, metaOf(req))),
    );
    r.get(
      '/config-items/:id',
      {
        onRequest: [auth, can(PERMS.AUTOMATIONS_READ)],
        schema: {
          tags: ['configuration'],
          summary: 'A configuration item',
          params: idParam,
          response: { 200: configItemJson, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => configItemToJson(await findConfigItem(deps.db, p(req), req.params.id)),
    );
    r.patch(
      '/config-items/:id',
      {
        onRequest: [auth, can(PERMS.AUTOMATIONS_WRITE)],
        schema: {
          tags: ['configuration'],
          summary: "Change name, description or body (which must fit the item's kind)",
          description: OWNERSHIP,
          params: idParam,
          body: updateConfigItemBody,
          response: { 200: configItemJson, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => updateConfigItem(deps, p(req), req.params.id, req.body, metaOf(req)),
    );
    r.delete(
      '/config-items/:id',
      {
        onRequest: [auth, can(PERMS.AUTOMATIONS_DELETE)],
        schema: {
          tags: ['configuration'],
          summary: 'Delete a configuration item',
          description: OWNERSHIP,
          params: idParam,
          response: { 200: ok, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => {
        await deleteConfigItem(deps, p(req), req.params.id, metaOf(req));
        return { success: true as const };
      },
    );
  };
}

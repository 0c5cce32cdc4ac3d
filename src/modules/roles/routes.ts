// /roles and /permissions/catalog: authenticate → full org access → permission → schema → handler.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { principalOf, requireFullOrgAccess, requirePermission } from '../../http/guards.js';
import { requireStepUp } from '../../http/step-up.js';
import { metaOf } from '../../http/meta.js';
import { authErrors, errors, page, idParam } from '../../http/schemas.js';
import { resolveTarget } from '../tenants/index.js';
import { ACTION_ALIASES, ACTIONS, CATALOG_ENTRIES, PERMISSIONS as PERMS, RESOURCES } from '../../access/catalog.js';
import {
  availablePermissions,
  cloneRoleBody,
  createRoleBody,
  effectivePermissions,
  orgQuery,
  roleDetail,
  roleJson,
  roleListQuery,
  updateRoleBody,
} from './schemas.js';
import {
  cloneRole,
  createRole,
  deleteRole,
  getRoleDetail,
  listRoles,
  roleEffectivePermissions,
  updateRole,
} from './service.js';

const catalogResponse = z.object({
  permissions: z.array(
    z.object({
      resource: z.string(),
      action: z.string(),
      description: z.string(),
      destructive: z.boolean().describe('A freeze refuses it; the blast-radius budgets count its uses'),
    }),
  ),
  aliases: z.object({ view: z.literal('read'), create: z.literal('write'), update: z.literal('write') }),
});

export function roleRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const auth = deps.authenticate();
    const full = requireFullOrgAccess();
    const stepUp = requireStepUp(deps);
    const tags = ['roles'];
    const target = (req: Parameters<typeof principalOf>[0], orgId: string | undefined) =>
      resolveTarget(deps.db, principalOf(req), orgId);

    r.get(
      '/permissions/catalog',
      {
        onRequest: [auth, requirePermission(PERMS.USERS_READ)],
        schema: {
          tags,
          summary: 'Assignable permissions (for a role builder)',
          response: { 200: catalogResponse, ...authErrors },
        },
      },
      async () => ({ permissions: CATALOG_ENTRIES, aliases: ACTION_ALIASES }),
    );

    r.get(
      '/roles',
      {
        onRequest: [auth, full, requirePermission(PERMS.USERS_READ)],
        schema: {
          tags,
          summary: 'System and custom roles of the scope, with user counts',
          querystring: roleListQuery,
          response: { 200: page(roleJson), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => listRoles(deps.db, await target(req, req.query.orgId), req.query),
    );

    r.post(
      '/roles',
      {
        onRequest: [auth, full, requirePermission(PERMS.USERS_WRITE)],
        preHandler: [stepUp],
        schema: {
          tags,
          summary: 'Create a custom role in the scope',
          body: createRoleBody,
          response: { 201: roleDetail, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req, reply) => {
        const { orgId, ...body } = req.body;
        return reply
          .code(201)
          .send(await createRole(deps, principalOf(req), await target(req, orgId), body, metaOf(req)));
      },
    );

    r.get(
      '/roles/permissions/available',
      {
        onRequest: [auth, full, requirePermission(PERMS.USERS_READ)],
        schema: {
          tags,
          summary: 'Resources and actions a role may carry',
          response: { 200: availablePermissions, ...authErrors },
        },
      },
      async () => ({
        resources: [...RESOURCES],
        actions: [...ACTIONS],
        aliases: ACTION_ALIASES,
        permissions: CATALOG_ENTRIES,
      }),
    );

    r.get(
      '/roles/:id',
      {
        onRequest: [auth, full, requirePermission(PERMS.USERS_READ)],
        schema: {
          tags,
          summary: 'A role with its direct permissions',
          params: idParam,
          querystring: orgQuery,
          response: { 200: roleDetail, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => getRoleDetail(deps.db, await target(req, req.query.orgId), req.params.id),
    );

    r.patch(
      '/roles/:id',
      {
        onRequest: [auth, full, requirePermission(PERMS.USERS_WRITE)],
        preHandler: [stepUp],
        schema: {
          tags,
          summary: 'Change a custom role',
          params: idParam,
          querystring: orgQuery,
          body: updateRoleBody,
          response: { 200: roleDetail, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req) =>
        updateRole(deps, principalOf(req), await target(req, req.query.orgId), req.params.id, req.body, metaOf(req)),
    );

    r.delete(
      '/roles/:id',
      {
        onRequest: [auth, full, requirePermission(PERMS.USERS_DELETE)],
        preHandler: [stepUp],
        schema: {
          tags,
          summary: 'Delete a custom role with no users and no child roles',
          params: idParam,
          querystring: orgQuery,
          response: { 200: z.object({ success: z.literal(true) }), ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req) => {
        await deleteRole(deps, principalOf(req), await target(req, req.query.orgId), req.params.id, metaOf(req));
        return { success: true as const };
      },
    );

    r.post(
      '/roles/:id/clone',
      {
        onRequest: [auth, full, requirePermission(PERMS.USERS_WRITE)],
        preHandler: [stepUp],
        schema: {
          tags,
          summary: 'Copy a role (system roles too) into a new custom role',
          params: idParam,
          body: cloneRoleBody,
          response: { 201: roleDetail, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req, reply) =>
        reply
          .code(201)
          .send(
            await cloneRole(
              deps,
              principalOf(req),
              await target(req, req.body.orgId),
              req.params.id,
              req.body.name,
              metaOf(req),
            ),
          ),
    );

    r.get(
      '/roles/:id/effective-permissions',
      {
        onRequest: [auth, full, requirePermission(PERMS.USERS_READ)],
        schema: {
          tags,
          summary: 'Own and inherited permissions, each with its source role',
          params: idParam,
          querystring: orgQuery,
          response: { 200: effectivePermissions, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => roleEffectivePermissions(deps.db, await target(req, req.query.orgId), req.params.id),
    );
  };
}

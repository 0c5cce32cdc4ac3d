// Management surface of /users: each route reads authenticate → full org access → permission → schema → handler.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { principalOf, requireFullOrgAccess, requireMfa, requirePermission } from '../../http/guards.js';
import { metaOf } from '../../http/meta.js';
import { isAdminRole, requireStepUp } from '../../http/step-up.js';
import { authErrors, errors, page, idParam } from '../../http/schemas.js';
import { PERMISSIONS as PERMS } from '../../access/catalog.js';
import { listRoles, orgQuery, roleJson, roleListQuery } from '../roles/index.js';
import { resolveTarget } from '../tenants/index.js';
import { resetUserMfa } from './mfa-reset.js';
import {
  assignRoleBody,
  inviteBody,
  inviteResponse,
  resendBody,
  updateUserBody,
  userListQuery,
  userRow,
} from './schemas.js';
import { inviteUser, resendInvite } from './invite-service.js';
import { assignRole, listRoleHolders, listUsers, memberOrThrow, removeUser, updateUser } from './service.js';

export function userAdminRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const auth = deps.authenticate();
    const full = requireFullOrgAccess();
    const stepUp = requireStepUp(deps);
    const stepUpOnEmail = requireStepUp(deps, { when: (req) => (req.body as { email?: string }).email !== undefined });
    const stepUpForAdminRole = requireStepUp(deps, {
      when: (req) => isAdminRole(deps.db, (req.body as { roleId: string }).roleId),
    });
    const tags = ['users'];
    const target = (req: Parameters<typeof principalOf>[0], orgId: string | undefined) =>
      resolveTarget(deps.db, principalOf(req), orgId);

    r.get(
      '/users',
      {
        onRequest: [auth, full, requirePermission(PERMS.USERS_READ)],
        schema: {
          tags,
          summary: 'Members of the current scope (or of an organisation with ?orgId=)',
          querystring: userListQuery,
          response: { 200: page(userRow), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => listUsers(deps, await target(req, req.query.orgId), req.query),
    );

    r.get(
      '/users/roles',
      {
        onRequest: [auth, full, requirePermission(PERMS.USERS_READ)],
        schema: {
          tags,
          summary: 'Roles available in the current scope',
          querystring: roleListQuery,
          response: { 200: page(roleJson), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => listRoles(deps.db, await target(req, req.query.orgId), req.query),
    );

    // The members holding a role: a list of users, so it lives here (the roles module does not reach into users).
    r.get(
      '/roles/:id/users',
      {
        onRequest: [auth, full, requirePermission(PERMS.USERS_READ)],
        schema: {
          tags: ['roles'],
          summary: 'Members of the scope holding the role',
          params: idParam,
          querystring: userListQuery,
          response: { 200: page(userRow), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => listRoleHolders(deps, await target(req, req.query.orgId), req.params.id, req.query),
    );

    r.post(
      '/users/invite',
      {
        onRequest: [auth, full, requirePermission(PERMS.USERS_INVITE)],
        preHandler: [stepUpForAdminRole],
        schema: {
          tags,
          summary: 'Invite a user into the current scope',
          body: inviteBody,
          response: { 201: inviteResponse, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req, reply) => {
        const { orgId, ...input } = req.body;
        return reply
          .code(201)
          .send(await inviteUser(deps, principalOf(req), await target(req, orgId), input, metaOf(req)));
      },
    );

    r.post(
      '/users/resend-invite',
      {
        onRequest: [auth, full, requirePermission(PERMS.USERS_INVITE)],
        schema: {
          tags,
          summary: 'Send the invitation again (the earlier link stops working)',
          body: resendBody,
          response: {
            200: z.object({ success: z.literal(true), inviteEmailSent: z.boolean() }),
            ...errors(400, 404, 409),
            ...authErrors,
          },
        },
      },
      async (req) =>
        resendInvite(deps, principalOf(req), await target(req, req.body.orgId), req.body.userId, metaOf(req)),
    );

    r.get(
      '/users/:id',
      {
        onRequest: [auth, full, requirePermission(PERMS.USERS_READ)],
        schema: {
          tags,
          summary: 'A member of the current scope',
          params: idParam,
          querystring: orgQuery,
          response: { 200: userRow, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => memberOrThrow(deps, await target(req, req.query.orgId), req.params.id),
    );

    r.patch(
      '/users/:id',
      {
        onRequest: [auth, full, requirePermission(PERMS.USERS_WRITE)],
        preHandler: [stepUpOnEmail],
        schema: {
          tags,
          summary: 'Change name, status (disabled ends every session) or e-mail (once the new address is proven)',
          params: idParam,
          querystring: orgQuery,
          body: updateUserBody,
          response: { 200: userRow, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req) =>
        updateUser(deps, principalOf(req), await target(req, req.query.orgId), req.params.id, req.body, metaOf(req)),
    );

    r.delete(
      '/users/:id',
      {
        onRequest: [auth, full, requirePermission(PERMS.USERS_DELETE)],
        schema: {
          tags,
          summary: 'Remove the user from the scope (the account survives)',
          params: idParam,
          querystring: orgQuery,
          response: { 200: z.object({ success: z.literal(true) }), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => {
        await removeUser(deps, principalOf(req), await target(req, req.query.orgId), req.params.id, metaOf(req));
        return { success: true as const };
      },
    );

    r.post(
      '/users/:id/mfa/reset',
      {
        onRequest: [auth, full, requirePermission(PERMS.USERS_WRITE), requireMfa()],
        preHandler: [stepUp],
        schema: {
          tags,
          summary: "Clear another user's MFA (acting session must have passed MFA)",
          params: idParam,
          querystring: orgQuery,
          response: { 200: z.object({ success: z.literal(true) }), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) =>
        resetUserMfa(deps, principalOf(req), await target(req, req.query.orgId), req.params.id, metaOf(req)),
    );

    r.post(
      '/users/:id/role',
      {
        onRequest: [auth, full, requirePermission(PERMS.USERS_WRITE)],
        preHandler: [stepUp],
        schema: {
          tags,
          summary: 'Assign another role',
          params: idParam,
          querystring: orgQuery,
          body: assignRoleBody,
          response: { 200: userRow, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) =>
        assignRole(
          deps,
          principalOf(req),
          await target(req, req.query.orgId),
          req.params.id,
          req.body.roleId,
          metaOf(req),
        ),
    );
  };
}

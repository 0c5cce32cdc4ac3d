// Partner-side access groups. Each route: authenticate → full org access (partner side) → permission → schema →
// handler; that only the partner's side acts is the service's rule.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { PERMISSIONS as PERMS } from '../../access/catalog.js';
import type { Deps } from '../../deps.js';
import { principalOf, requireFullOrgAccess, requirePermission } from '../../http/guards.js';
import { metaOf } from '../../http/meta.js';
import { authErrors, errors, idParam, page } from '../../http/schemas.js';
import {
  attachBody,
  attachmentJson,
  attachParams,
  createGroupBody,
  groupJson,
  groupListQuery,
  memberBody,
  memberJson,
  memberListQuery,
  memberParams,
  patchGroupBody,
  scimGroupListJson,
} from './schemas.js';
import {
  addMember,
  attach,
  createGroup,
  detach,
  getGroup,
  listGroups,
  listMembers,
  listScimGroups,
  patchGroup,
  removeGroup,
  removeMember,
} from './service.js';

const tags = ['access-groups'];
const done = z.object({ success: z.literal(true) });
const EFFECT =
  "While the partner's settings.requireRelationships is on, a member of a group attached to an active relationship reaches the relationship's organisation through it (its role's permissions within the relationship's roles, within its reach), whatever the member's standing orgAccess, except an organisation its all_except excludes. A relationship once given a group is used only by the members of its groups; one never given a group serves every member the partner lets in. Changes bite on the member's next request, on every instance.";

export function accessGroupRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const auth = deps.authenticate();
    const full = requireFullOrgAccess();
    const read = requirePermission(PERMS.USERS_READ);
    const write = requirePermission(PERMS.USERS_WRITE);
    const p = principalOf;

    r.post(
      '/access-groups',
      {
        onRequest: [auth, full, write],
        schema: {
          tags,
          operationId: 'createAccessGroup',
          summary: "Create an access group of the partner's staff",
          description: `scimGroupId maps a partner-level SCIM group: its active members are members too (400 with the field named for any other id). A name another group of the partner holds is 409 name_taken. Audited access_group.create. ${EFFECT}`,
          body: createGroupBody,
          response: { 201: groupJson, ...errors(400, 409), ...authErrors },
        },
      },
      async (req, reply) => reply.code(201).send(await createGroup(deps, p(req), req.body, metaOf(req))),
    );
    r.get(
      '/access-groups',
      {
        onRequest: [auth, full, read],
        schema: {
          tags,
          operationId: 'listAccessGroups',
          summary: "The partner's access groups, with the relationships each is attached to",
          description:
            'By name, keyset paging; search is a prefix of the name; relationshipId: the groups attached to one relationship.',
          querystring: groupListQuery,
          response: { 200: page(groupJson), ...errors(400), ...authErrors },
        },
      },
      async (req) => listGroups(deps, p(req), req.query),
    );
    r.get(
      '/access-groups/scim-groups',
      {
        onRequest: [auth, full, read],
        schema: {
          tags,
          operationId: 'listAccessGroupScimGroups',
          summary: 'The partner-level SCIM groups a group may be mapped to (scimGroupId)',
          description:
            "The groups the partner's identity provider pushed at partner level, by name; none without SCIM.",
          response: { 200: scimGroupListJson, ...authErrors },
        },
      },
      async (req) => listScimGroups(deps, p(req)),
    );
    r.get(
      '/access-groups/:id',
      {
        onRequest: [auth, full, read],
        schema: {
          tags,
          operationId: 'getAccessGroup',
          summary: 'One access group',
          params: idParam,
          response: { 200: groupJson, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => getGroup(deps, p(req), req.params.id),
    );
    r.patch(
      '/access-groups/:id',
      {
        onRequest: [auth, full, write],
        schema: {
          tags,
          operationId: 'updateAccessGroup',
          summary: 'Rename an access group, or map it to a SCIM group (null: none)',
          description: 'Audited access_group.update with what it was and what it is.',
          params: idParam,
          body: patchGroupBody,
          response: { 200: groupJson, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req) => patchGroup(deps, p(req), req.params.id, req.body, metaOf(req)),
    );
    r.delete(
      '/access-groups/:id',
      {
        onRequest: [auth, full, write],
        schema: {
          tags,
          operationId: 'deleteAccessGroup',
          summary: 'Delete an access group',
          description:
            'Detaches it from its relationships: its members lose what it gave them on their next request; a relationship left without groups serves nobody until another is attached. Audited access_group.delete.',
          params: idParam,
          response: { 200: done, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => {
        await removeGroup(deps, p(req), req.params.id, metaOf(req));
        return { success: true as const };
      },
    );
    r.get(
      '/access-groups/:id/members',
      {
        onRequest: [auth, full, read],
        schema: {
          tags,
          operationId: 'listAccessGroupMembers',
          summary: 'Members of an access group: added by hand, and those of its mapped SCIM group',
          description: 'By user id, keyset paging. A person in both is listed once, as added by hand.',
          params: idParam,
          querystring: memberListQuery,
          response: { 200: page(memberJson), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => listMembers(deps, p(req), req.params.id, req.query),
    );
    r.post(
      '/access-groups/:id/members',
      {
        onRequest: [auth, full, write],
        schema: {
          tags,
          operationId: 'addAccessGroupMember',
          summary: 'Add a member of the partner’s staff to the group: the grant',
          description: `userId must be of the partner's staff (400 with the field named otherwise); already a member: 409 conflict. Audited access_group.member.add. ${EFFECT}`,
          params: idParam,
          body: memberBody,
          response: { 201: memberJson, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req, reply) =>
        reply.code(201).send(await addMember(deps, p(req), req.params.id, req.body.userId, metaOf(req))),
    );
    r.delete(
      '/access-groups/:id/members/:userId',
      {
        onRequest: [auth, full, write],
        schema: {
          tags,
          operationId: 'removeAccessGroupMember',
          summary: 'Remove a member added by hand: the revocation, on the next request',
          description:
            'A member through the mapped SCIM group leaves it at the identity provider. Audited access_group.member.remove.',
          params: memberParams,
          response: { 200: done, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => {
        await removeMember(deps, p(req), req.params.id, req.params.userId, metaOf(req));
        return { success: true as const };
      },
    );
    r.post(
      '/access-groups/:id/relationships',
      {
        onRequest: [auth, full, write],
        schema: {
          tags,
          operationId: 'attachAccessGroup',
          summary: 'Attach the group to one of the partner’s relationships',
          description: `A relationship of the partner (400 with relationshipId named otherwise) that has not ended (409 relationship_state_invalid); already attached: 409 conflict. From the first group on, the relationship is used only through its groups. Audited access_group.attach. ${EFFECT}`,
          params: idParam,
          body: attachBody,
          response: { 201: attachmentJson, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req, reply) =>
        reply.code(201).send(await attach(deps, p(req), req.params.id, req.body.relationshipId, metaOf(req))),
    );
    r.delete(
      '/access-groups/:id/relationships/:relationshipId',
      {
        onRequest: [auth, full, write],
        schema: {
          tags,
          operationId: 'detachAccessGroup',
          summary: 'Detach the group from a relationship',
          description:
            'Only narrows: the relationship stays bound to groups, used through those left. Audited access_group.detach.',
          params: attachParams,
          response: { 200: done, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => {
        await detach(deps, p(req), req.params.id, req.params.relationshipId, metaOf(req));
        return { success: true as const };
      },
    );
  };
}

// Delegated-access relationships. Each route: authenticate → full org access (partner side) → permission →
// step-up (the customer's decision) → schema → handler; which side may take each action is the service's rule.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { PERMISSIONS as PERMS } from '../../access/catalog.js';
import type { Deps } from '../../deps.js';
import { principalOf, requireFullOrgAccess, requirePermission } from '../../http/guards.js';
import { metaOf } from '../../http/meta.js';
import { authErrors, errors, page } from '../../http/schemas.js';
import { requireStepUp } from '../../http/step-up.js';
import { idParam } from '../../http/schemas.js';
import {
  createRelationshipBody,
  patchRelationshipBody,
  relationshipExportQuery,
  relationshipExportResponse,
  reachOptionsJson,
  reachOptionsQuery,
  relationshipHistoryJson,
  relationshipListQuery,
  relationshipViewJson as relationshipJson,
} from './schemas.js';
import { describeOne, describePage, reachOptions, relationshipHistory } from './described.js';
import {
  createRelationship,
  decideRelationship,
  exportRelationships,
  getRelationship,
  listRelationships,
  patchRelationship,
  requestApproval,
  terminateRelationship,
} from './service.js';

const tags = ['relationships'];
const EFFECT =
  "While the partner's settings.requireRelationships is on, its staff reach an organisation only through an active relationship with it: their permissions there are their role's within the union of the relationships' roles, their reach the relationships' sites and device groups.";

export function relationshipRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const auth = deps.authenticate();
    const full = requireFullOrgAccess();
    const read = requirePermission(PERMS.USERS_READ);
    const write = requirePermission(PERMS.USERS_WRITE);
    const stepUp = requireStepUp(deps);
    const p = principalOf;

    r.post(
      '/relationships',
      {
        onRequest: [auth, full, write],
        schema: {
          tags,
          operationId: 'createRelationship',
          summary: 'Draft a delegated-access relationship with one of the partner’s organisations',
          description: `The partner's side. roleIds are partner roles (within the caller's own permissions: 403 permission_ceiling); siteIds and deviceGroupIds of the organisation (empty = all); duration P1D..P2Y. autoExtend with a role holding *:*, users:write or roles:write is 400 auto_extend_not_allowed. Audited relationship.create. ${EFFECT}`,
          body: createRelationshipBody,
          response: { 201: relationshipJson, ...errors(400, 404), ...authErrors },
        },
      },
      async (req, reply) =>
        reply.code(201).send(await describeOne(deps, await createRelationship(deps, p(req), req.body, metaOf(req)))),
    );
    r.get(
      '/relationships',
      {
        onRequest: [auth, read],
        schema: {
          tags,
          operationId: 'listRelationships',
          summary: "Relationships: the partner's (optionally of one organisation), or the caller's organisation's",
          description:
            'Newest first, keyset paging. status is as of now: expiring = active within 30 days of its end (and not auto-extending); expired includes requests that lapsed after 90 days.',
          querystring: relationshipListQuery,
          response: { 200: page(relationshipJson), ...errors(400), ...authErrors },
        },
      },
      async (req) => describePage(deps, await listRelationships(deps, p(req), req.query)),
    );
    r.get(
      '/relationships/export',
      {
        onRequest: [auth, read],
        schema: {
          tags,
          operationId: 'exportRelationships',
          summary: 'The relationships of the list (for instance ?status=expiring) as CSV',
          querystring: relationshipExportQuery,
          response: { 200: relationshipExportResponse, ...errors(400), ...authErrors },
        },
      },
      async (req, reply) =>
        // Text, not serialised: the typed reply only knows the documented shapes.
        (reply as FastifyReply)
          .header('content-type', 'text/csv; charset=utf-8')
          .header('content-disposition', 'attachment; filename="relationships.csv"')
          .send(await exportRelationships(deps, p(req), req.query)),
    );
    r.get(
      '/relationships/reach-options',
      {
        onRequest: [auth, full, write],
        schema: {
          tags,
          operationId: 'getRelationshipReachOptions',
          summary: 'The sites and device groups a relationship with one of the partner’s organisations may name',
          description:
            "The partner's side, for drafting: every site and device group of the organisation by name, whether or not the caller's own access reaches it now (once the partner requires relationships, its admins reach an organisation only through one). 404 for an organisation not the partner's.",
          querystring: reachOptionsQuery,
          response: { 200: reachOptionsJson, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => reachOptions(deps, p(req), req.query.orgId),
    );
    r.get(
      '/relationships/:id',
      {
        onRequest: [auth, read],
        schema: {
          tags,
          operationId: 'getRelationship',
          summary: 'One relationship, seen by its partner or its organisation',
          params: idParam,
          response: { 200: relationshipJson, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => describeOne(deps, await getRelationship(deps, p(req), req.params.id)),
    );
    r.get(
      '/relationships/:id/history',
      {
        onRequest: [auth, read],
        schema: {
          tags,
          operationId: 'getRelationshipHistory',
          summary: 'What happened to a relationship, oldest first: drafted, sent, approved, narrowed, extended, ended',
          description:
            'Both sides read it (whoever sees the relationship), from the audit trail as the caller’s audit scope shows it; each event names the person who acted, and a narrowing names what it removed.',
          params: idParam,
          response: { 200: relationshipHistoryJson, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => relationshipHistory(deps, p(req), req.params.id),
    );
    r.patch(
      '/relationships/:id',
      {
        onRequest: [auth, full, write],
        schema: {
          tags,
          operationId: 'updateRelationship',
          summary: 'Change a relationship: freely while a draft; once asked for or approved, only narrower',
          description:
            'Once requested or approved, removing roles, sites or device groups, a shorter duration or switching autoExtend off apply at once; adding any (or a longer duration, or autoExtend on) is 409 relationship_frozen with `widened` naming the fields: widening takes a new relationship and a new approval. Ended relationships are 409 relationship_state_invalid. Audited relationship.update.',
          params: idParam,
          body: patchRelationshipBody,
          response: { 200: relationshipJson, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req) => describeOne(deps, await patchRelationship(deps, p(req), req.params.id, req.body, metaOf(req))),
    );
    r.post(
      '/relationships/:id/request',
      {
        onRequest: [auth, full, write],
        schema: {
          tags,
          operationId: 'requestRelationshipApproval',
          summary: "Lock a draft and ask the organisation's admins to approve it",
          description:
            "→ approval_pending with approvalUrl; the request lapses after 90 days. Both sides' admins are mailed the link. Audited relationship.request.",
          params: idParam,
          response: { 200: relationshipJson, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req) => describeOne(deps, await requestApproval(deps, p(req), req.params.id, metaOf(req))),
    );
    for (const verdict of ['approve', 'decline'] as const) {
      r.post(
        `/relationships/:id/${verdict}`,
        {
          onRequest: [auth, write],
          preHandler: [stepUp],
          schema: {
            tags,
            operationId: verdict === 'approve' ? 'approveRelationship' : 'declineRelationship',
            summary:
              verdict === 'approve'
                ? 'Approve a pending relationship (active from now for its duration)'
                : 'Decline a pending relationship',
            description:
              "The organisation's admins only (403 relationship_approver_required otherwise), with a recent proof of presence (step-up). 409 relationship_state_invalid when nothing is pending (decided, or lapsed after 90 days). Audited relationship.approve or relationship.decline.",
            params: idParam,
            response: { 200: relationshipJson, ...errors(400, 404, 409), ...authErrors },
          },
        },
        async (req) => describeOne(deps, await decideRelationship(deps, p(req), req.params.id, verdict, metaOf(req))),
      );
    }
    r.post(
      '/relationships/:id/terminate',
      {
        onRequest: [auth, write],
        schema: {
          tags,
          operationId: 'terminateRelationship',
          summary: 'End a relationship, from either side',
          description:
            "The partner's side or the organisation's admins. Bites on the next request, on every instance. Audited relationship.terminate.",
          params: idParam,
          response: { 200: relationshipJson, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req) => describeOne(deps, await terminateRelationship(deps, p(req), req.params.id, metaOf(req))),
    );
  };
}

// Access governance: "why can X do Y on Z" and "who can". Each route: authenticate → full org access →
// permission → schema → handler; the record must lie in the caller's own scope (the one by-id rule).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../../deps.js';
import { principalOf, requireFullOrgAccess, requirePermission } from '../../http/guards.js';
import { authErrors, errors, idParam } from '../../http/schemas.js';
import { PERMISSIONS as PERMS } from '../../access/catalog.js';
import { explain, whoCan } from './explain-service.js';
import { partnerAccess, partnerActivity } from './customer-view.js';
import { metaOf } from '../../http/meta.js';
import { decideRequest, listGrants, listRequests, requestAccess, revokeGrant } from './jit.js';
import {
  accessGrant,
  accessGrantList,
  accessRequest,
  accessRequestBody,
  accessRequestList,
  decisionBody,
  grantListQuery,
  requestListQuery,
} from './jit-schemas.js';
import { capabilities } from './capabilities.js';
import { nonCompliant, remindNonCompliant } from './compliance.js';
import { capabilitiesResponse, complianceResponse, remindBody, remindResponse, tenantQuery } from './policy-schemas.js';
import {
  explainQuery,
  explainResponse,
  pageQuery,
  partnerAccessResponse,
  partnerActivityResponse,
  whoCanQuery,
  whoCanResponse,
} from './schemas.js';

const SAME =
  'Answered by the functions the request pipeline itself runs (the permission check, the by-id scope rule, the policies authenticate applies), never a separate model of them.';

export function accessRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const auth = deps.authenticate();
    const full = requireFullOrgAccess();
    const read = requirePermission(PERMS.USERS_READ);
    const tags = ['access'];
    const p = principalOf;

    r.get(
      '/access/explain',
      {
        onRequest: [auth, full, read],
        schema: {
          tags,
          operationId: 'explainAccess',
          summary: 'Why a user or service account can (or cannot) use a permission on a record',
          description: `Walks account → membership → MFA policy → the role of the chain that grants the permission → organisation access (how it is reached) → site and device-group restrictions, naming the step that denies. Each membership bearing on the record (the person's partner membership, their membership of the record's organisation) is decided separately; \`allowed\` is true when one of them allows. ${SAME} The record must lie in the caller's scope and the subject must hold a membership bearing on it (404 otherwise).`,
          querystring: explainQuery,
          response: { 200: explainResponse, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => explain(deps, p(req), req.query),
    );
    r.get(
      '/access/who-can',
      {
        onRequest: [auth, full, read],
        schema: {
          tags,
          operationId: 'whoCanAccess',
          summary: 'Every user and service account that can use a permission on a record, with the reasons',
          description: `People first, then service accounts, each in id order, keyset paging. The database narrows the candidates (role chains granting the permission, standing organisation access, site and device-group restrictions); each candidate of the page is then decided as explain decides it, so a page may hold fewer than \`limit\` entries while \`nextCursor\` goes on. ${SAME}`,
          querystring: whoCanQuery,
          response: { 200: whoCanResponse, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => whoCan(deps, p(req), req.query),
    );

    r.get(
      '/access/capabilities',
      {
        onRequest: [auth],
        schema: {
          tags,
          operationId: 'getCapabilities',
          summary: 'What the caller may do on a tenant, each refusal with its reason',
          description: `For the console to hide or disable what the caller cannot do, once per page. ${SAME} An organisation outside the caller's scope answers 404.`,
          querystring: tenantQuery,
          response: { 200: capabilitiesResponse, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => capabilities(deps, p(req), req.query.orgId),
    );
    r.get(
      '/access/compliance',
      {
        onRequest: [auth, full, read],
        schema: {
          tags,
          operationId: 'listNonCompliantMembers',
          summary: "Members who do not yet meet the tenant's security policy",
          description:
            "The tenant's own members (the partner's staff, or the organisation's people) whom the policy would hold at enrolment at their next request: MFA required (by the tenant, a role's Force MFA or the tenant's list of roles) and no factor enrolled, or a passkey required and none registered.",
          querystring: tenantQuery,
          response: { 200: complianceResponse, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => nonCompliant(deps, p(req), req.query.orgId),
    );
    r.post(
      '/access/compliance/reminders',
      {
        onRequest: [auth, full, requirePermission(PERMS.USERS_WRITE)],
        schema: {
          tags,
          operationId: 'remindNonCompliantMembers',
          summary: 'Mail members who do not yet meet the security policy how to enrol',
          description:
            'One mail per member, at most one a day each (later ones are listed as skipped); at most 10 batches an hour per tenant (429 rate_limited). Audited security.compliance_reminder with who was reminded.',
          body: remindBody,
          response: { 200: remindResponse, ...errors(400, 404, 429), ...authErrors },
        },
      },
      async (req) => remindNonCompliant(deps, p(req), req.body, metaOf(req)),
    );

    const orgTags = ['organizations'];
    r.get(
      '/orgs/organizations/:id/partner-access',
      {
        onRequest: [auth, read],
        schema: {
          tags: orgTags,
          operationId: 'listPartnerAccess',
          summary:
            "The customer's view: every partner member and service account that can reach the organisation, and how",
          description:
            "Partner members whose standing access (orgAccess all, all_except not excluding this organisation, or selected including it) or access groups (attached to a relationship with it) cover it, with role and whether the organisation's own policies (mspAccess, its IP allow-list) hold them out now. Id order, keyset paging. The first page also lists serviceAccounts: the partner's own and those its staff made for the organisation, with role, last use and whether the organisation's controls hold them out. The organisation's admins see it; so does the partner.",
          params: idParam,
          querystring: pageQuery,
          response: { 200: partnerAccessResponse, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => partnerAccess(deps, p(req), req.params.id, req.query),
    );
    r.get(
      '/orgs/organizations/:id/partner-activity',
      {
        onRequest: [auth, requirePermission(PERMS.AUDIT_READ)],
        schema: {
          tags: orgTags,
          operationId: 'listPartnerActivity',
          summary: "The customer's view: what the partner's staff did in the organisation",
          description:
            "The organisation's audit trail filtered to actors who spoke for its partner (members, service accounts, SCIM tokens the partner made), newest first, keyset paging. Staff who have since left the partner stay listed, marked formerStaff.",
          params: idParam,
          querystring: pageQuery,
          response: { 200: partnerActivityResponse, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => partnerActivity(deps, p(req), req.params.id, req.query),
    );

    // Just-in-time access. Who may do what is decided by the service (eligibility, the organisation's
    // approval policy, the approver's role): a request is the caller's own, an approval the named approver's.
    const jitTags = ['access'];
    r.post(
      '/access/requests',
      {
        onRequest: [auth],
        schema: {
          tags: jitTags,
          operationId: 'requestAccess',
          summary: 'Request just-in-time access to an organisation (a partner member)',
          description:
            "The caller must be eligible for the organisation (orgAccess eligible with it among orgIds, or standing access to an organisation under mspAccess approval_required). durationMinutes at most the partner's settings.security.jitMaxMinutes (default 480). The organisation's jitApproval decides: auto (the grant opens at once and is returned), partner_admin, customer_admin (always under mspAccess approval_required). Audited access.request (and access.grant).",
          body: accessRequestBody,
          response: { 201: accessRequest, ...errors(400, 404), ...authErrors },
        },
      },
      async (req, reply) => reply.code(201).send(await requestAccess(deps, p(req), req.body, metaOf(req))),
    );
    r.get(
      '/access/requests',
      {
        onRequest: [auth],
        schema: {
          tags: jitTags,
          operationId: 'listAccessRequests',
          summary: "Just-in-time access requests: the caller's own, and those pending its approval",
          description:
            'A Partner Admin sees pending partner_admin requests of the partner; an Organization Admin pending customer_admin requests to its organisation; everyone their own. Newest first.',
          querystring: requestListQuery,
          response: { 200: accessRequestList, ...errors(400), ...authErrors },
        },
      },
      async (req) => listRequests(deps, p(req), req.query),
    );
    for (const verdict of ['approve', 'deny'] as const) {
      r.post(
        `/access/requests/:id/${verdict}`,
        {
          onRequest: [auth],
          schema: {
            tags: jitTags,
            operationId: verdict === 'approve' ? 'approveAccessRequest' : 'denyAccessRequest',
            summary:
              verdict === 'approve'
                ? 'Approve a pending access request (opens the grant from now)'
                : 'Deny a pending access request',
            description:
              "Only the approver the organisation's policy names (a Partner Admin for partner_admin, one of the organisation's admins for customer_admin; 403 jit_approver_required otherwise), never the requester (403 forbidden_self_action); 409 access_request_not_pending once decided. Audited access.approve and access.grant, or access.deny.",
            params: idParam,
            body: decisionBody.optional(),
            response: { 200: accessRequest, ...errors(400, 404, 409), ...authErrors },
          },
        },
        async (req) => decideRequest(deps, p(req), req.params.id, verdict, req.body ?? {}, metaOf(req)),
      );
    }
    r.get(
      '/access/grants',
      {
        onRequest: [auth],
        schema: {
          tags: jitTags,
          operationId: 'listAccessGrants',
          summary:
            "Just-in-time grants: the caller's own; every one of the partner for a Partner Admin; the organisation's for its admins",
          description:
            'Grants past their end not yet observed are recorded expired (access.expire) as they are listed. Newest first.',
          querystring: grantListQuery,
          response: { 200: accessGrantList, ...errors(400), ...authErrors },
        },
      },
      async (req) => listGrants(deps, p(req), req.query),
    );
    r.delete(
      '/access/grants/:id',
      {
        onRequest: [auth],
        schema: {
          tags: jitTags,
          operationId: 'revokeAccessGrant',
          summary: 'Revoke a just-in-time grant in force',
          description:
            'The member itself, a Partner Admin of the partner, or an admin of the organisation. Bites on the next request, on every instance. Audited access.revoke; 409 conflict when it has already ended.',
          params: idParam,
          response: { 200: accessGrant, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req) => revokeGrant(deps, p(req), req.params.id, metaOf(req)),
    );
  };
}

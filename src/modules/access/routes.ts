// Access governance (issue 18): "why can X do Y on Z" and "who can". Each route: authenticate → full org access →
// permission → schema → handler; the record must lie in the caller's own scope (the one by-id rule).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../../deps.js';
import { principalOf, requireFullOrgAccess, requirePermission } from '../../http/guards.js';
import { authErrors, errors } from '../../http/schemas.js';
import { PERMISSIONS as P } from '../roles/catalog.js';
import { explain, whoCan } from './explain-service.js';
import { idParam } from '../tenants/schemas.js';
import { partnerAccess, partnerActivity } from './customer-view.js';
import { explainQuery, explainResponse, pageQuery, partnerAccessResponse, partnerActivityResponse, whoCanQuery, whoCanResponse } from './schemas.js';

const SAME =
  'Answered by the functions the request pipeline itself runs (the permission check, the by-id scope rule, the policies authenticate applies), never a separate model of them.';

export function accessRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const auth = deps.authenticate();
    const full = requireFullOrgAccess();
    const read = requirePermission(P.USERS_READ);
    const tags = ['access'];
    const p = principalOf;

    r.get('/access/explain', { onRequest: [auth, full, read], schema: { tags, operationId: 'explainAccess', summary: 'Why a user or service account can (or cannot) use a permission on a record', description: `Walks account → membership → MFA policy → the role of the chain that grants the permission → organisation access (how it is reached) → site and device-group restrictions, naming the step that denies. Each membership bearing on the record (the person's partner membership, their membership of the record's organisation) is decided separately; \`allowed\` is true when one of them allows. ${SAME} The record must lie in the caller's scope and the subject must hold a membership bearing on it (404 otherwise).`, querystring: explainQuery, response: { 200: explainResponse, ...errors(400, 404), ...authErrors } } },
      async (req) => explain(deps, p(req), req.query));
    r.get('/access/who-can', { onRequest: [auth, full, read], schema: { tags, operationId: 'whoCanAccess', summary: 'Every user and service account that can use a permission on a record, with the reasons', description: `People first, then service accounts, each in id order, keyset paging. The database narrows the candidates (role chains granting the permission, standing organisation access, site and device-group restrictions); each candidate of the page is then decided as explain decides it, so a page may hold fewer than \`limit\` entries while \`nextCursor\` goes on. ${SAME}`, querystring: whoCanQuery, response: { 200: whoCanResponse, ...errors(400, 404), ...authErrors } } },
      async (req) => whoCan(deps, p(req), req.query));

    const orgTags = ['organizations'];
    r.get('/orgs/organizations/:id/partner-access', { onRequest: [auth, read], schema: { tags: orgTags, operationId: 'listPartnerAccess', summary: "The customer's view: every partner member who can reach the organisation, and how", description: "Partner members whose standing access (orgAccess all, or selected including this organisation) covers it, with role and whether the organisation's own policies (mspAccess, its IP allow-list) hold them out now. Id order, keyset paging. The organisation's admins see it; so does the partner.", params: idParam, querystring: pageQuery, response: { 200: partnerAccessResponse, ...errors(400, 404), ...authErrors } } },
      async (req) => partnerAccess(deps, p(req), req.params.id, req.query));
    r.get('/orgs/organizations/:id/partner-activity', { onRequest: [auth, requirePermission(P.AUDIT_READ)], schema: { tags: orgTags, operationId: 'listPartnerActivity', summary: "The customer's view: what the partner's staff did in the organisation", description: "The organisation's audit trail filtered to actors who are members of its partner, newest first, keyset paging.", params: idParam, querystring: pageQuery, response: { 200: partnerActivityResponse, ...errors(400, 404), ...authErrors } } },
      async (req) => partnerActivity(deps, p(req), req.params.id, req.query));
  };
}

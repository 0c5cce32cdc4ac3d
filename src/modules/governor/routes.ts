// Freezes (partner and organisation), co-sign requests and the partner's governor view. Each route: authenticate →
// permission → step-up (lifting a freeze, approving a co-signature) → schema → handler.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { hasPermission } from '../../access/resolver.js';
import { PERMISSIONS as PERMS } from '../../access/catalog.js';
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { principalOf, requireFullOrgAccess, requirePermission, requireTenant } from '../../http/guards.js';
import { metaOf } from '../../http/meta.js';
import { authErrors, errors, idParam } from '../../http/schemas.js';
import { requireStepUp } from '../../http/step-up.js';
import type { Principal } from '../../http/context.js';
import {
  coSignBody,
  coSignJson,
  coSignList,
  coSignListQuery,
  freezeBody,
  freezeState,
  governorView,
} from './schemas.js';
import {
  approveCoSign,
  freezeOrg,
  freezePartner,
  governorStatus,
  listCoSignRequests,
  requestCoSign,
  thawOrg,
  thawPartner,
} from './service.js';

const tags = ['governor'];
const FREEZE =
  'While frozen, every destructive permission (the catalogue marks them: scripts:execute, remote:access, devices:delete, devices:execute, users:write, users:delete, organizations:delete, sites:delete, ...) answers 403 `frozen`, on every instance from the next decision; only the partner’s break-glass account passes, with a stated reason (header x-break-glass-reason, audited). Audited governor.freeze / governor.unfreeze and mailed to both sides’ admins.';

/** The partner's own staff and service accounts, acting in the partner. */
function partnerOnly(p: Principal): void {
  if (p.tenantKind !== 'partner')
    throw new AppError('forbidden', 'Only the partner’s own members and accounts act here.');
}

export function governorRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const auth = deps.authenticate();
    const full = requireFullOrgAccess();
    const settingsWrite = requirePermission(PERMS.SETTINGS_WRITE);
    const stepUp = requireStepUp(deps);
    const p = principalOf;

    r.post(
      '/orgs/partners/me/freeze',
      {
        onRequest: [auth, full, settingsWrite],
        schema: {
          tags,
          summary: 'Freeze the destructive permissions of every member and service account of the partner',
          description: `${FREEZE} 409 already_frozen when a freeze is in force.`,
          body: freezeBody,
          response: { 200: freezeState, ...errors(400, 409), ...authErrors },
        },
      },
      async (req) => {
        partnerOnly(p(req));
        return freezePartner(deps, p(req), req.body.reason, metaOf(req));
      },
    );
    r.delete(
      '/orgs/partners/me/freeze',
      {
        onRequest: [auth, full, settingsWrite],
        preHandler: [stepUp],
        schema: {
          tags,
          summary: 'Lift the partner’s freeze (step-up)',
          description: 'Answers the state after; lifting no freeze changes nothing.',
          response: { 200: freezeState, ...errors(400), ...authErrors },
        },
      },
      async (req) => {
        partnerOnly(p(req));
        return thawPartner(deps, p(req), metaOf(req));
      },
    );
    r.post(
      '/orgs/organizations/:id/freeze',
      {
        onRequest: [auth, settingsWrite],
        schema: {
          tags,
          summary: 'Freeze the destructive permissions of everyone acting in the organisation',
          description: `The organisation’s admins, or the partner’s staff who reach it. It holds the partner’s staff and service accounts there and the organisation’s own members and accounts. ${FREEZE}`,
          params: idParam,
          body: freezeBody,
          response: { 200: freezeState, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req) => freezeOrg(deps, p(req), req.params.id, req.body.reason, metaOf(req)),
    );
    r.delete(
      '/orgs/organizations/:id/freeze',
      {
        onRequest: [auth, settingsWrite],
        preHandler: [stepUp],
        schema: {
          tags,
          summary: 'Lift the organisation’s freeze (step-up)',
          description:
            'Only the side that set the freeze lifts it (403 freeze_other_side): the partner cannot lift what the organisation decided.',
          params: idParam,
          response: { 200: freezeState, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => thawOrg(deps, p(req), req.params.id, metaOf(req)),
    );

    r.get(
      '/governor',
      {
        onRequest: [auth, requirePermission(PERMS.SETTINGS_READ)],
        schema: {
          tags,
          summary: 'The partner’s freeze, its organisations’ freezes, its budget and co-signature policy',
          response: { 200: governorView, ...authErrors },
        },
      },
      async (req) => {
        partnerOnly(p(req));
        return governorStatus(deps, p(req));
      },
    );
    r.post(
      '/governor/co-signs',
      {
        onRequest: [auth, requireTenant()],
        schema: {
          tags,
          summary: 'Ask another Partner Admin to co-sign: over a budget, the next actions need it',
          description:
            'The caller (a person or a service account) asks for itself. Pending for settings.governor.coSign.minutes of the partner (default 30); once approved, exactly coSign.actions (default 10) over-budget destructive actions pass, each audited governor.co_sign.use.',
          body: coSignBody,
          response: { 201: coSignJson, ...errors(400), ...authErrors },
        },
      },
      async (req, reply) => reply.code(201).send(await requestCoSign(deps, p(req), req.body.reason, metaOf(req))),
    );
    r.get(
      '/governor/co-signs',
      {
        onRequest: [auth, requireTenant()],
        schema: {
          tags,
          summary: 'Co-sign requests: all of the partner’s for its admins (settings:write), else the caller’s own',
          querystring: coSignListQuery,
          response: { 200: coSignList, ...errors(400), ...authErrors },
        },
      },
      async (req) => {
        const caller = p(req);
        const all = caller.tenantKind === 'partner' && hasPermission(caller.permissions, PERMS.SETTINGS_WRITE);
        return listCoSignRequests(deps, caller, all, req.query.status);
      },
    );
    r.post(
      '/governor/co-signs/:id/approve',
      {
        onRequest: [auth, full, settingsWrite],
        preHandler: [stepUp],
        schema: {
          tags,
          summary: 'Approve a co-sign request (another Partner Admin, step-up)',
          description:
            'Never the principal it unlocks (403 co_sign_not_allowed); a request approved already or past its time is 409 co_sign_closed; another partner’s is 404.',
          params: idParam,
          response: { 200: coSignJson, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req) => {
        partnerOnly(p(req));
        return approveCoSign(deps, p(req), req.params.id, metaOf(req));
      },
    );
  };
}

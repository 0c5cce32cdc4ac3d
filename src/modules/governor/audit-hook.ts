// What the governor noted while deciding a request (src/access/governor.ts: a budget exceeded, an action a step-up or a
// co-signature let through; src/access/freeze.ts: a freeze the break-glass account passed) goes to the audit trail,
// and from there to webhooks, once the answer is sent: a refusal rolls its request's transaction back, the record of it
// must not go with it.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.js';
import { metaOf } from '../../http/meta.js';
import { actorOf } from '../audit/index.js';

const ACTIONS = {
  budget_exceeded: 'governor.budget.exceeded',
  step_up_unlock: 'governor.budget.step_up',
  co_sign_unlock: 'governor.co_sign.use',
} as const;

export function installGovernorAudit(app: FastifyInstance, deps: Deps): void {
  // A callback hook: only a request the governor noted something on has work.
  app.addHook('onResponse', (req, _reply, done) => {
    if (!req.auth?.governorEvents?.length && !req.auth?.freezePassed?.size) return done();
    record(req).finally(done);
  });

  async function record(req: FastifyRequest): Promise<void> {
    const p = req.auth!;
    const meta = metaOf(req);
    try {
      await deps.db.transaction(async (tx) => {
        for (const e of p.governorEvents ?? []) {
          await deps.audit.record(
            tx,
            {
              action: ACTIONS[e.kind],
              result: e.kind === 'budget_exceeded' ? 'denied' : 'success',
              actor: actorOf(p),
              partnerId: p.partnerId,
              orgId: e.orgId,
              resourceType: e.coSignId ? 'co_sign_request' : 'principal',
              resourceId: e.coSignId ?? e.subject?.id ?? p.userId,
              details: {
                permissions: e.permissions,
                budget: e.budget,
                ...(e.remaining !== undefined ? { remaining: e.remaining } : {}),
                ...(e.subject ? { subject: e.subject } : {}),
                route: `${req.method} ${req.routeOptions.url ?? ''}`,
              },
            },
            meta,
          );
        }
        for (const where of p.freezePassed ?? []) {
          await deps.audit.record(
            tx,
            {
              action: 'access.break_glass',
              actor: actorOf(p),
              partnerId: p.partnerId,
              orgId: where === '*' ? null : where,
              resourceType: where === '*' ? 'partner' : 'organization',
              resourceId: where === '*' ? p.partnerId : where,
              details: { exempted: 'freeze', reason: p.breakGlassReason, ip: meta.ip },
            },
            meta,
          );
        }
      });
    } catch (err) {
      req.log.error({ err }, 'governor audit failed');
    }
  }
}

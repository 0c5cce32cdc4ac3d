// Break-glass into an organisation that suspended partner access: allowed only to the partner's designated
// account with a stated reason (header x-break-glass-reason, src/access/break-glass.ts); each use is audited and mailed
// to both sides' admins, once the answer is sent (once an hour per session and organisation, per instance).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.js';
import { metaOf } from '../../http/meta.js';
import { actorOf } from '../audit/index.js';
import { accessMails } from '../../access/mails.js';
import { adminsOfBothSides } from '../../access/repo.js';

const alerted = new Map<string, number>();
const ALERT_EVERY_MS = 3600_000;

export function installBreakGlassAlerts(app: FastifyInstance, deps: Deps): void {
  // A callback hook: every request passes it, and only a break-glass request has work (no promise for the others).
  app.addHook('onResponse', (req, _reply, done) => {
    if (!req.auth?.breakGlassUsed?.size) return done();
    alert(req).finally(done);
  });

  async function alert(req: FastifyRequest): Promise<void> {
    const p = req.auth;
    if (!p?.breakGlassUsed) return;
    const now = Date.now();
    if (alerted.size > 10_000) alerted.clear();
    try {
      for (const orgId of p.breakGlassUsed) {
        const key = `${p.sessionId}|${orgId}`;
        const at = alerted.get(key);
        if (at !== undefined && now - at < ALERT_EVERY_MS) continue;
        alerted.set(key, now);
        const meta = metaOf(req);
        await deps.db.transaction(async (tx) => {
          await deps.audit.record(
            tx,
            {
              action: 'access.break_glass',
              actor: actorOf(p),
              partnerId: p.partnerId,
              orgId,
              resourceType: 'organization',
              resourceId: orgId,
              details: { exempted: 'msp_access', reason: p.breakGlassReason, ip: meta.ip },
            },
            meta,
          );
          const side = await adminsOfBothSides(tx, p.partnerId!, orgId);
          for (const email of side.emails) {
            await deps.outbox.enqueue(
              tx,
              accessMails.breakGlassUsed(email, {
                orgName: side.orgName,
                partnerName: side.partnerName,
                actor: p.email,
                reason: p.breakGlassReason ?? '',
                ip: meta.ip ?? 'unknown',
                url: `${deps.config.appUrl}/audit`,
              }),
            );
          }
        });
      }
      deps.outbox.kick();
    } catch (err) {
      req.log.error({ err }, 'break-glass alert failed');
    }
  }
}

// POST /auth/sessions/report: the "this was not me" link of the new-device mail.
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import type { AuditRequestMeta } from '../audit/index.js';
import {
  consumeFlow,
  createFlow,
  findUser,
  listMemberships,
  mails,
  pickDefault,
  RESET_TTL_MS,
  resetUrl,
  voidFlows,
} from '../identity/index.js';
import { endUserSession } from './repo.js';

/**
 * POST /auth/sessions/report: the "this was not me" link. Ends the reported session (once; the link is single-use)
 * and mails a password reset link, voiding any earlier one.
 */
export async function reportSession(deps: Deps, token: string, meta: AuditRequestMeta): Promise<void> {
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    const flow = await consumeFlow(tx, 'session_report', token, now);
    if (!flow?.userId) throw new AppError('invalid_report_token');
    const sessionId = (flow.data as { sessionId: string }).sessionId;
    const ended = await endUserSession(tx, flow.userId, sessionId, 'reported_not_me', now);
    const user = await findUser(tx, flow.userId);
    if (!user) throw new AppError('invalid_report_token');
    await voidFlows(tx, user.id, 'password_reset', now);
    const reset =
      user.status === 'active'
        ? await createFlow(tx, { kind: 'password_reset', userId: user.id, ttlMs: RESET_TTL_MS, now })
        : null;
    const ctx = pickDefault(await listMemberships(tx, user.id));
    await deps.audit.record(
      tx,
      {
        action: 'auth.session.reported',
        actor: { userId: user.id, email: user.email },
        partnerId: ctx.partnerId,
        orgId: ctx.orgId,
        resourceType: 'session',
        resourceId: sessionId,
        details: { sessionEnded: ended, resetSent: reset !== null },
      },
      meta,
    );
    if (reset) await deps.outbox.enqueue(tx, mails.passwordReset(user.email, { url: resetUrl(deps, reset.token) }));
  });
  deps.outbox.kick();
}

// Sessions you can see and end: the caller's own live sessions, and a member's sessions for admins.
// Ending one sets revoked_at; every instance reads it on the next request (authenticate), so it ends everywhere.
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import type { Principal } from '../../http/context.js';
import { notFound } from '../../http/errors.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import { auditTenant } from '../tenants/index.js';
import type { Target } from '../../db/tenant-filter.js';
import { sessionJson, toSessionJson } from '../identity/index.js';
import { endLiveSessions, liveSessions } from './repo.js';

export { sessionJson };

export async function listOwnSessions(deps: Deps, p: Principal) {
  const rows = await liveSessions(deps.db, p.userId, deps.clock.now());
  return { data: rows.map((s) => toSessionJson(s, p.sessionId)) };
}

/** Ends one of the caller's own sessions (the current one too: that is a sign-out of this device). */
export async function endOwnSession(deps: Deps, p: Principal, sessionId: string, meta: AuditRequestMeta) {
  await deps.db.transaction(async (tx) => {
    const ended = await endLiveSessions(tx, { userId: p.userId, sessionId }, 'user_revoked', deps.clock.now());
    if (!ended.length) throw notFound('session');
    await deps.audit.record(
      tx,
      {
        action: 'auth.session.revoke',
        actor: { userId: p.userId, email: p.email },
        partnerId: p.partnerId,
        orgId: p.orgId,
        resourceType: 'session',
        resourceId: sessionId,
        details: { by: 'self', current: sessionId === p.sessionId },
      },
      meta,
    );
  });
}

/** Ends every other session of the caller; the calling one continues. */
export async function endOtherSessions(deps: Deps, p: Principal, meta: AuditRequestMeta) {
  return deps.db.transaction(async (tx) => {
    const ended = await endLiveSessions(
      tx,
      { userId: p.userId, exceptSessionId: p.sessionId },
      'user_revoked_others',
      deps.clock.now(),
    );
    await deps.audit.record(
      tx,
      {
        action: 'auth.session.revoke',
        actor: { userId: p.userId, email: p.email },
        partnerId: p.partnerId,
        orgId: p.orgId,
        resourceType: 'session',
        resourceId: p.sessionId,
        details: { by: 'self', allButCurrent: true, sessionsRevoked: ended.length },
      },
      meta,
    );
    return { revoked: ended.length };
  });
}

/** An admin sees and ends the sessions a member holds in the admin's target scope (not those of other tenants). */
export async function listMemberSessions(deps: Deps, target: Target, userId: string) {
  const rows = await liveSessions(deps.db, userId, deps.clock.now(), target);
  return { data: rows.map((s) => toSessionJson(s, null)) };
}

export async function endMemberSession(
  deps: Deps,
  caller: Principal,
  target: Target,
  userId: string,
  sessionId: string,
  meta: AuditRequestMeta,
  tx: Executor,
) {
  const ended = await endLiveSessions(tx, { userId, sessionId, target }, 'admin_revoked', deps.clock.now());
  if (!ended.length) throw notFound('session');
  await deps.audit.record(
    tx,
    {
      action: 'auth.session.revoke',
      actor: actorOf(caller),
      ...auditTenant(target),
      resourceType: 'session',
      resourceId: sessionId,
      details: { by: 'admin', userId },
    },
    meta,
  );
}

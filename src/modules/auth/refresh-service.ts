// Refresh-token rotation with reuse detection, and logout.
import type { Deps } from '../../deps.js';
import { loadPrincipal } from '../../access/caller.js';
import type { Principal } from '../../http/context.js';
import { enforceOwnIpAllowlist } from '../../http/ip-policy.js';
import { AppError } from '../../http/errors.js';
import { randomToken, sha256 } from '../../platform/crypto.js';
import type { AuditRequestMeta } from '../audit/index.js';
import {
  findSession,
  findUser,
  type IssuedSession,
  markMembershipUsed,
  revokeUserSessions,
} from '../identity/index.js';
import {
  findLiveSessionByToken,
  findRotatedToken,
  partnerOfOrg,
  recordRotatedToken,
  revokeSession,
  rotateSessionToken,
  setRotatedAt,
} from './repo.js';

/** How long a rotation counts as in flight when its answer never went out (see markRotationDelivered). */
const ROTATION_IN_FLIGHT_MS = 30_000;
/**
 * After the answer went out, the rotated token presented again by the same client (address and user agent of the
 * winner) within this window is a twin that lost the race, not a replay: it is refused without ending the session.
 * When a request is read depends on scheduling (new connections, a busy event loop, PGlite running one query at a
 * time), not on when the client sent it; this makes the outcome the same on both databases.
 */
const SAME_CLIENT_RACE_MS = 10_000;

/** Who presented a refresh token: two tabs of one browser share it, a thief's client does not. */
const clientOf = (meta: AuditRequestMeta) => sha256(`${meta.ip ?? ''}\n${meta.userAgent ?? ''}`);

/**
 * Rotates the session's refresh token. The UPDATE matches the presented token's hash, so of two concurrent
 * refreshes exactly one wins. A rotated-out token presented again revokes the whole session, unless the request
 * arrived before the new pair was handed out: that is a race between two requests of the same client (two tabs),
 * not a replay. `rotatedAt` of a rotated token is the moment from which presenting it counts as a replay.
 */
export async function refresh(deps: Deps, refreshToken: string, meta: AuditRequestMeta): Promise<IssuedSession> {
  const now = deps.clock.now();
  const arrivedAt = now.getTime();
  const oldHash = sha256(refreshToken);
  const next = randomToken();
  const outcome = await deps.db.transaction(async (tx) => {
    const current = await findLiveSessionByToken(tx, oldHash, now);
    const session = current
      ? await rotateSessionToken(
          tx,
          current.id,
          oldHash,
          sha256(next),
          new Date(Math.min(now.getTime() + deps.config.refreshTokenTtl * 1000, current.absoluteExpiresAt.getTime())),
        )
      : null;
    if (session) {
      // In flight until the answer is ready: a twin request arriving meanwhile lost a race, it is no replay.
      await recordRotatedToken(tx, {
        tokenHash: oldHash,
        sessionId: session.id,
        rotatedAt: new Date(now.getTime() + ROTATION_IN_FLIGHT_MS),
        rotatedBy: clientOf(meta),
      });
      // A refresh is the membership acting: it keeps standing access from lapsing.
      await markMembershipUsed(
        tx,
        session.userId,
        { scope: session.scope, partnerId: session.partnerId, orgId: session.orgId, roleId: null },
        now,
      );
      return { kind: 'ok' as const, session };
    }
    const reused = await findRotatedToken(tx, oldHash);
    if (!reused) return { kind: 'invalid' as const };
    if (arrivedAt <= reused.rotatedAt.getTime()) return { kind: 'raced' as const };
    if (reused.rotatedBy === clientOf(meta) && arrivedAt - reused.rotatedAt.getTime() <= SAME_CLIENT_RACE_MS)
      return { kind: 'raced' as const };
    const victim = await revokeSession(tx, reused.sessionId, 'refresh_reuse', now);
    const s = victim ?? (await findSession(tx, reused.sessionId));
    const user = s ? await findUser(tx, s.userId) : undefined;
    // An organisation session stores no partner; its events still belong to the partner's trail.
    const orgPartnerId = s?.orgId ? await partnerOfOrg(tx, s.orgId) : null;
    await deps.audit.record(
      tx,
      {
        action: 'auth.refresh.reuse_detected',
        result: 'denied',
        actor: user ? { userId: user.id, email: user.email } : null,
        partnerId: s?.partnerId ?? orgPartnerId ?? null,
        orgId: s?.orgId ?? null,
        resourceType: 'session',
        resourceId: reused.sessionId,
        details: { sessionRevoked: Boolean(victim) },
      },
      meta,
    );
    return { kind: 'reused' as const };
  });
  if (outcome.kind !== 'ok') throw new AppError('invalid_refresh_token');
  const s = outcome.session;
  // The claims of the membership the session acts in, as at sign-in (a removed membership or disabled user ends here).
  const principal = await loadPrincipal(deps.authContext, s.userId, s.id, meta.ip);
  if (!principal) throw new AppError('invalid_refresh_token');
  await enforceOwnIpAllowlist(deps, principal, meta, 'refresh');
  const accessToken = await deps.tokens.sign({
    sub: s.userId,
    sid: s.id,
    scope: principal.tenantKind,
    partnerId: principal.partnerId,
    orgId: principal.orgId,
    roleId: principal.roleId,
    mfa: principal.mfa,
    authTime: principal.authTime,
  });
  return { userId: s.userId, sessionId: s.id, accessToken, refreshToken: next };
}

/** Call once the answer carrying the new pair is ready: from now on the old token presented again is a replay. */
export async function markRotationDelivered(deps: Deps, oldRefreshToken: string): Promise<void> {
  await setRotatedAt(deps.db, sha256(oldRefreshToken), deps.clock.now());
}

/** Revokes every session of the user. */
export async function logout(deps: Deps, principal: Principal, meta: AuditRequestMeta): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const revoked = await revokeUserSessions(deps, tx, principal.userId, 'logout');
    await deps.audit.record(
      tx,
      {
        action: 'user.logout',
        actor: { userId: principal.userId, email: principal.email },
        partnerId: principal.partnerId,
        orgId: principal.orgId,
        resourceType: 'session',
        resourceId: principal.sessionId,
        details: { sessionsRevoked: revoked },
      },
      meta,
    );
  });
}

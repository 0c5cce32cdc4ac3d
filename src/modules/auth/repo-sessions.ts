// Sessions of the caller and session lists of a user, all or those a target tenant holds (part of repo.ts).
import { and, desc, eq, gt, isNull, ne } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { sessions } from '../../db/schema/index.js';
import { ownedBy, type Target } from '../../db/tenant-filter.js';
import type { SessionContext, SessionRow } from '../identity/index.js';

// ---- Sessions of the caller

/** The caller's session continues under a new refresh token; renews auth_time (a fresh proof was made). */
export async function renewSessionToken(tx: Executor, sessionId: string, tokenHash: string, now: Date): Promise<void> {
  await tx.update(sessions).set({ tokenHash, lastUsedAt: now, authTime: now }).where(eq(sessions.id, sessionId));
}

/** Renews auth_time of a live session; false when the session has ended. */
export async function renewAuthTime(
  tx: Executor,
  sessionId: string,
  now: Date,
  liveOnly = true,
  /** The proof given (a passkey is the phishing-resistant one the governor's budgets accept). */
  method: string | null = null,
): Promise<boolean> {
  const renewed = await tx
    .update(sessions)
    .set({ authTime: now, authMethod: method })
    .where(and(eq(sessions.id, sessionId), liveOnly ? isNull(sessions.revokedAt) : undefined))
    .returning({ id: sessions.id });
  return renewed.length > 0;
}

export async function sessionMethod(db: Executor, sessionId: string): Promise<string | null | undefined> {
  const [current] = await db.select({ method: sessions.method }).from(sessions).where(eq(sessions.id, sessionId));
  return current?.method;
}

/** Moves a session to another membership under a new refresh token. */
export async function moveSession(
  tx: Executor,
  sessionId: string,
  ctx: SessionContext,
  tokenHash: string,
  now: Date,
  method?: string,
): Promise<void> {
  await tx
    .update(sessions)
    .set({
      scope: ctx.scope,
      partnerId: ctx.scope === 'partner' ? ctx.partnerId : null,
      orgId: ctx.orgId,
      tokenHash,
      lastUsedAt: now,
      ...(method ? { method } : {}),
    })
    .where(eq(sessions.id, sessionId));
}

/** Ends one live session of a user; true when it was live. */
export async function endUserSession(
  tx: Executor,
  userId: string,
  sessionId: string,
  reason: string,
  now: Date,
): Promise<boolean> {
  const ended = await tx
    .update(sessions)
    .set({ revokedAt: now, revokeReason: reason })
    .where(and(eq(sessions.id, sessionId), eq(sessions.userId, userId), isNull(sessions.revokedAt)))
    .returning({ id: sessions.id });
  return ended.length === 1;
}

// ---- Session lists: live sessions of a user, all or those a target tenant holds.

const live = (now: Date) =>
  and(isNull(sessions.revokedAt), gt(sessions.expiresAt, now), gt(sessions.absoluteExpiresAt, now));

/** Sessions held in a target tenant: the partner's own (partner scope) or the organisation's. */
const inTarget = (target: Target) => ownedBy(target, { partnerId: sessions.partnerId, orgId: sessions.orgId });

export async function liveSessions(db: Executor, userId: string, now: Date, target?: Target): Promise<SessionRow[]> {
  return db
    .select()
    .from(sessions)
    .where(and(eq(sessions.userId, userId), live(now), target ? inTarget(target) : undefined))
    .orderBy(desc(sessions.createdAt), desc(sessions.id))
    .limit(200);
}

/**
 * Ends live sessions of a user: one (`sessionId`), or all but one (`exceptSessionId`), within a target tenant when
 * given. Returns the ids ended.
 */
export async function endLiveSessions(
  tx: Executor,
  q: { userId: string; sessionId?: string; exceptSessionId?: string; target?: Target },
  reason: string,
  now: Date,
): Promise<string[]> {
  const rows = await tx
    .update(sessions)
    .set({ revokedAt: now, revokeReason: reason })
    .where(
      and(
        eq(sessions.userId, q.userId),
        q.sessionId ? eq(sessions.id, q.sessionId) : undefined,
        q.exceptSessionId ? ne(sessions.id, q.exceptSessionId) : undefined,
        q.target ? inTarget(q.target) : undefined,
        live(now),
      ),
    )
    .returning({ id: sessions.id });
  return rows.map((r) => r.id);
}

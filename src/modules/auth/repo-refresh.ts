// Refresh-token rotation with reuse detection (part of repo.ts).
import { and, eq, gt, isNull } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { organizations, sessionRotatedTokens, sessions } from '../../db/schema/index.js';
import type { SessionRow } from '../identity/index.js';

// ---- Refresh-token rotation with reuse detection

export async function findLiveSessionByToken(tx: Executor, tokenHash: string, now: Date) {
  const [current] = await tx
    .select({ id: sessions.id, absoluteExpiresAt: sessions.absoluteExpiresAt })
    .from(sessions)
    .where(
      and(
        eq(sessions.tokenHash, tokenHash),
        isNull(sessions.revokedAt),
        gt(sessions.expiresAt, now),
        gt(sessions.absoluteExpiresAt, now),
      ),
    )
    .limit(1);
  return current ?? null;
}

/**
 * Swaps the session's refresh token if it still holds `oldHash` (of two concurrent refreshes exactly one wins).
 * Last-seen is left to the principal's load that follows, which first checks the tenant's idle lifetime against it.
 */
export async function rotateSessionToken(
  tx: Executor,
  sessionId: string,
  oldHash: string,
  newHash: string,
  expiresAt: Date,
): Promise<SessionRow | null> {
  const [session] = await tx
    .update(sessions)
    .set({ tokenHash: newHash, expiresAt })
    .where(and(eq(sessions.id, sessionId), eq(sessions.tokenHash, oldHash), isNull(sessions.revokedAt)))
    .returning();
  return session ?? null;
}

export async function recordRotatedToken(
  tx: Executor,
  row: { tokenHash: string; sessionId: string; rotatedAt: Date; rotatedBy: string },
): Promise<void> {
  await tx.insert(sessionRotatedTokens).values(row);
}

export async function findRotatedToken(tx: Executor, tokenHash: string) {
  const [reused] = await tx
    .select()
    .from(sessionRotatedTokens)
    .where(eq(sessionRotatedTokens.tokenHash, tokenHash))
    .limit(1);
  return reused ?? null;
}

export async function setRotatedAt(db: Executor, tokenHash: string, at: Date): Promise<void> {
  await db.update(sessionRotatedTokens).set({ rotatedAt: at }).where(eq(sessionRotatedTokens.tokenHash, tokenHash));
}

/** Ends a session if it is live; the row, or null when it had ended already. */
export async function revokeSession(tx: Executor, sessionId: string, reason: string, now: Date) {
  const [victim] = await tx
    .update(sessions)
    .set({ revokedAt: now, revokeReason: reason })
    .where(and(eq(sessions.id, sessionId), isNull(sessions.revokedAt)))
    .returning();
  return victim ?? null;
}

export async function partnerOfOrg(tx: Executor, orgId: string): Promise<string | null> {
  const [org] = await tx
    .select({ partnerId: organizations.partnerId })
    .from(organizations)
    .where(eq(organizations.id, orgId));
  return org?.partnerId ?? null;
}

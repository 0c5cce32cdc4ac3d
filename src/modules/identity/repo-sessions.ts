// Sessions of the identity core: written at sign-in, their refresh token replaced, revoked (part of repo.ts).
import { and, eq, isNull, ne, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { sessions } from '../../db/schema/index.js';

export type SessionRow = typeof sessions.$inferSelect;
/** A further condition on the sessions a revocation ends (e.g. those of one tenant). */
export type SessionFilter = SQL;

// ---- Sessions: one row per sign-in, holding the SHA-256 of the current refresh token.

export interface SessionScope {
  scope: 'partner' | 'organization' | null;
  partnerId: string | null;
  orgId: string | null;
  roleId: string | null;
}

export async function insertSession(
  tx: Executor,
  row: {
    userId: string;
    tokenHash: string;
    ip: string | null;
    userAgent: string | null;
    context: SessionScope;
    mfa: boolean;
    expiresAt: Date;
    absoluteExpiresAt: Date;
    now: Date;
    method: string | null;
    deviceId: string | null;
  },
): Promise<string> {
  const [inserted] = await tx
    .insert(sessions)
    .values({
      userId: row.userId,
      tokenHash: row.tokenHash,
      ipAddress: row.ip,
      userAgent: row.userAgent,
      scope: row.context.scope,
      partnerId: row.context.scope === 'partner' ? row.context.partnerId : null,
      orgId: row.context.scope === 'organization' ? row.context.orgId : null,
      mfa: row.mfa,
      expiresAt: row.expiresAt,
      absoluteExpiresAt: row.absoluteExpiresAt,
      lastUsedAt: row.now,
      authTime: row.now,
      method: row.method,
      deviceId: row.deviceId,
    })
    .returning({ id: sessions.id });
  return inserted!.id;
}

/** Ends every live session of a user, optionally but one, or only those `only` selects; returns how many. */
export async function revokeSessionsOf(
  tx: Executor,
  userId: string,
  reason: string,
  now: Date,
  exceptSessionId?: string,
  only?: SessionFilter,
): Promise<number> {
  const rows = await tx
    .update(sessions)
    .set({ revokedAt: now, revokeReason: reason })
    .where(
      and(
        eq(sessions.userId, userId),
        isNull(sessions.revokedAt),
        exceptSessionId ? ne(sessions.id, exceptSessionId) : undefined,
        only,
      ),
    )
    .returning({ id: sessions.id });
  return rows.length;
}

/** A session's new refresh token (its hash), and whether it carries MFA; renews auth_time. */
export async function replaceSessionToken(
  tx: Executor,
  sessionId: string,
  tokenHash: string,
  now: Date,
  mfa?: boolean,
): Promise<void> {
  await tx
    .update(sessions)
    .set({ tokenHash, ...(mfa === undefined ? {} : { mfa }), lastUsedAt: now, authTime: now })
    .where(eq(sessions.id, sessionId));
}

export async function sessionExpiry(db: Executor, sessionId: string): Promise<Date | undefined> {
  const [row] = await db
    .select({ expiresAt: sessions.expiresAt })
    .from(sessions)
    .where(eq(sessions.id, sessionId))
    .limit(1);
  return row?.expiresAt;
}

export async function findSession(db: Executor, sessionId: string): Promise<SessionRow | undefined> {
  const [row] = await db.select().from(sessions).where(eq(sessions.id, sessionId));
  return row;
}

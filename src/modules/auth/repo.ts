// The auth module's SQL: the only auth file that imports drizzle-orm or the schema.
import { and, eq, isNull } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { sessions } from '../../db/schema/index.js';

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

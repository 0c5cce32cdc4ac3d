// SQL of the MFA routes (issue 12 §3: no route runs SQL).
import { and, eq, isNull } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { sessions } from '../../db/schema/index.js';

/** The session is live and its refresh token hashes to `tokenHash`: the refresh cookie is the calling session's own. */
export async function sessionHoldsRefresh(db: Executor, sessionId: string, tokenHash: string): Promise<boolean> {
  const rows = await db
    .select({ id: sessions.id })
    .from(sessions)
    .where(and(eq(sessions.id, sessionId), eq(sessions.tokenHash, tokenHash), isNull(sessions.revokedAt)));
  return rows.length === 1;
}

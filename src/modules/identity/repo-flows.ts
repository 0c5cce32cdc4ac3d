// Stored identity flows: reset links, invitations and other single-use tokens, kept as their SHA-256 (part of repo.ts).
import { and, desc, eq, gt, inArray, isNotNull, isNull, type SQL, sql } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { authFlows } from '../../db/schema/index.js';
import { randomToken, sha256 } from '../../platform/crypto.js';

// ---- Stored identity flows (STYLE 7): a token handed out once, stored as its SHA-256, consumed atomically.

export type FlowKind = (typeof authFlows.$inferSelect)['kind'];
export type Flow = typeof authFlows.$inferSelect;

export async function createFlow(
  tx: Executor,
  input: {
    kind: FlowKind;
    userId: string | null;
    data?: Record<string, unknown>;
    ttlMs: number;
    now: Date;
    token?: string;
  },
): Promise<{ token: string; flow: Flow }> {
  const token = input.token ?? randomToken();
  const [flow] = await tx
    .insert(authFlows)
    .values({
      kind: input.kind,
      userId: input.userId,
      tokenHash: sha256(token),
      data: input.data ?? {},
      expiresAt: new Date(input.now.getTime() + input.ttlMs),
    })
    .returning();
  return { token, flow: flow! };
}

/** Voids the user's live flows of a kind (one live reset link or invitation at a time). */
export async function voidFlows(tx: Executor, userId: string, kind: FlowKind, now: Date): Promise<void> {
  await tx
    .update(authFlows)
    .set({ consumedAt: now })
    .where(and(eq(authFlows.userId, userId), eq(authFlows.kind, kind), isNull(authFlows.consumedAt)));
}

/** A flow of this kind, not spent and not expired. */
const live = (kind: FlowKind, now: Date) =>
  and(eq(authFlows.kind, kind), isNull(authFlows.consumedAt), gt(authFlows.expiresAt, now));

/** The first flow matching `where` (the newest when asked), or null. */
async function firstFlow(tx: Executor, where: SQL | undefined, newestFirst = false): Promise<Flow | null> {
  const q = tx.select().from(authFlows).where(where);
  const [flow] = await (newestFirst ? q.orderBy(desc(authFlows.createdAt)) : q).limit(1);
  return flow ?? null;
}

/** A live flow for a token, without consuming it. */
export function peekFlow(tx: Executor, kind: FlowKind, token: string, now: Date): Promise<Flow | null> {
  return firstFlow(tx, and(live(kind, now), eq(authFlows.tokenHash, sha256(token))));
}

/** Consumes a live flow (of one kind, or of any of several); exactly one of any number of concurrent callers gets it. */
export async function consumeFlow(
  tx: Executor,
  kind: FlowKind | readonly FlowKind[],
  token: string,
  now: Date,
): Promise<Flow | null> {
  const [flow] = await tx
    .update(authFlows)
    .set({ consumedAt: now })
    .where(
      and(
        eq(authFlows.tokenHash, sha256(token)),
        typeof kind === 'string' ? eq(authFlows.kind, kind) : inArray(authFlows.kind, [...kind]),
        isNull(authFlows.consumedAt),
        gt(authFlows.expiresAt, now),
      ),
    )
    .returning();
  return flow ?? null;
}

/** Counts a failed attempt against a flow; returns the new count (0 if the flow is gone). */
export async function countFlowAttempt(tx: Executor, flowId: string): Promise<number> {
  const [row] = await tx
    .update(authFlows)
    .set({ attempts: sql`${authFlows.attempts} + 1` })
    .where(eq(authFlows.id, flowId))
    .returning({ attempts: authFlows.attempts });
  return row?.attempts ?? 0;
}

/** Names the account a spent flow signed in (a setup link creates it) and what the answer needs besides. */
export async function noteFlowOutcome(
  tx: Executor,
  flowId: string,
  userId: string,
  data: Record<string, unknown> = {},
): Promise<void> {
  await tx
    .update(authFlows)
    .set({ userId, data: sql`${authFlows.data} || ${JSON.stringify(data)}::jsonb` })
    .where(eq(authFlows.id, flowId));
}

/** The answer of the sign-in that spent this flow went out: it cannot be finished again. */
export async function markFlowAnswered(tx: Executor, flowId: string): Promise<void> {
  await tx
    .update(authFlows)
    .set({ data: sql`${authFlows.data} || '{"answered": true}'::jsonb` })
    .where(eq(authFlows.id, flowId));
}

/** A flow spent by a sign-in whose answer never went out, still within its lifetime. */
export async function findUnansweredFlow(tx: Executor, kind: FlowKind, token: string, now: Date): Promise<Flow | null> {
  const [flow] = await tx
    .select()
    .from(authFlows)
    .where(
      and(
        eq(authFlows.tokenHash, sha256(token)),
        eq(authFlows.kind, kind),
        isNotNull(authFlows.consumedAt),
        isNotNull(authFlows.userId),
        gt(authFlows.expiresAt, now),
        sql`not (${authFlows.data} ? 'answered')`,
      ),
    )
    .limit(1);
  return flow ?? null;
}

/** The user's live flow of a kind, newest first (an e-mail change waiting for its proof). */
export function liveFlowOf(tx: Executor, userId: string, kind: FlowKind, now: Date): Promise<Flow | null> {
  return firstFlow(tx, and(live(kind, now), eq(authFlows.userId, userId)), true);
}

/** The live flow of a kind that names one subject in its data (`data[key] = value`), if any. */
export function liveFlowFor(tx: Executor, kind: FlowKind, key: string, value: string, now: Date) {
  return firstFlow(tx, and(live(kind, now), sql`${authFlows.data} ->> ${key} = ${value}`));
}

/** Voids the live flows of a kind that name one subject in their data (`data[key] = value`): one live link per offer. */
export async function voidFlowsFor(tx: Executor, kind: FlowKind, key: string, value: string, now: Date): Promise<void> {
  await tx
    .update(authFlows)
    .set({ consumedAt: now })
    .where(and(eq(authFlows.kind, kind), isNull(authFlows.consumedAt), sql`${authFlows.data} ->> ${key} = ${value}`));
}

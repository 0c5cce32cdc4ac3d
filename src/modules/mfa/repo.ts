// The SQL of the MFA module: the second factors on the user row, the pending setup and SMS flows, the
// sign-in policy's settings and the refresh-cookie binding of a session. Every statement is keyed by the user, the
// flow or the session it names; the caller has established whose they are.
import { and, desc, eq, gt, isNull, lt, or, sql } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { authFlows, organizations, partners, passkeys, sessions, users } from '../../db/schema/index.js';

export type UserRow = typeof users.$inferSelect;
export type MfaMethod = UserRow['mfaMethod'];
type FlowRow = typeof authFlows.$inferSelect;

const bumpCredentials = () => sql`${users.credentialVersion} + 1`;

/** The session is live and its refresh token hashes to `tokenHash`: the refresh cookie is the calling session's own. */
export async function sessionHoldsRefresh(db: Executor, sessionId: string, tokenHash: string): Promise<boolean> {
  const rows = await db
    .select({ id: sessions.id })
    .from(sessions)
    .where(and(eq(sessions.id, sessionId), eq(sessions.tokenHash, tokenHash), isNull(sessions.revokedAt)));
  return rows.length === 1;
}

export async function mfaMethodOf(db: Executor, userId: string): Promise<MfaMethod | undefined> {
  const [row] = await db.select({ method: users.mfaMethod }).from(users).where(eq(users.id, userId));
  return row?.method;
}

export async function mfaEnabledOf(db: Executor, userId: string): Promise<boolean | undefined> {
  const [row] = await db.select({ mfaEnabled: users.mfaEnabled }).from(users).where(eq(users.id, userId));
  return row?.mfaEnabled;
}

export async function hasPasskey(db: Executor, userId: string): Promise<boolean> {
  const [pk] = await db.select({ id: passkeys.id }).from(passkeys).where(eq(passkeys.userId, userId)).limit(1);
  return Boolean(pk);
}

/** Records the TOTP step only if it is newer than the last one accepted; false when it is not (a replay). */
export async function claimTotpStep(db: Executor, userId: string, step: number): Promise<boolean> {
  const rows = await db
    .update(users)
    .set({ mfaLastTotpStep: step })
    .where(and(eq(users.id, userId), or(isNull(users.mfaLastTotpStep), lt(users.mfaLastTotpStep, step))))
    .returning({ id: users.id });
  return rows.length === 1;
}

/** Removes one recovery-code hash atomically (jsonb array minus the element, only if present). */
export async function takeRecoveryCodeHash(db: Executor, userId: string, hash: string): Promise<boolean> {
  const rows = await db
    .update(users)
    .set({ mfaRecoveryCodes: sql`${users.mfaRecoveryCodes} - ${hash}::text` })
    .where(and(eq(users.id, userId), sql`${users.mfaRecoveryCodes} ? ${hash}`))
    .returning({ id: users.id });
  return rows.length === 1;
}

export async function storeRecoveryCodeHashes(db: Executor, userId: string, hashes: string[]): Promise<void> {
  await db.update(users).set({ mfaRecoveryCodes: hashes }).where(eq(users.id, userId));
}

/** The account's MFA state after a factor went; off also drops the recovery codes and the last TOTP step. */
export async function storeFactorState(
  db: Executor,
  userId: string,
  state: { mfaEnabled: boolean; mfaMethod: MfaMethod },
  now: Date,
): Promise<void> {
  await db
    .update(users)
    .set({
      mfaEnabled: state.mfaEnabled,
      mfaMethod: state.mfaMethod,
      ...(state.mfaEnabled ? {} : { mfaRecoveryCodes: null, mfaLastTotpStep: null }),
      credentialVersion: bumpCredentials(),
      updatedAt: now,
    })
    .where(eq(users.id, userId));
}

export async function clearFactors(db: Executor, userId: string, now: Date): Promise<void> {
  await db.delete(passkeys).where(eq(passkeys.userId, userId));
  await db
    .update(users)
    .set({
      mfaSecret: null,
      mfaEnabled: false,
      mfaMethod: null,
      mfaRecoveryCodes: null,
      mfaLastTotpStep: null,
      phoneNumber: null,
      phoneVerified: false,
      credentialVersion: bumpCredentials(),
      updatedAt: now,
    })
    .where(eq(users.id, userId));
}

/** The confirmed authenticator app becomes the account's (the step it was confirmed with counts as used). */
export async function storeTotpFactor(
  db: Executor,
  userId: string,
  f: { sealedSecret: string; mfaMethod: NonNullable<MfaMethod>; step: number },
  now: Date,
): Promise<void> {
  await db
    .update(users)
    .set({
      mfaSecret: f.sealedSecret,
      mfaEnabled: true,
      mfaMethod: f.mfaMethod,
      mfaLastTotpStep: f.step,
      credentialVersion: bumpCredentials(),
      updatedAt: now,
    })
    .where(eq(users.id, userId));
}

export async function storeVerifiedPhone(db: Executor, userId: string, phone: string, now: Date): Promise<void> {
  await db
    .update(users)
    .set({ phoneNumber: phone, phoneVerified: true, credentialVersion: bumpCredentials(), updatedAt: now })
    .where(eq(users.id, userId));
}

export async function enableSmsFactor(db: Executor, userId: string, now: Date): Promise<void> {
  await db
    .update(users)
    .set({ mfaEnabled: true, mfaMethod: 'sms', credentialVersion: bumpCredentials(), updatedAt: now })
    .where(eq(users.id, userId));
}

/** The newest unconsumed, unexpired flow of this kind for the user. */
export async function latestLiveFlow(
  db: Executor,
  userId: string,
  kind: FlowRow['kind'],
  now: Date,
): Promise<FlowRow | undefined> {
  const [flow] = await db
    .select()
    .from(authFlows)
    .where(
      and(
        eq(authFlows.userId, userId),
        eq(authFlows.kind, kind),
        isNull(authFlows.consumedAt),
        gt(authFlows.expiresAt, now),
      ),
    )
    .orderBy(desc(authFlows.createdAt))
    .limit(1);
  return flow;
}

/** Consumes the flow if nobody has; true for the one caller that did. */
export async function takeFlowById(db: Executor, flowId: string, now: Date): Promise<boolean> {
  const taken = await db
    .update(authFlows)
    .set({ consumedAt: now })
    .where(and(eq(authFlows.id, flowId), isNull(authFlows.consumedAt)))
    .returning({ id: authFlows.id });
  return taken.length > 0;
}

/** Ends the flow (too many wrong codes), whether or not it was consumed. */
export async function voidFlowById(db: Executor, flowId: string, now: Date): Promise<void> {
  await db.update(authFlows).set({ consumedAt: now }).where(eq(authFlows.id, flowId));
}

/** The stored settings of the sign-in's partner and organisation (either may be absent). */
export async function tenantSettingsOf(
  db: Executor,
  ctx: { partnerId: string | null; orgId: string | null },
): Promise<{ partner: unknown; org: unknown }> {
  const [p] = ctx.partnerId
    ? await db.select({ settings: partners.settings }).from(partners).where(eq(partners.id, ctx.partnerId))
    : [];
  const [o] = ctx.orgId
    ? await db.select({ settings: organizations.settings }).from(organizations).where(eq(organizations.id, ctx.orgId))
    : [];
  return { partner: p?.settings, org: o?.settings };
}

// The account's second factors as stored on the user row; each change bumps credential_version, which voids
// pending login challenges (tempTokens) issued before it.
import { and, eq, isNull, lt, or, sql } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { passkeys, users } from '../../db/schema/index.js';
import type { SecretBox } from '../../platform/secret-box.js';
import { hashRecoveryCode, matchTotp } from './codes.js';

type UserRow = typeof users.$inferSelect;

export const sealTotp = (box: SecretBox, userId: string, secret: string) => box.seal(secret, `totp:${userId}`);
export const openTotp = (box: SecretBox, user: Pick<UserRow, 'id' | 'mfaSecret'>) =>
  user.mfaSecret ? box.open(user.mfaSecret, `totp:${user.id}`) : null;

/**
 * Accepts a TOTP code once: the step is recorded only if it is newer than the last one accepted,
 * so the same code (or an older one) cannot be replayed, even by two requests at once.
 */
export async function acceptTotp(
  db: Executor,
  box: SecretBox,
  user: Pick<UserRow, 'id' | 'mfaSecret'>,
  code: string,
  nowMs: number,
): Promise<boolean> {
  const secret = openTotp(box, user);
  if (!secret || !/^\d{6}$/.test(code)) return false;
  const step = matchTotp(secret, code, nowMs);
  if (step === null) return false;
  const rows = await db
    .update(users)
    .set({ mfaLastTotpStep: step })
    .where(and(eq(users.id, user.id), or(isNull(users.mfaLastTotpStep), lt(users.mfaLastTotpStep, step))))
    .returning({ id: users.id });
  return rows.length === 1;
}

/** Consumes one recovery code atomically (jsonb array minus the element, only if present). */
export async function consumeRecoveryCode(db: Executor, userId: string, code: string): Promise<boolean> {
  const h = hashRecoveryCode(code);
  const rows = await db
    .update(users)
    .set({ mfaRecoveryCodes: sql`${users.mfaRecoveryCodes} - ${h}::text` })
    .where(and(eq(users.id, userId), sql`${users.mfaRecoveryCodes} ? ${h}`))
    .returning({ id: users.id });
  return rows.length === 1;
}

export async function setRecoveryCodes(db: Executor, userId: string, codes: string[]): Promise<void> {
  await db
    .update(users)
    .set({ mfaRecoveryCodes: codes.map(hashRecoveryCode) })
    .where(eq(users.id, userId));
}

/** What remains after a factor is removed: the primary method falls back to another enrolled factor. */
export async function recomputeFactors(
  db: Executor,
  userId: string,
  now: Date,
): Promise<{ mfaEnabled: boolean; mfaMethod: UserRow['mfaMethod'] }> {
  const [u] = await db.select().from(users).where(eq(users.id, userId));
  const [pk] = await db.select({ id: passkeys.id }).from(passkeys).where(eq(passkeys.userId, userId)).limit(1);
  const backed = {
    totp: Boolean(u?.mfaSecret),
    sms: Boolean(u?.phoneVerified && u.phoneNumber && u.mfaMethod === 'sms'),
    passkey: Boolean(pk),
  };
  // The primary method stays what it was while its factor remains; only a removed primary falls back.
  const current = u?.mfaMethod ?? null;
  const method: UserRow['mfaMethod'] =
    current && backed[current] ? current : backed.totp ? 'totp' : backed.passkey ? 'passkey' : null;
  const enabled = method !== null;
  await db
    .update(users)
    .set({
      mfaEnabled: enabled,
      mfaMethod: method,
      ...(enabled ? {} : { mfaRecoveryCodes: null, mfaLastTotpStep: null }),
      credentialVersion: sql`${users.credentialVersion} + 1`,
      updatedAt: now,
    })
    .where(eq(users.id, userId));
  return { mfaEnabled: enabled, mfaMethod: method };
}

/** Removes every factor: secret, phone, recovery codes and passkeys (MFA disable and admin reset). */
export async function clearAllFactors(db: Executor, userId: string, now: Date): Promise<void> {
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
      credentialVersion: sql`${users.credentialVersion} + 1`,
      updatedAt: now,
    })
    .where(eq(users.id, userId));
}

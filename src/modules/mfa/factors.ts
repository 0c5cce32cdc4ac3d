// The account's second factors as stored on the user row; each change bumps credential_version, which voids
// pending login challenges (tempTokens) issued before it.
import type { Executor } from '../../db/connect.js';
import { openAs, sealAs } from '../../db/sealed-catalogue.js';
import type { SecretBox } from '../../platform/secret-box.js';
import { hashRecoveryCode, matchTotp } from './codes.js';
import {
  claimTotpStep,
  clearFactors,
  hasPasskey,
  storeFactorState,
  storeRecoveryCodeHashes,
  takeRecoveryCodeHash,
  type UserRow,
} from './repo.js';
import { findUser } from '../identity/index.js';

export const sealTotp = (box: SecretBox, userId: string, secret: string) => sealAs(box, 'totpSecret', secret, userId);
export const openTotp = (box: SecretBox, user: Pick<UserRow, 'id' | 'mfaSecret'>) =>
  user.mfaSecret ? openAs(box, 'totpSecret', user.mfaSecret, user.id) : null;

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
  return claimTotpStep(db, user.id, step);
}

/** Consumes one recovery code atomically (jsonb array minus the element, only if present). */
export async function consumeRecoveryCode(db: Executor, userId: string, code: string): Promise<boolean> {
  return takeRecoveryCodeHash(db, userId, hashRecoveryCode(code));
}

export async function setRecoveryCodes(db: Executor, userId: string, codes: string[]): Promise<void> {
  await storeRecoveryCodeHashes(db, userId, codes.map(hashRecoveryCode));
}

/** What remains after a factor is removed: the primary method falls back to another enrolled factor. */
export async function recomputeFactors(
  db: Executor,
  userId: string,
  now: Date,
): Promise<{ mfaEnabled: boolean; mfaMethod: UserRow['mfaMethod'] }> {
  const u = await findUser(db, userId);
  const backed = {
    totp: Boolean(u?.mfaSecret),
    sms: Boolean(u?.phoneVerified && u.phoneNumber && u.mfaMethod === 'sms'),
    passkey: await hasPasskey(db, userId),
  };
  // The primary method stays what it was while its factor remains; only a removed primary falls back.
  const current = u?.mfaMethod ?? null;
  const method: UserRow['mfaMethod'] =
    current && backed[current] ? current : backed.totp ? 'totp' : backed.passkey ? 'passkey' : null;
  const enabled = method !== null;
  await storeFactorState(db, userId, { mfaEnabled: enabled, mfaMethod: method }, now);
  return { mfaEnabled: enabled, mfaMethod: method };
}

/** Removes every factor: secret, phone, recovery codes and passkeys (MFA disable and admin reset). */
export async function clearAllFactors(db: Executor, userId: string, now: Date): Promise<void> {
  await clearFactors(db, userId, now);
}

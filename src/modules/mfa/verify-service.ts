// Completing a sign-in with the second factor: TOTP, the SMS code, or a recovery code.
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import type { AuditRequestMeta } from '../audit/index.js';
import { startSession, type IssuedSession } from '../identity/index.js';
import { looksLikeRecoveryCode } from './codes.js';
import { acceptTotp, consumeRecoveryCode } from './factors.js';
import { failedAttempt, pendingLogin, takePendingLogin, type PendingLogin } from './login-flow.js';
import { acceptLoginSms } from './sms-service.js';

const WRONG_CODE = Symbol('wrong code');

/** Which factor the code satisfies, spending it (TOTP step, SMS code, recovery code) in `tx`; null when none. */
async function spendFactor(deps: Deps, tx: Executor, pending: PendingLogin, code: string): Promise<string | null> {
  const { user } = pending;
  if (/^\d{6}$/.test(code)) {
    if (user.mfaSecret && (await acceptTotp(tx, deps.box, user, code, deps.clock.now().getTime()))) return 'totp';
    if (user.mfaMethod === 'sms' && (await acceptLoginSms(deps, tx, user.id, pending.flow.id, code))) return 'sms';
    return null;
  }
  if (looksLikeRecoveryCode(code) && (await consumeRecoveryCode(tx, user.id, code))) return 'recovery_code';
  return null;
}

export async function verifyLoginCode(
  deps: Deps,
  tempToken: string,
  code: string,
  meta: AuditRequestMeta,
): Promise<IssuedSession> {
  const pending = await pendingLogin(deps, tempToken);
  const { user } = pending;
  await deps.limits.enforce('mfaVerify', user.id);
  // The tempToken is taken before the code is spent, in one transaction: of concurrent verifications only the one
  // holding the tempToken spends anything, and a wrong code rolls the tempToken back for the next attempt.
  const issued = await deps.db
    .transaction(async (tx) => {
      await takePendingLogin(tx, deps, tempToken);
      const method = await spendFactor(deps, tx, pending, code);
      if (!method) throw WRONG_CODE;
      return startSession(deps, tx, user, pending.context, { mfa: true, method: `password+${method}`, meta });
    })
    .catch((err: unknown) => {
      if (err === WRONG_CODE) return null;
      throw err;
    });
  return issued ?? failedAttempt(deps, pending, tempToken, meta);
}

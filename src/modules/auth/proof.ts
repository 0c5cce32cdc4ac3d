// The account proves itself outside a password sign-in (confirming an SSO link, leaving the organisation an SSO
// session began in): its password, and its second factor when it has one (TOTP or a recovery code).
import type { Deps } from '../../deps.js';
import { acceptTotp, consumeRecoveryCode, looksLikeRecoveryCode } from '../mfa/index.js';
import { type UserRow, verifyPassword } from '../identity/index.js';

/** null when the proof holds; otherwise the code to answer. Attempts count against the per-user limits. */
export async function proveAccount(
  deps: Deps,
  user: UserRow,
  password: string,
  code: string | undefined,
): Promise<'invalid_credentials' | 'invalid_mfa_code' | 'mfa_code_required' | null> {
  await deps.limits.enforce('passwordRecheck', user.id);
  if (!user.passwordHash || !(await verifyPassword(user.passwordHash, password))) return 'invalid_credentials';
  if (!deps.config.enable2fa || !user.mfaEnabled) return null;
  if (code === undefined) return 'mfa_code_required';
  await deps.limits.enforce('mfaVerify', user.id);
  const ok = looksLikeRecoveryCode(code)
    ? await consumeRecoveryCode(deps.db, user.id, code)
    : await acceptTotp(deps.db, deps.box, user, code.trim(), deps.clock.now().getTime());
  return ok ? null : 'invalid_mfa_code';
}

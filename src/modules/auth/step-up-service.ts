// Proofs of presence made by a signed-in user: step-up (renews the session's auth_time) and going passwordless.
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { Deps } from '../../deps.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { stepUpMethods, type StepUpMethod } from '../../http/step-up.js';
import type { AuditRequestMeta } from '../audit/index.js';
import { acceptStepUpSms, acceptTotp } from '../mfa/index.js';
import { advanceCounter, verifyAssertion, type VerifiedAssertion } from '../passkeys/index.js';
import { findUser, lockUser, verifyPassword } from '../identity/index.js';
import { passkeyCount, removePasswordHash, renewAuthTime } from './repo.js';

export interface ProofInput {
  password?: string;
  code?: string;
  credential?: Record<string, unknown>;
}

type ProofKind = 'password' | 'code' | 'passkey';
const kindOf = (input: ProofInput): ProofKind =>
  input.password !== undefined ? 'password' : input.code !== undefined ? 'code' : 'passkey';

/**
 * Checks one proof against the account. A TOTP step, an SMS code or a passkey counter is spent here (in `db`), so a
 * proof works once; a passkey's counter is advanced by the caller inside its own transaction (returned as
 * `assertion`). A six-digit code is the step-up SMS code of this session when one was sent and `sms` is accepted,
 * else a TOTP code.
 */
async function checkProof(
  deps: Deps,
  p: Principal,
  input: ProofInput,
  accepted: readonly StepUpMethod[],
): Promise<{ method: StepUpMethod; assertion?: VerifiedAssertion }> {
  const kind = kindOf(input);
  const user = await findUser(deps.db, p.userId);
  if (!user) throw new AppError('unauthenticated');
  if (kind === 'password') {
    await deps.limits.enforce('passwordRecheck', p.userId);
    if (!(await verifyPassword(user.passwordHash, input.password!)))
      throw new AppError('invalid_credentials', 'The password is not correct.', {}, 400);
    return { method: 'password' };
  }
  await deps.limits.enforce('mfaVerify', p.userId);
  if (kind === 'code') {
    if (accepted.includes('sms') && (await acceptStepUpSms(deps, p, input.code!))) return { method: 'sms' };
    if (
      accepted.includes('totp') &&
      (await acceptTotp(deps.db, deps.box, user, input.code!, deps.clock.now().getTime()))
    )
      return { method: 'totp' };
    throw new AppError('invalid_mfa_code');
  }
  const assertion = await verifyAssertion(
    deps,
    'webauthn_reauth',
    input.credential as unknown as AuthenticationResponseJSON,
    p.userId,
  );
  return { method: 'passkey', assertion };
}

/** POST /auth/step-up: one accepted proof renews auth_time on the session row and in a fresh access token. */
export async function stepUp(deps: Deps, p: Principal, input: ProofInput, meta: AuditRequestMeta) {
  const methods = await stepUpMethods(deps, p);
  const kind = kindOf(input);
  const fits = kind === 'code' ? methods.includes('totp') || methods.includes('sms') : methods.includes(kind);
  if (!fits)
    throw new AppError('mfa_method_not_allowed', `Step-up on this account accepts: ${methods.join(', ')}.`, {
      methods,
    });
  const proof = await checkProof(deps, p, input, methods);
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    if (proof.assertion) await advanceCounter(tx, proof.assertion, now);
    if (!(await renewAuthTime(tx, p.sessionId, now, true, proof.method)))
      throw new AppError('unauthenticated', 'The session has ended; sign in again.');
    await deps.audit.record(
      tx,
      {
        action: 'auth.step_up',
        actor: { userId: p.userId, email: p.email },
        partnerId: p.partnerId,
        orgId: p.orgId,
        resourceType: 'session',
        resourceId: p.sessionId,
        details: { method: proof.method },
      },
      meta,
    );
  });
  const accessToken = await deps.tokens.sign({
    sub: p.userId,
    sid: p.sessionId,
    scope: p.tenantKind,
    partnerId: p.partnerId,
    orgId: p.orgId,
    roleId: p.roleId,
    mfa: p.mfa,
    authTime: now,
  });
  return {
    accessToken,
    tokenType: 'Bearer' as const,
    expiresIn: deps.config.accessTokenTtl,
    authTime: now.toISOString(),
  };
}

/**
 * DELETE /auth/password: the account signs in with passkeys from now on. Needs a second-factor proof (a code or a
 * passkey, never the password being removed) and a way back in: two passkeys, or a passkey and another factor.
 * The organisation's allowed methods count: a factor the policy forbids is no way in.
 */
export async function removePassword(
  deps: Deps,
  p: Principal,
  input: ProofInput,
  meta: AuditRequestMeta,
): Promise<void> {
  if (!deps.config.enable2fa) throw new AppError('last_sign_in_method', 'Passkeys are turned off on this service.');
  if (input.password !== undefined)
    throw new AppError('validation_failed', 'Prove presence with a code or a passkey.', {
      details: { fieldErrors: { password: ['not accepted here'] }, formErrors: [] },
    });
  // A code here is a TOTP code: the password goes, so the way back in must not hang on a phone number alone.
  const proof = await checkProof(deps, p, input, ['totp', 'passkey']);
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    // Serialises against a concurrent passkey deletion or factor change of the same account.
    await lockUser(tx, p.userId);
    const user = await findUser(tx, p.userId);
    if (!user?.passwordHash) throw new AppError('conflict', 'This account has no password.');
    const allowed = p.security.allowedMfaMethods;
    const keys = await passkeyCount(tx, p.userId);
    const passkeys = allowed.passkey ? keys : 0;
    const otherFactor =
      !p.security.phishingResistantOnly &&
      ((allowed.totp && Boolean(user.mfaSecret)) || (allowed.sms && user.mfaMethod === 'sms' && user.phoneVerified));
    if (passkeys === 0 || (passkeys < 2 && !otherFactor))
      throw new AppError('last_sign_in_method', undefined, { passkeys, otherFactor });
    if (proof.assertion) await advanceCounter(tx, proof.assertion, now);
    await removePasswordHash(tx, p.userId, now);
    await renewAuthTime(tx, p.sessionId, now, false, proof.method);
    await deps.audit.record(
      tx,
      {
        action: 'auth.password.remove',
        actor: { userId: p.userId, email: p.email },
        partnerId: p.partnerId,
        orgId: p.orgId,
        resourceType: 'user',
        resourceId: p.userId,
        details: { method: proof.method },
      },
      meta,
    );
  });
}

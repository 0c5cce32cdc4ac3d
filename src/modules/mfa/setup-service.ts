// TOTP enrolment, confirmation, recovery-code rotation and MFA disable.
import { openAs, sealAs } from '../../db/sealed-catalogue.js';
import type { Deps } from '../../deps.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { sha256 } from '../../platform/crypto.js';
import type { AuditRequestMeta } from '../audit/index.js';
import {
  createFlow,
  voidFlows,
  verifyPassword,
  revokeUserSessions,
  rotateCallerSession,
  type IssuedSession,
  findUser,
} from '../identity/index.js';
import { matchTotp, newRecoveryCodes, newTotpSecret, qrDataUrl, totpFor } from './codes.js';
import { acceptTotp, clearAllFactors, consumeRecoveryCode, sealTotp, setRecoveryCodes } from './factors.js';
import { latestLiveFlow, mfaEnabledOf, sessionHoldsRefresh, storeTotpFactor, takeFlowById } from './repo.js';

export const SETUP_TTL_MS = 10 * 60 * 1000;

const actor = (p: Principal) => ({ userId: p.userId, email: p.email });

export function assertMethodAllowed(p: Principal, method: 'totp' | 'sms' | 'passkey') {
  if (p.security.allowedMfaMethods[method]) return;
  throw method === 'sms' ? new AppError('sms_not_allowed') : new AppError('mfa_method_not_allowed');
}

/** Starts (or restarts) a TOTP enrolment: a pending secret and ten recovery codes, valid 10 minutes. */
export async function startTotpSetup(deps: Deps, p: Principal) {
  assertMethodAllowed(p, 'totp');
  const user = await findUser(deps.db, p.userId);
  if (!user) throw new AppError('unauthenticated');
  if (user.mfaSecret) throw new AppError('mfa_already_enabled', 'An authenticator app is already enrolled.');
  const secret = newTotpSecret();
  const recoveryCodes = newRecoveryCodes();
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    await voidFlows(tx, user.id, 'mfa_setup', now);
    await createFlow(tx, {
      kind: 'mfa_setup',
      userId: user.id,
      data: {
        secret: sealAs(deps.box, 'totpSetupSecret', secret, user.id),
        recoveryCodes: sealAs(deps.box, 'totpSetupRecoveryCodes', JSON.stringify(recoveryCodes), user.id),
      },
      ttlMs: SETUP_TTL_MS,
      now,
    });
  });
  const otpAuthUrl = totpFor(secret, user.email).toString();
  return { secret, otpAuthUrl, qrCodeDataUrl: await qrDataUrl(otpAuthUrl), recoveryCodes };
}

/**
 * Confirms the pending setup with a code from the app: the factor becomes the account's, every other session
 * ends, and the caller's session is replaced by one that counts as MFA-verified.
 */
export async function confirmTotpSetup(
  deps: Deps,
  p: Principal,
  code: string,
  meta: AuditRequestMeta,
): Promise<{ issued: IssuedSession; recoveryCodes: string[] }> {
  await deps.limits.enforce('mfaVerify', p.userId);
  const now = deps.clock.now();
  const pending = await latestLiveFlow(deps.db, p.userId, 'mfa_setup', now);
  if (!pending) throw new AppError('invalid_mfa_setup');
  const data = pending.data as { secret: string; recoveryCodes: string };
  const secret = openAs(deps.box, 'totpSetupSecret', data.secret, p.userId);
  const recoveryCodes = JSON.parse(
    openAs(deps.box, 'totpSetupRecoveryCodes', data.recoveryCodes, p.userId),
  ) as string[];
  const step = /^\d{6}$/.test(code) ? matchTotp(secret, code, now.getTime()) : null;
  if (step === null) {
    // A wrong code at enrolment is a failed second-factor proof like one at sign-in: audited, and counted (metrics).
    await deps.db.transaction((tx) =>
      deps.audit.record(
        tx,
        {
          action: 'auth.mfa.setup.failed',
          result: 'denied',
          actor: actor(p),
          partnerId: p.partnerId,
          orgId: p.orgId,
          resourceType: 'user',
          resourceId: p.userId,
          details: { method: 'totp', reason: 'invalid_mfa_code' },
        },
        meta,
      ),
    );
    throw new AppError('invalid_mfa_code');
  }
  const issued = await deps.db.transaction(async (tx) => {
    if (!(await takeFlowById(tx, pending.id, now))) throw new AppError('invalid_mfa_setup');
    const user = await findUser(tx, p.userId);
    await storeTotpFactor(
      tx,
      p.userId,
      {
        sealedSecret: sealTotp(deps.box, p.userId, secret),
        mfaMethod: user?.mfaMethod && user.mfaMethod !== 'passkey' ? user.mfaMethod : 'totp',
        step,
      },
      now,
    );
    await setRecoveryCodes(tx, p.userId, recoveryCodes);
    await revokeUserSessions(deps, tx, p.userId, 'mfa_enabled', p.sessionId);
    await deps.audit.record(
      tx,
      {
        action: 'auth.mfa.setup',
        actor: actor(p),
        partnerId: p.partnerId,
        orgId: p.orgId,
        resourceType: 'user',
        resourceId: p.userId,
        details: { method: 'totp' },
      },
      meta,
    );
    const s = await rotateCallerSession(deps, tx, p, true);
    return { userId: p.userId, sessionId: s.sessionId, accessToken: s.accessToken, refreshToken: s.refreshToken };
  });
  return { issued, recoveryCodes };
}

/** A fresh set of ten codes; every earlier code stops working at once. */
export async function rotateRecoveryCodes(deps: Deps, p: Principal, meta: AuditRequestMeta): Promise<string[]> {
  const codes = newRecoveryCodes();
  await deps.db.transaction(async (tx) => {
    if (!(await mfaEnabledOf(tx, p.userId))) throw new AppError('conflict', 'MFA is not enabled.');
    await setRecoveryCodes(tx, p.userId, codes);
    await deps.audit.record(
      tx,
      {
        action: 'auth.mfa.recovery_codes.rotate',
        actor: actor(p),
        partnerId: p.partnerId,
        orgId: p.orgId,
        resourceType: 'user',
        resourceId: p.userId,
      },
      meta,
    );
  });
  return codes;
}

/**
 * Spec 5.4: password and a current code; clears every factor, revokes every other session and replaces the
 * calling one. Refused when a policy requires MFA (403) or when no refresh cookie can carry the new session (428):
 * `refreshToken` is the request's refresh cookie, which must be the calling session's own.
 */
export async function disableMfa(
  deps: Deps,
  p: Principal,
  input: { currentPassword: string; code: string },
  refreshToken: string | undefined,
  meta: AuditRequestMeta,
): Promise<IssuedSession> {
  const sessionBound = refreshToken ? await sessionHoldsRefresh(deps.db, p.sessionId, sha256(refreshToken)) : false;
  if (p.security.requireMfa) throw new AppError('org_requires_mfa');
  if (!sessionBound) throw new AppError('session_binding_required');
  await deps.limits.enforce('passwordRecheck', p.userId);
  const user = await findUser(deps.db, p.userId);
  if (!user?.mfaEnabled) throw new AppError('conflict', 'MFA is not enabled.');
  if (!(await verifyPassword(user.passwordHash, input.currentPassword)))
    throw new AppError('invalid_credentials', 'The current password is not correct.', {}, 400);
  await deps.limits.enforce('mfaVerify', p.userId);
  const now = deps.clock.now();
  const codeOk =
    (await acceptTotp(deps.db, deps.box, user, input.code, now.getTime())) ||
    (await consumeRecoveryCode(deps.db, user.id, input.code));
  if (!codeOk) throw new AppError('invalid_mfa_code');
  return deps.db.transaction(async (tx) => {
    await clearAllFactors(tx, p.userId, now);
    await revokeUserSessions(deps, tx, p.userId, 'mfa_disabled', p.sessionId);
    await deps.audit.record(
      tx,
      {
        action: 'auth.mfa.disable',
        actor: actor(p),
        partnerId: p.partnerId,
        orgId: p.orgId,
        resourceType: 'user',
        resourceId: p.userId,
        details: { previousMethod: user.mfaMethod },
      },
      meta,
    );
    const s = await rotateCallerSession(deps, tx, p, false);
    return { userId: p.userId, sessionId: s.sessionId, accessToken: s.accessToken, refreshToken: s.refreshToken };
  });
}

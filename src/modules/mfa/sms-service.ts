// Phone verification, the SMS factor and one-time SMS codes, each with its rate limit.
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import { effectiveSecurity } from '../../access/settings.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import type { AuditRequestMeta } from '../audit/index.js';
import {
  countFlowAttempt,
  createFlow,
  voidFlows,
  revokeUserSessions,
  rotateCallerSession,
  type IssuedSession,
  findUser,
} from '../identity/index.js';
import { hashSmsCode, newRecoveryCodes, newSmsCode, randomSalt } from './codes.js';
import { setRecoveryCodes } from './factors.js';
import { MAX_CODE_ATTEMPTS, pendingLogin } from './login-flow.js';
import {
  enableSmsFactor,
  latestLiveFlow,
  mfaMethodOf,
  storeVerifiedPhone,
  takeFlowById,
  tenantSettingsOf,
  type UserRow,
  voidFlowById,
} from './repo.js';
import { assertMethodAllowed } from './setup-service.js';

const CODE_TTL_MS = 10 * 60 * 1000;
const LOGIN_CODE_TTL_MS = 5 * 60 * 1000;

/**
 * E.164 with a real numbering plan behind it (libphonenumber's full metadata). A refusal is a validation failure of
 * the body field (400 validation_failed naming the field), like any other malformed field.
 */
export async function normalisePhone(input: string, field = 'phoneNumber'): Promise<string> {
  // The full metadata (~10 MB, ~0.1 s) is loaded with the first phone number, not at start.
  const { parsePhoneNumberFromString } = await import('libphonenumber-js/max');
  const parsed = parsePhoneNumberFromString(input);
  if (!parsed?.isValid() || parsed.number !== input.replace(/[\s()-]/g, '')) {
    const reason = 'Not a valid E.164 phone number (+ and country code, assigned in its numbering plan)';
    throw new AppError('validation_failed', 'The phone number is not a valid E.164 number.', {
      details: { fieldErrors: { [field]: [reason] }, formErrors: [] },
    });
  }
  return parsed.number;
}

async function sendCode(
  deps: Deps,
  tx: Executor,
  input: { kind: 'phone_verify' | 'sms_login'; userId: string; phone: string; purpose: string; ttlMs: number },
) {
  const code = newSmsCode();
  const salt = randomSalt();
  const now = deps.clock.now();
  await voidFlows(tx, input.userId, input.kind, now);
  await createFlow(tx, {
    kind: input.kind,
    userId: input.userId,
    data: { phone: input.phone, salt, codeHash: hashSmsCode(salt, code), purpose: input.purpose },
    ttlMs: input.ttlMs,
    now,
  });
  return code;
}

/**
 * Checks a code against the user's live flow of that kind, consuming it if right. With `countWrong`, wrong codes
 * count and five void the flow; without it (inside a sign-in transaction) the caller counts the failure itself.
 */
async function checkCode(
  deps: Deps,
  db: Executor,
  kind: 'phone_verify' | 'sms_login',
  userId: string,
  code: string,
  purpose: string,
  countWrong = true,
) {
  const now = deps.clock.now();
  const flow = await latestLiveFlow(db, userId, kind, now);
  const data = flow?.data as { phone: string; salt: string; codeHash: string; purpose: string } | undefined;
  if (!flow || !data || data.purpose !== purpose) return null;
  if (hashSmsCode(data.salt, code) !== data.codeHash) {
    if (countWrong && (await countFlowAttempt(db, flow.id)) >= MAX_CODE_ATTEMPTS) await voidFlowById(db, flow.id, now);
    return null;
  }
  return (await takeFlowById(db, flow.id, now)) ? data.phone : null;
}

export async function startPhoneVerification(
  deps: Deps,
  p: Principal,
  phoneNumber: string,
): Promise<{ success: true; phoneLast4: string }> {
  const phone = await normalisePhone(phoneNumber);
  await deps.limits.enforce('phoneVerify', `phone:${phone}`);
  await deps.limits.enforce('phoneVerify', `user:${p.userId}`);
  const code = await deps.db.transaction((tx) =>
    sendCode(deps, tx, { kind: 'phone_verify', userId: p.userId, phone, purpose: 'verify', ttlMs: CODE_TTL_MS }),
  );
  await deps.sms.send(phone, `Your Gatehouse verification code is ${code}. It expires in 10 minutes.`);
  return { success: true, phoneLast4: phone.slice(-4) };
}

export async function confirmPhone(deps: Deps, p: Principal, code: string, meta: AuditRequestMeta) {
  await deps.limits.enforce('mfaVerify', p.userId);
  const phone = await checkCode(deps, deps.db, 'phone_verify', p.userId, code, 'verify');
  if (!phone) throw new AppError('invalid_mfa_code');
  await deps.db.transaction(async (tx) => {
    const before = await mfaMethodOf(tx, p.userId);
    // A new number replaces the SMS factor's target; the factor itself stays on only if it was on.
    await storeVerifiedPhone(tx, p.userId, phone, deps.clock.now());
    await deps.audit.record(
      tx,
      {
        action: 'auth.phone.verify',
        actor: { userId: p.userId, email: p.email },
        partnerId: p.partnerId,
        orgId: p.orgId,
        resourceType: 'user',
        resourceId: p.userId,
        details: { phoneLast4: phone.slice(-4), smsFactor: before === 'sms' },
      },
      meta,
    );
  });
  return { success: true as const, phoneVerified: true, phoneLast4: phone.slice(-4) };
}

export async function enableSmsMfa(
  deps: Deps,
  p: Principal,
  meta: AuditRequestMeta,
): Promise<{ issued: IssuedSession; recoveryCodes: string[] }> {
  assertMethodAllowed(p, 'sms');
  const user = await findUser(deps.db, p.userId);
  if (!user?.phoneVerified || !user.phoneNumber) throw new AppError('phone_not_verified');
  const recoveryCodes = newRecoveryCodes();
  const now = deps.clock.now();
  const issued = await deps.db.transaction(async (tx) => {
    // Enabling SMS makes it the method offered at sign-in (an enrolled app still accepts its codes).
    await enableSmsFactor(tx, p.userId, now);
    await setRecoveryCodes(tx, p.userId, recoveryCodes);
    await revokeUserSessions(deps, tx, p.userId, 'mfa_enabled', p.sessionId);
    await deps.audit.record(
      tx,
      {
        action: 'auth.mfa.setup',
        actor: { userId: p.userId, email: p.email },
        partnerId: p.partnerId,
        orgId: p.orgId,
        resourceType: 'user',
        resourceId: p.userId,
        details: { method: 'sms' },
      },
      meta,
    );
    const s = await rotateCallerSession(deps, tx, p, true);
    return { userId: p.userId, sessionId: s.sessionId, accessToken: s.accessToken, refreshToken: s.refreshToken };
  });
  return { issued, recoveryCodes };
}

async function smsAllowedFor(db: Executor, ctx: { partnerId: string | null; orgId: string | null }): Promise<boolean> {
  const settings = await tenantSettingsOf(db, ctx);
  return effectiveSecurity(settings.partner, settings.org).allowedMfaMethods.sms;
}

/**
 * A one-time code texted to the account's SMS factor (sign-in or step-up): the factor must exist and the policy allow
 * it; sends are limited per flow (`limitKey`) and per phone number; the code lives 5 minutes and is single-use.
 */
async function textOneTimeCode(
  deps: Deps,
  user: UserRow,
  o: { allowed: () => boolean | Promise<boolean>; limitKey: string; purpose: string; text: (code: string) => string },
): Promise<{ success: true; phoneLast4: string }> {
  if (!user.phoneVerified || !user.phoneNumber || user.mfaMethod !== 'sms')
    throw new AppError('phone_not_verified', 'This account has no SMS factor.');
  if (!(await o.allowed())) throw new AppError('sms_not_allowed');
  const phone = user.phoneNumber;
  await deps.limits.enforce('smsSend', o.limitKey);
  await deps.limits.enforce('smsSend', `phone:${phone}`);
  const code = await deps.db.transaction((tx) =>
    sendCode(deps, tx, { kind: 'sms_login', userId: user.id, phone, purpose: o.purpose, ttlMs: LOGIN_CODE_TTL_MS }),
  );
  await deps.sms.send(phone, o.text(code));
  return { success: true, phoneLast4: phone.slice(-4) };
}

/** During sign-in: a code to the verified phone, limited per tempToken and per phone number. */
export async function sendLoginSms(deps: Deps, tempToken: string): Promise<{ success: true; phoneLast4: string }> {
  const pending = await pendingLogin(deps, tempToken);
  // A policy switched on after enrolment holds from the next code: an organisation that bans SMS gets none sent.
  return textOneTimeCode(deps, pending.user, {
    allowed: () => smsAllowedFor(deps.db, pending.context),
    limitKey: `temp:${pending.flow.id}`,
    purpose: `login:${pending.flow.id}`,
    text: (code) => `Your Gatehouse sign-in code is ${code}. It expires in 5 minutes.`,
  });
}

/** The SMS code sent for this tempToken, consumed if right (wrong codes count against the tempToken instead). */
export const acceptLoginSms = (deps: Deps, db: Executor, userId: string, loginFlowId: string, code: string) =>
  checkCode(deps, db, 'sms_login', userId, code, `login:${loginFlowId}`, false);

const stepUpPurpose = (sessionId: string) => `stepup:${sessionId}`;

/** Step-up by SMS: a code to the verified phone for this session, limited per session and per phone number. */
export async function sendStepUpSms(deps: Deps, p: Principal): Promise<{ success: true; phoneLast4: string }> {
  if (!deps.config.enable2fa) throw new AppError('not_found', 'Second factors are turned off.');
  const user = await findUser(deps.db, p.userId);
  if (!user) throw new AppError('unauthenticated');
  return textOneTimeCode(deps, user, {
    allowed: () => p.security.allowedMfaMethods.sms && !p.security.phishingResistantOnly,
    limitKey: `stepup:${p.sessionId}`,
    purpose: stepUpPurpose(p.sessionId),
    text: (code) => `Your Gatehouse confirmation code is ${code}. It expires in 5 minutes.`,
  });
}

/** Whether `code` is the live step-up SMS code of this session (consumed if so; five wrong codes void it). */
export async function acceptStepUpSms(deps: Deps, p: Principal, code: string): Promise<boolean> {
  return (await checkCode(deps, deps.db, 'sms_login', p.userId, code, stepUpPurpose(p.sessionId), true)) !== null;
}

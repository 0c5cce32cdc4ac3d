// Password sign-in: every failure looks alike (same 401, similar time).
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import { AppError } from '../../http/errors.js';
import type { AuditRequestMeta } from '../audit/index.js';
import {
  createFlow,
  RESET_TTL_MS,
  resetUrl,
  startSession,
  type IssuedSession,
  mails,
  pickDefault,
  pickPasswordDefault,
  type SessionContext,
  verifyPassword,
  voidFlows,
} from '../identity/index.js';
import { hasPasskey, loginFacts, NO_USER, type LoginMembership, type LoginUser } from './repo.js';

/** At most one "someone is guessing your password" mail per account and credential in this time. */
export const ATTACK_NOTICE_INTERVAL_MS = 24 * 60 * 60 * 1000;
export const LOGIN_MFA_TTL_MS = 5 * 60 * 1000;

export type LoginOutcome =
  | { kind: 'session'; issued: IssuedSession }
  | {
      kind: 'mfa';
      body: {
        mfaRequired: true;
        mfaMethod: 'totp' | 'sms' | 'passkey';
        tempToken: string;
        passkeyAvailable?: true;
        phoneLast4?: string;
      };
    };

const invalid = () => new AppError('invalid_credentials');

/**
 * Throttling that follows the attacker, not the victim (docs/operations.md, "Sign-in throttling"). There is no
 * account lock. One address is held by the per address + email limit (RATE_LIMIT_LOGIN, the route's guard), which
 * touches no other address. Wrong passwords for the account from many addresses (RATE_LIMIT_LOGIN_ACCOUNT counts
 * the addresses, each once per window) mean a distributed guess; while it lasts, a right password from an address the
 * user never signed in from needs one more step: the second factor, or a new password through the link mailed
 * (once) to the user. Addresses the user signed in from before are never held. The key carries the credential
 * version, so a password reset ends the episode.
 */
const accountKey = (user: Pick<LoginUser, 'id' | 'credentialVersion'> | null) =>
  `${user?.id ?? NO_USER}:${user?.credentialVersion ?? 0}`;

async function recordFailure(
  deps: Deps,
  user: LoginUser | null,
  email: string,
  reason: string,
  memberships: LoginMembership[],
  meta: AuditRequestMeta,
  tx: Executor,
) {
  const ctx = pickDefault(memberships);
  await deps.audit.record(
    tx,
    {
      action: 'auth.login.failed',
      result: 'failure',
      actor: { userId: user?.id ?? null, email: user?.email ?? email.slice(0, 255) },
      partnerId: ctx.partnerId,
      orgId: ctx.orgId,
      resourceType: 'user',
      resourceId: user?.id ?? null,
      details: { reason },
    },
    meta,
  );
}

/** The tenant settings of the membership the sign-in lands in (read with the user, for the IP allow-list). */
const settingsOf = (memberships: LoginMembership[], ctx: SessionContext) =>
  memberships.find((m) => m.scope === ctx.scope && m.partnerId === ctx.partnerId && m.orgId === ctx.orgId)?.settings;

export async function login(
  deps: Deps,
  email: string,
  password: string,
  meta: AuditRequestMeta,
): Promise<LoginOutcome> {
  const now = deps.clock.now();
  // One statement whatever the email and password (SSO enforcement, a familiar address, memberships): its cost says
  // nothing about whether the account exists or the password was right.
  const {
    user,
    ssoEnforced: enforced,
    knownAddress: familiar,
    memberships,
  } = await loginFacts(deps.db, email, meta.ip);
  // Always one argon2 verification, against a dummy hash when there is nothing to check.
  const passwordOk = await verifyPassword(user?.passwordHash, password);
  // Looked up for every attempt, known email or not, for the same reason.
  const guessed =
    (await deps.limits.count('loginAccount', accountKey(user))) >=
    Math.max(2, deps.config.rateLimits.loginAccount.limit);
  const secondFactor = Boolean(user && deps.config.enable2fa && user.mfaEnabled);

  const refusal = !user
    ? 'unknown_email'
    : user.status !== 'active'
      ? `user_${user.status}`
      : !user.passwordHash
        ? 'no_password'
        : !passwordOk
          ? 'wrong_password'
          : enforced
            ? 'sso_enforced'
            : guessed && !familiar && !secondFactor
              ? 'new_address_during_guessing'
              : null;

  if (refusal) {
    let underGuessing = guessed;
    // Each address counts once per window, so no single address, however busy, makes a distributed guess.
    const windowMs = deps.config.rateLimits.loginAccount.windowSeconds * 1000;
    if (
      user &&
      refusal === 'wrong_password' &&
      (await deps.store.claim(`loginFailedFrom:${accountKey(user)}:${meta.ip ?? ''}`, windowMs, now.getTime()))
    ) {
      const r = await deps.limits.hit('loginAccount', accountKey(user));
      underGuessing ||= !r.allowed || r.remaining === 0;
    }
    await deps.db.transaction((tx) => recordFailure(deps, user, email, refusal, memberships, meta, tx));
    // Exactly one notice per episode, however many requests see it start (the claim is atomic in the shared store).
    if (
      user &&
      underGuessing &&
      (await deps.store.claim(`loginAttackNotice:${accountKey(user)}`, ATTACK_NOTICE_INTERVAL_MS, now.getTime()))
    ) {
      await sendAttackNotice(deps, user, memberships, meta);
    }
    throw invalid();
  }

  const u = user!;
  // Memberships held by an enforcing provider are reached through SSO only: a password lands in one of the others.
  const ctx = pickPasswordDefault(memberships);
  if (deps.config.enable2fa && u.mfaEnabled) return { kind: 'mfa', body: await startMfaChallenge(deps, u, ctx) };
  const settings = settingsOf(memberships, ctx) ?? null;
  const issued = await deps.db.transaction((tx) =>
    startSession(deps, tx, u, ctx, { mfa: false, method: 'password', meta, settings }),
  );
  return { kind: 'session', issued };
}

/** The pending second step: a tempToken bound to the user's credential version (a change voids it). */
async function startMfaChallenge(deps: Deps, user: LoginUser, ctx: SessionContext) {
  const withPasskey = await hasPasskey(deps.db, user.id);
  const { token } = await createFlow(deps.db, {
    kind: 'login_mfa',
    userId: user.id,
    data: { context: ctx, credentialVersion: user.credentialVersion },
    ttlMs: LOGIN_MFA_TTL_MS,
    now: deps.clock.now(),
  });
  const method = user.mfaMethod ?? (withPasskey ? 'passkey' : 'totp');
  return {
    mfaRequired: true as const,
    mfaMethod: method,
    tempToken: token,
    ...(withPasskey ? { passkeyAvailable: true as const } : {}),
    ...(method === 'sms' && user.phoneNumber ? { phoneLast4: user.phoneNumber.slice(-4) } : {}),
  };
}

/** The start of a guessing episode: audited (which the lockout metric counts) and the user mailed, together. */
async function sendAttackNotice(
  deps: Deps,
  user: Pick<LoginUser, 'id' | 'email'>,
  memberships: LoginMembership[],
  meta: AuditRequestMeta,
) {
  const now = deps.clock.now();
  const ctx = pickDefault(memberships);
  await deps.db.transaction(async (tx) => {
    await deps.audit.record(
      tx,
      {
        action: 'auth.login.guessing_detected',
        result: 'failure',
        actor: { userId: user.id, email: user.email },
        partnerId: ctx.partnerId,
        orgId: ctx.orgId,
        resourceType: 'user',
        resourceId: user.id,
        details: { reason: 'distributed_guess', addresses: deps.config.rateLimits.loginAccount.limit },
      },
      meta,
    );
    await voidFlows(tx, user.id, 'password_reset', now);
    const { token } = await createFlow(tx, { kind: 'password_reset', userId: user.id, ttlMs: RESET_TTL_MS, now });
    await deps.outbox.enqueue(tx, mails.signInUnderAttack(user.email, { url: resetUrl(deps, token) }));
  });
  deps.outbox.kick();
}

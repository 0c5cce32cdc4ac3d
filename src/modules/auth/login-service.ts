// Password sign-in (spec 3.3, CONTRACT 3): every failure looks alike (same 401, similar time).
import { and, eq, sql } from 'drizzle-orm';
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import { passkeys, sessions, users } from '../../db/schema/index.js';
import { AppError } from '../../http/errors.js';
import type { AuditRequestMeta } from '../audit/writer.js';
import { enforceSignInAddress } from '../access/ip-policy.js';
import { createFlow, voidFlows } from './flows.js';
import { mails } from './mail-templates.js';
import { listMemberships, markMembershipUsed, pickDefault, ssoEnforcedFor } from './memberships.js';
import { verifyPassword } from './passwords.js';
import { createSession, type SessionContext } from './sessions.js';
import type { IssuedSession } from './token-response.js';

/** At most one "someone is guessing your password" mail per account and credential in this time. */
export const ATTACK_NOTICE_INTERVAL_MS = 24 * 60 * 60 * 1000;
export const LOGIN_MFA_TTL_MS = 5 * 60 * 1000;
export const RESET_TTL_MS = 60 * 60 * 1000;

type UserRow = typeof users.$inferSelect;

export type LoginOutcome =
  | { kind: 'session'; issued: IssuedSession }
  | { kind: 'mfa'; body: { mfaRequired: true; mfaMethod: 'totp' | 'sms' | 'passkey'; tempToken: string; passkeyAvailable?: true; phoneLast4?: string } };

const invalid = () => new AppError('invalid_credentials');

export const findUserByEmail = async (db: Executor, email: string) =>
  (await db.select().from(users).where(sql`lower(${users.email}) = lower(${email})`).limit(1))[0] ?? null;

/** Signs a user in to a membership: session row, membership marked used, last login, audit. Inside tx. */
export async function startSession(
  deps: Deps,
  tx: Executor,
  user: Pick<UserRow, 'id' | 'email'>,
  ctx: SessionContext,
  opts: { mfa: boolean; method: string; meta: AuditRequestMeta },
): Promise<IssuedSession> {
  const now = deps.clock.now();
  await enforceSignInAddress(deps, tx, user, ctx, opts.meta);
  const s = await createSession(deps, tx, { userId: user.id, context: ctx, mfa: opts.mfa, ip: opts.meta.ip, userAgent: opts.meta.userAgent, method: opts.method });
  await markMembershipUsed(tx, user.id, ctx, now);
  await tx.update(users).set({ lastLoginAt: now, failedLoginCount: 0, lockedUntil: null }).where(eq(users.id, user.id));
  await deps.audit.record(
    tx,
    {
      action: 'user.login',
      actor: { userId: user.id, email: user.email },
      partnerId: ctx.partnerId,
      orgId: ctx.orgId,
      resourceType: 'session',
      resourceId: s.sessionId,
      details: { method: opts.method, mfa: opts.mfa },
    },
    opts.meta,
  );
  return { userId: user.id, sessionId: s.sessionId, accessToken: s.accessToken, refreshToken: s.refreshToken, signedIn: true };
}

/** Stands in for a user id when there is no user, so an unknown email costs the same queries as a known one. */
const NO_USER = '00000000-0000-0000-0000-000000000000';

/**
 * Throttling that follows the attacker, not the victim (docs/operations.md, "Sign-in throttling"). There is no
 * account lock. One address is held by the per address + email limit (RATE_LIMIT_LOGIN, the route's guard), which
 * touches no other address. Wrong passwords for the account from many addresses (RATE_LIMIT_LOGIN_ACCOUNT counts
 * the addresses, each once per window) mean a distributed guess; while it lasts, a right password from an address the
 * user never signed in from needs one more step: the second factor, or a new password through the link mailed
 * (once) to the user. Addresses the user signed in from before are never held. The key carries the credential
 * version, so a password reset ends the episode.
 */
const accountKey = (user: Pick<UserRow, 'id' | 'credentialVersion'> | null) => `${user?.id ?? NO_USER}:${user?.credentialVersion ?? 0}`;

/** An address the user signed in from successfully before (any session, ended or not, holds its address). */
async function knownAddress(db: Executor, userId: string, ip: string | null): Promise<boolean> {
  if (!ip) return false;
  const [row] = await db.select({ id: sessions.id }).from(sessions).where(and(eq(sessions.userId, userId), eq(sessions.ipAddress, ip))).limit(1);
  return Boolean(row);
}

async function recordFailure(deps: Deps, user: UserRow | null, email: string, reason: string, meta: AuditRequestMeta, tx: Executor) {
  const ctx = pickDefault(await listMemberships(tx, user?.id ?? NO_USER));
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

export async function login(deps: Deps, email: string, password: string, meta: AuditRequestMeta): Promise<LoginOutcome> {
  const now = deps.clock.now();
  const user = await findUserByEmail(deps.db, email);
  // Always one argon2 verification, against a dummy hash when there is nothing to check.
  const passwordOk = await verifyPassword(user?.passwordHash, password);
  // Looked up whatever the password, so its cost says nothing about whether the password was right.
  const enforced = await ssoEnforcedFor(deps.db, user?.id ?? NO_USER);
  // Both looked up for every attempt, known email or not, for the same reason.
  const guessed = (await deps.limits.count('loginAccount', accountKey(user))) >= Math.max(2, deps.config.rateLimits.loginAccount.limit);
  const familiar = await knownAddress(deps.db, user?.id ?? NO_USER, meta.ip);
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
    if (user && refusal === 'wrong_password' && (await deps.store.claim(`loginFailedFrom:${accountKey(user)}:${meta.ip ?? ''}`, windowMs, now.getTime()))) {
      const r = await deps.limits.hit('loginAccount', accountKey(user));
      underGuessing ||= !r.allowed || r.remaining === 0;
    }
    await deps.db.transaction((tx) => recordFailure(deps, user, email, refusal, meta, tx));
    // Exactly one notice per episode, however many requests see it start (the claim is atomic in the shared store).
    if (user && underGuessing && (await deps.store.claim(`loginAttackNotice:${accountKey(user)}`, ATTACK_NOTICE_INTERVAL_MS, now.getTime()))) {
      await sendAttackNotice(deps, user);
    }
    throw invalid();
  }

  const u = user!;
  const ctx = pickDefault(await listMemberships(deps.db, u.id));
  if (deps.config.enable2fa && u.mfaEnabled) return { kind: 'mfa', body: await startMfaChallenge(deps, u, ctx) };
  const issued = await deps.db.transaction((tx) => startSession(deps, tx, u, ctx, { mfa: false, method: 'password', meta }));
  return { kind: 'session', issued };
}

/** The pending second step: a tempToken bound to the user's credential version (a change voids it). */
async function startMfaChallenge(deps: Deps, user: UserRow, ctx: SessionContext) {
  const hasPasskey = (await deps.db.select({ id: passkeys.id }).from(passkeys).where(eq(passkeys.userId, user.id)).limit(1)).length > 0;
  const { token } = await createFlow(deps.db, {
    kind: 'login_mfa',
    userId: user.id,
    data: { context: ctx, credentialVersion: user.credentialVersion },
    ttlMs: LOGIN_MFA_TTL_MS,
    now: deps.clock.now(),
  });
  const method = user.mfaMethod ?? (hasPasskey ? 'passkey' : 'totp');
  return {
    mfaRequired: true as const,
    mfaMethod: method,
    tempToken: token,
    ...(hasPasskey ? { passkeyAvailable: true as const } : {}),
    ...(method === 'sms' && user.phoneNumber ? { phoneLast4: user.phoneNumber.slice(-4) } : {}),
  };
}

async function sendAttackNotice(deps: Deps, user: UserRow) {
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    await voidFlows(tx, user.id, 'password_reset', now);
    const { token } = await createFlow(tx, { kind: 'password_reset', userId: user.id, ttlMs: RESET_TTL_MS, now });
    await deps.outbox.enqueue(tx, mails.signInUnderAttack(user.email, { url: resetUrl(deps, token) }));
  });
  deps.outbox.kick();
}

export const resetUrl = (deps: Deps, token: string) => `${deps.config.appUrl}/reset-password?token=${encodeURIComponent(token)}`;

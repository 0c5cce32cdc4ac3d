// Password sign-in (spec 3.3, CONTRACT 3): every failure looks alike (same 401, similar time).
import { eq, sql } from 'drizzle-orm';
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import { passkeys, users } from '../../db/schema/index.js';
import { AppError } from '../../http/errors.js';
import type { AuditRequestMeta } from '../audit/writer.js';
import { sendInBackground } from '../../platform/mail.js';
import { createFlow, voidFlows } from './flows.js';
import { mails } from './mail-templates.js';
import { listMemberships, markMembershipUsed, pickDefault, ssoEnforcedFor } from './memberships.js';
import { verifyPassword } from './passwords.js';
import { createSession, type SessionContext } from './sessions.js';
import type { IssuedSession } from './token-response.js';

export const LOCKOUT_THRESHOLD = 10;
export const LOCKOUT_MS = 15 * 60 * 1000;
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

  const refusal = !user
    ? 'unknown_email'
    : user.status !== 'active'
      ? `user_${user.status}`
      : !user.passwordHash
        ? 'no_password'
        : user.lockedUntil && user.lockedUntil > now
          ? 'locked'
          : !passwordOk
            ? 'wrong_password'
            : enforced
              ? 'sso_enforced'
              : null;

  if (refusal) {
    let lockedNow = false;
    await deps.db.transaction(async (tx) => {
      if (user && refusal === 'wrong_password') {
        // Atomic count; an expired lock starts a fresh series. Exactly one request crosses the threshold.
        const [row] = await tx
          .update(users)
          .set({
            failedLoginCount: sql`case when ${users.lockedUntil} is not null and ${users.lockedUntil} <= ${now} then 1 else ${users.failedLoginCount} + 1 end`,
            lockedUntil: sql`case when ${users.lockedUntil} is not null and ${users.lockedUntil} <= ${now} then null else ${users.lockedUntil} end`,
          })
          .where(eq(users.id, user.id))
          .returning({ count: users.failedLoginCount });
        if (row && row.count === LOCKOUT_THRESHOLD) {
          await tx.update(users).set({ lockedUntil: new Date(now.getTime() + LOCKOUT_MS) }).where(eq(users.id, user.id));
          lockedNow = true;
        }
      }
      await recordFailure(deps, user, email, lockedNow ? 'locked_now' : refusal, meta, tx);
    });
    if (lockedNow && user) await sendLockNotice(deps, user);
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

async function sendLockNotice(deps: Deps, user: UserRow) {
  const now = deps.clock.now();
  const { token } = await deps.db.transaction(async (tx) => {
    await voidFlows(tx, user.id, 'password_reset', now);
    return createFlow(tx, { kind: 'password_reset', userId: user.id, ttlMs: RESET_TTL_MS, now });
  });
  sendInBackground(deps.mailer, deps.logger, mails.accountLocked(user.email, { minutes: LOCKOUT_MS / 60_000, url: resetUrl(deps, token) }));
}

export const resetUrl = (deps: Deps, token: string) => `${deps.config.appUrl}/reset-password?token=${encodeURIComponent(token)}`;

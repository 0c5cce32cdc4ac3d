// Sessions: one row per sign-in, holding the SHA-256 of the current refresh token.
import type { Executor } from '../../db/connect.js';
import type { Deps } from '../../deps.js';
import { randomToken, sha256 } from '../../platform/crypto.js';
import { insertSession, replaceSessionToken, revokeSessionsOf, type SessionFilter, type SessionScope } from './repo.js';
import { asSystemWithin } from '../../db/row-security.js';

import { ABSOLUTE_SESSION_MS } from '../../access/settings.js';

export { ABSOLUTE_SESSION_MS };

export type SessionContext = SessionScope;

export interface NewSession {
  sessionId: string;
  refreshToken: string;
  accessToken: string;
}

/** A new session's refresh token and lifetimes, from `now`. */
export function newSessionTerms(deps: Pick<Deps, 'config'>, now: Date) {
  const t = now.getTime();
  const absolute = t + ABSOLUTE_SESSION_MS;
  return {
    refreshToken: randomToken(),
    expiresAt: new Date(Math.min(t + deps.config.refreshTokenTtl * 1000, absolute)),
    absoluteExpiresAt: new Date(absolute),
  };
}

/** The access token of a session, for the membership it acts in. */
export const signSessionToken = (
  deps: Pick<Deps, 'tokens'>,
  userId: string,
  sessionId: string,
  context: SessionContext,
  mfa: boolean,
  authTime: Date,
) =>
  deps.tokens.sign({
    sub: userId,
    sid: sessionId,
    scope: context.scope,
    partnerId: context.partnerId,
    orgId: context.orgId,
    roleId: context.roleId,
    mfa,
    authTime,
  });

export async function createSession(
  deps: Pick<Deps, 'clock' | 'config' | 'tokens'>,
  tx: Executor,
  input: {
    userId: string;
    context: SessionContext;
    mfa: boolean;
    ip: string | null;
    userAgent: string | null;
    method?: string;
    deviceId?: string | null;
  },
): Promise<NewSession> {
  // Every sign-in is a proof (password, factor, passkey or the IdP's own sign-in): step-up starts fresh.
  const authTime = deps.clock.now();
  const { refreshToken, expiresAt, absoluteExpiresAt } = newSessionTerms(deps, authTime);
  const sessionId = await insertSession(tx, {
    userId: input.userId,
    tokenHash: sha256(refreshToken),
    ip: input.ip?.slice(0, 45) ?? null,
    userAgent: input.userAgent?.slice(0, 1024) ?? null,
    context: input.context,
    mfa: input.mfa,
    expiresAt,
    absoluteExpiresAt,
    now: authTime,
    method: input.method?.slice(0, 32) ?? null,
    deviceId: input.deviceId ?? null,
  });
  const accessToken = await signSessionToken(deps, input.userId, sessionId, input.context, input.mfa, authTime);
  return { sessionId, refreshToken, accessToken };
}

/** Revokes every live session of a user (logout, password change or reset, disable, MFA reset), optionally but one, or only those `only` selects. */
export async function revokeUserSessions(
  deps: Pick<Deps, 'clock'>,
  tx: Executor,
  userId: string,
  reason: string,
  exceptSessionId?: string,
  only?: SessionFilter,
) {
  // Without a tenant filter the change is account-wide: the account's sessions in every tenant end.
  if (only) return revokeSessionsOf(tx, userId, reason, deps.clock.now(), exceptSessionId, only);
  return asSystemWithin(tx, 'account-wide', () =>
    revokeSessionsOf(tx, userId, reason, deps.clock.now(), exceptSessionId, only),
  );
}

/**
 * Replaces the caller's session credentials in place (new refresh token, new access token) after a change to
 * its factors or password; other sessions are revoked by the caller of this function. Each such change was made
 * with a fresh proof (a code or the password), so it also renews the session's auth_time.
 */
export async function rotateCallerSession(
  deps: Pick<Deps, 'clock' | 'tokens'>,
  tx: Executor,
  principal: {
    userId: string;
    sessionId: string;
    tenantKind: SessionContext['scope'];
    partnerId: string | null;
    orgId: string | null;
    roleId: string | null;
  },
  mfa: boolean,
): Promise<NewSession> {
  const refreshToken = randomToken();
  const now = deps.clock.now();
  await replaceSessionToken(tx, principal.sessionId, sha256(refreshToken), now, mfa);
  const accessToken = await deps.tokens.sign({
    sub: principal.userId,
    sid: principal.sessionId,
    scope: principal.tenantKind,
    partnerId: principal.partnerId,
    orgId: principal.orgId,
    roleId: principal.roleId,
    mfa,
    authTime: now,
  });
  return { sessionId: principal.sessionId, refreshToken, accessToken };
}

// The start of every sign-in (password, second factor, passkey, SSO, invitation, registration), and the reset link.
import type { Tx } from '../../db/connect.js';
import type { Deps } from '../../deps.js';
import { sha256 } from '../../platform/crypto.js';
import { enforceSignInAddress } from '../../http/ip-policy.js';
import type { AuditRequestMeta } from '../audit/index.js';
import { insertSignIn, type UserRow } from './repo.js';
import { newSessionTerms, type SessionContext, signSessionToken } from './sessions.js';
import type { IssuedSession } from './token-response.js';

export const RESET_TTL_MS = 60 * 60 * 1000;

export const resetUrl = (deps: Pick<Deps, 'config'>, token: string) =>
  `${deps.config.appUrl}/reset-password?token=${encodeURIComponent(token)}`;

/**
 * Signs a user in to a membership, inside the sign-in transaction: the address checked against the tenant's
 * allow-list, then one statement for the session row, the membership marked used and the last login, then the audit
 * record. `settings` are the tenant's settings when the caller already read them (password sign-in).
 */
export async function startSession(
  deps: Deps,
  tx: Tx,
  user: Pick<UserRow, 'id' | 'email'>,
  ctx: SessionContext,
  opts: { mfa: boolean; method: string; meta: AuditRequestMeta; settings?: unknown },
): Promise<IssuedSession> {
  // Every sign-in is a proof (password, factor, passkey or the IdP's own sign-in): step-up starts fresh.
  const now = deps.clock.now();
  await enforceSignInAddress(deps, tx, user, ctx, opts.meta, opts.settings);
  const terms = newSessionTerms(deps, now);
  const sessionId = await insertSignIn(deps.db, tx, {
    userId: user.id,
    tokenHash: sha256(terms.refreshToken),
    ip: opts.meta.ip?.slice(0, 45) ?? null,
    userAgent: opts.meta.userAgent?.slice(0, 1024) ?? null,
    context: ctx,
    mfa: opts.mfa,
    expiresAt: terms.expiresAt,
    absoluteExpiresAt: terms.absoluteExpiresAt,
    now,
    method: opts.method.slice(0, 32),
  });
  await deps.audit.record(
    tx,
    {
      action: 'user.login',
      actor: { userId: user.id, email: user.email },
      partnerId: ctx.partnerId,
      orgId: ctx.orgId,
      resourceType: 'session',
      resourceId: sessionId,
      details: { method: opts.method, mfa: opts.mfa },
    },
    opts.meta,
  );
  const accessToken = await signSessionToken(deps, user.id, sessionId, ctx, opts.mfa, now);
  return {
    userId: user.id,
    sessionId,
    accessToken,
    refreshToken: terms.refreshToken,
    signedIn: true,
    expiresAt: terms.expiresAt,
  };
}

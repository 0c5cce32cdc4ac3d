// Forgot, reset and change password.
import type { Deps } from '../../deps.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { randomToken, sha256 } from '../../platform/crypto.js';
import type { AuditRequestMeta } from '../audit/index.js';
import {
  assertStrongPassword,
  consumeFlow,
  createFlow,
  findUser,
  findUserByEmail,
  hashPassword,
  type IssuedSession,
  listMemberships,
  mails,
  markAddressProven,
  peekFlow,
  pickDefault,
  RESET_TTL_MS,
  resetUrl,
  revokeUserSessions,
  setPassword,
  ssoEnforcedFor,
  verifyPassword,
  voidFlows,
} from '../identity/index.js';
import { renewSessionToken } from './repo.js';

/** Always succeeds from the caller's view; sends a link only to an active account that may use a password. */
export async function forgotPassword(deps: Deps, email: string, ip: string): Promise<void> {
  const limit = await deps.limits.hit('forgotPassword', ip);
  if (!limit.allowed) {
    deps.logger.warn({ limit: 'forgotPassword' }, 'forgot-password over its limit: answered 200, nothing sent');
    return;
  }
  const user = await findUserByEmail(deps.db, email);
  if (user?.status !== 'active' || (await ssoEnforcedFor(deps.db, user.id))) return;
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    await voidFlows(tx, user.id, 'password_reset', now);
    const { token } = await createFlow(tx, { kind: 'password_reset', userId: user.id, ttlMs: RESET_TTL_MS, now });
    await deps.outbox.enqueue(tx, mails.passwordReset(user.email, { url: resetUrl(deps, token) }));
  });
  deps.outbox.kick();
}

export async function resetPassword(
  deps: Deps,
  token: string,
  newPassword: string,
  meta: AuditRequestMeta,
): Promise<void> {
  const now = deps.clock.now();
  const pending = await peekFlow(deps.db, 'password_reset', token, now);
  if (!pending?.userId) throw new AppError('invalid_reset_token');
  const user = await findUser(deps.db, pending.userId);
  if (!user || user.status === 'disabled' || (await ssoEnforcedFor(deps.db, user.id)))
    throw new AppError('invalid_reset_token');
  // Strength first, so a weak attempt does not burn the link.
  await assertStrongPassword(newPassword, { email: user.email, name: user.name });
  const newHash = await hashPassword(newPassword);
  await deps.db.transaction(async (tx) => {
    const flow = await consumeFlow(tx, 'password_reset', token, now);
    if (!flow) throw new AppError('invalid_reset_token');
    await setPassword(deps, tx, user.id, newHash);
    // The link was mailed to the account's address: opening it proves the address too.
    if (!user.emailVerified) await markAddressProven(tx, user.id, now);
    const revoked = await revokeUserSessions(deps, tx, user.id, 'password_reset');
    // No session to take the tenant from: the user's default membership, as for a failed login.
    const ctx = pickDefault(await listMemberships(tx, user.id));
    await deps.audit.record(
      tx,
      {
        action: 'auth.password.reset',
        actor: { userId: user.id, email: user.email },
        partnerId: ctx.partnerId,
        orgId: ctx.orgId,
        resourceType: 'user',
        resourceId: user.id,
        details: { sessionsRevoked: revoked },
      },
      meta,
    );
    await deps.outbox.enqueue(tx, mails.passwordChanged(user.email, { url: `${deps.config.appUrl}/forgot-password` }));
  });
  deps.outbox.kick();
}

/** Wrong current password → 400 invalid_credentials (401 only ever means a dead bearer token). */
export async function changePassword(
  deps: Deps,
  principal: Principal,
  input: { currentPassword: string; newPassword: string },
  meta: AuditRequestMeta,
): Promise<IssuedSession> {
  await deps.limits.enforce('passwordRecheck', principal.userId);
  const user = await findUser(deps.db, principal.userId);
  if (!user) throw new AppError('unauthenticated');
  if (!(await verifyPassword(user.passwordHash, input.currentPassword))) {
    throw new AppError('invalid_credentials', 'The current password is not correct.', {}, 400);
  }
  await assertStrongPassword(input.newPassword, { email: user.email, name: user.name });
  if (input.newPassword === input.currentPassword) {
    throw new AppError('weak_password', 'The new password must differ from the current one.', {
      details: { feedback: { warning: 'Same as the current password', suggestions: [] } },
    });
  }
  const newHash = await hashPassword(input.newPassword);
  const refreshToken = randomToken();
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    await setPassword(deps, tx, user.id, newHash);
    await revokeUserSessions(deps, tx, user.id, 'password_change', principal.sessionId);
    // The caller's own session continues under a new refresh token.
    await renewSessionToken(tx, principal.sessionId, sha256(refreshToken), now);
    await deps.audit.record(
      tx,
      {
        action: 'auth.password.change',
        actor: { userId: user.id, email: user.email },
        partnerId: principal.partnerId,
        orgId: principal.orgId,
        resourceType: 'user',
        resourceId: user.id,
      },
      meta,
    );
    await deps.outbox.enqueue(tx, mails.passwordChanged(user.email, { url: `${deps.config.appUrl}/forgot-password` }));
  });
  deps.outbox.kick();
  const accessToken = await deps.tokens.sign({
    sub: user.id,
    sid: principal.sessionId,
    scope: principal.tenantKind,
    partnerId: principal.partnerId,
    orgId: principal.orgId,
    roleId: principal.roleId,
    mfa: principal.mfa,
    authTime: now,
  });
  return { userId: user.id, sessionId: principal.sessionId, accessToken, refreshToken };
}

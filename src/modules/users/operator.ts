// What an operator does from the command line (`gatehouse users ...`) when nobody can sign in to do it: the same
// rules as the admin routes (strength, sessions revoked, last administrator kept), no tenant scope (the operator
// holds the database), audited as the `cli` actor in the tenant of the user's default membership.
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import { AppError, notFound } from '../../http/errors.js';
import type { AuditActor } from '../audit/index.js';
import {
  assertStrongPassword,
  createFlow,
  findUserByEmail,
  hashPassword,
  listMemberships,
  pickDefault,
  RESET_TTL_MS,
  resetUrl,
  revokeUserSessions,
  setPassword,
  voidFlows,
} from '../identity/index.js';
import { clearAllFactors } from '../mfa/index.js';
import { assertNotLastAdmin, partnersAdministeredBy } from './guards.js';
import { mfaStateOf, updateUserRow } from './repo.js';

type OperatorDeps = Pick<Deps, 'db' | 'clock' | 'audit' | 'config'>;

async function userByEmail(deps: OperatorDeps, email: string) {
  const user = await findUserByEmail(deps.db, email);
  if (!user) throw notFound('user');
  return user;
}

async function tenantOf(tx: Executor, userId: string) {
  const ctx = pickDefault(await listMemberships(tx, userId));
  return { partnerId: ctx.partnerId, orgId: ctx.orgId };
}

/** Sets a new password (strength-checked) or, without one, issues a reset link (1 hour) for the user to follow. */
export async function operatorResetPassword(
  deps: OperatorDeps,
  actor: AuditActor,
  email: string,
  newPassword?: string,
) {
  const user = await userByEmail(deps, email);
  if (user.status === 'disabled') throw new AppError('conflict', 'The user is disabled; enable the account first.');
  const now = deps.clock.now();
  if (newPassword !== undefined) {
    await assertStrongPassword(newPassword, { email: user.email, name: user.name });
    const hash = await hashPassword(newPassword);
    const revoked = await deps.db.transaction(async (tx) => {
      await setPassword(deps, tx, user.id, hash);
      await voidFlows(tx, user.id, 'password_reset', now);
      const n = await revokeUserSessions(deps, tx, user.id, 'password_reset');
      await deps.audit.record(
        tx,
        {
          action: 'auth.password.reset',
          actor,
          ...(await tenantOf(tx, user.id)),
          resourceType: 'user',
          resourceId: user.id,
          details: { via: 'cli', sessionsRevoked: n },
        },
        null,
      );
      return n;
    });
    return { userId: user.id, email: user.email, passwordSet: true, sessionsRevoked: revoked };
  }
  const token = await deps.db.transaction(async (tx) => {
    await voidFlows(tx, user.id, 'password_reset', now);
    const flow = await createFlow(tx, { kind: 'password_reset', userId: user.id, ttlMs: RESET_TTL_MS, now });
    await deps.audit.record(
      tx,
      {
        action: 'auth.password.reset_link',
        actor,
        ...(await tenantOf(tx, user.id)),
        resourceType: 'user',
        resourceId: user.id,
        details: { via: 'cli' },
      },
      null,
    );
    return flow.token;
  });
  return {
    userId: user.id,
    email: user.email,
    passwordSet: false,
    resetUrl: resetUrl(deps as Deps, token),
    expiresInSeconds: RESET_TTL_MS / 1000,
  };
}

/** Clears every second factor and ends every session (the user enrols again at next sign-in if policy requires). */
export async function operatorResetMfa(deps: OperatorDeps, actor: AuditActor, email: string) {
  const user = await userByEmail(deps, email);
  const revoked = await deps.db.transaction(async (tx) => {
    const before = await mfaStateOf(tx, user.id);
    await clearAllFactors(tx, user.id, deps.clock.now());
    const n = await revokeUserSessions(deps, tx, user.id, 'mfa_reset');
    await deps.audit.record(
      tx,
      {
        action: 'user.mfa_reset',
        actor,
        ...(await tenantOf(tx, user.id)),
        resourceType: 'user',
        resourceId: user.id,
        details: {
          via: 'cli',
          clearedMethod: before?.mfaMethod ?? null,
          wasEnabled: before?.mfaEnabled ?? false,
          sessionsRevoked: n,
        },
      },
      null,
    );
    return n;
  });
  return { userId: user.id, email: user.email, mfaCleared: true, sessionsRevoked: revoked };
}

/** Disables the account and ends its sessions; the last administrator of a partner is kept (403 last_admin). */
export async function operatorDisable(deps: OperatorDeps, actor: AuditActor, email: string) {
  const user = await userByEmail(deps, email);
  const revoked = await deps.db.transaction(async (tx) => {
    for (const partnerId of await partnersAdministeredBy(tx, user.id)) await assertNotLastAdmin(tx, partnerId, user.id);
    await updateUserRow(tx, user.id, { status: 'disabled', updatedAt: deps.clock.now() });
    const n = await revokeUserSessions(deps, tx, user.id, 'disabled');
    await deps.audit.record(
      tx,
      {
        action: 'user.update',
        actor,
        ...(await tenantOf(tx, user.id)),
        resourceType: 'user',
        resourceId: user.id,
        details: { via: 'cli', changed: ['status'], status: 'disabled', sessionsRevoked: n },
      },
      null,
    );
    return n;
  });
  return { userId: user.id, email: user.email, status: 'disabled' as const, sessionsRevoked: revoked };
}

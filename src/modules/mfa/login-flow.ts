// The pending second step of a sign-in: a tempToken (5 minutes) bound to the user's credential version.
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import { AppError } from '../../http/errors.js';
import type { AuditRequestMeta } from '../audit/index.js';
import {
  consumeFlow,
  countFlowAttempt,
  peekFlow,
  type Flow,
  type SessionContext,
  findUser,
} from '../identity/index.js';
import type { UserRow } from './repo.js';

export const MAX_CODE_ATTEMPTS = 5;

export interface PendingLogin {
  flow: Flow;
  user: UserRow;
  context: SessionContext;
}

/** A live tempToken of an active user whose factors have not changed since it was issued. */
export async function pendingLogin(deps: Pick<Deps, 'db' | 'clock'>, tempToken: string): Promise<PendingLogin> {
  const flow = await peekFlow(deps.db, 'login_mfa', tempToken, deps.clock.now());
  if (!flow?.userId) throw new AppError('invalid_temp_token');
  const user = await findUser(deps.db, flow.userId);
  const data = flow.data as { context: SessionContext; credentialVersion: number };
  if (user?.status !== 'active' || user.credentialVersion !== data.credentialVersion)
    throw new AppError('invalid_temp_token');
  return { flow, user, context: data.context };
}

/** Takes the tempToken for good; of concurrent successful verifications exactly one gets it. */
export async function takePendingLogin(tx: Executor, deps: Pick<Deps, 'clock'>, tempToken: string): Promise<void> {
  if (!(await consumeFlow(tx, 'login_mfa', tempToken, deps.clock.now()))) throw new AppError('invalid_temp_token');
}

/** A refused second factor at sign-in is on the trail: a stolen password being tried against MFA shows. */
export async function recordSecondFactorFailure(
  deps: Pick<Deps, 'db' | 'audit'>,
  pending: PendingLogin,
  details: { method: string; reason: string },
  meta: AuditRequestMeta | null,
) {
  await deps.db.transaction((tx) =>
    deps.audit.record(
      tx,
      {
        action: 'auth.login.failed',
        result: 'failure',
        actor: { userId: pending.user.id, email: pending.user.email },
        partnerId: pending.context.partnerId,
        orgId: pending.context.orgId,
        resourceType: 'user',
        resourceId: pending.user.id,
        details: { step: 'second_factor', ...details },
      },
      meta,
    ),
  );
}

/** Counts a wrong code; after MAX_CODE_ATTEMPTS the tempToken is void and the user signs in again. */
export async function failedAttempt(
  deps: Pick<Deps, 'db' | 'clock' | 'audit'>,
  pending: PendingLogin,
  tempToken: string,
  meta: AuditRequestMeta | null = null,
): Promise<never> {
  const n = await countFlowAttempt(deps.db, pending.flow.id);
  if (n >= MAX_CODE_ATTEMPTS) await consumeFlow(deps.db, 'login_mfa', tempToken, deps.clock.now());
  await recordSecondFactorFailure(
    deps,
    pending,
    { method: 'code', reason: n >= MAX_CODE_ATTEMPTS ? 'invalid_code_challenge_voided' : 'invalid_code' },
    meta,
  );
  throw new AppError('invalid_mfa_code');
}

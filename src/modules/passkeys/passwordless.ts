// Passkey-first sign-in: no e-mail, no password. A user-verified passkey is possession and inherence at
// once, so the session counts as MFA.
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import type { AuditRequestMeta } from '../audit/index.js';
import {
  startSession,
  listMemberships,
  pickDefault,
  pickPasswordDefault,
  ssoEnforcedFor,
  type IssuedSession,
  findUser,
} from '../identity/index.js';
import { advanceCounter, assertionOptions, verifyAssertion, type VerifiedAssertion } from './assertion.js';
import type { UserRow } from './repo.js';

export const passwordlessOptions = (deps: Deps) => assertionOptions(deps, 'passkey_login', null);

async function recordFailure(deps: Deps, user: UserRow | null, reason: string, meta: AuditRequestMeta) {
  const ctx = user ? pickDefault(await listMemberships(deps.db, user.id)) : { partnerId: null, orgId: null };
  await deps.db.transaction((tx) =>
    deps.audit.record(
      tx,
      {
        action: 'auth.login.failed',
        result: 'failure',
        actor: user ? { userId: user.id, email: user.email } : null,
        partnerId: ctx.partnerId,
        orgId: ctx.orgId,
        resourceType: 'user',
        resourceId: user?.id ?? null,
        details: { method: 'passkey', reason },
      },
      meta,
    ),
  );
}

export async function passwordlessSignIn(
  deps: Deps,
  credential: AuthenticationResponseJSON,
  meta: AuditRequestMeta,
): Promise<IssuedSession> {
  let verified: VerifiedAssertion;
  try {
    verified = await verifyAssertion(deps, 'passkey_login', credential, null);
  } catch (err) {
    if (err instanceof AppError) await recordFailure(deps, null, err.code, meta);
    throw err;
  }
  const user = await findUser(deps.db, verified.key.userId);
  const refusal = !user
    ? 'unknown_user'
    : user.status !== 'active'
      ? `user_${user.status}`
      : (await ssoEnforcedFor(deps.db, user.id))
        ? 'sso_enforced'
        : null;
  if (refusal) {
    await recordFailure(deps, user ?? null, refusal, meta);
    throw new AppError('invalid_credentials', 'This passkey cannot sign in.');
  }
  const ctx = pickPasswordDefault(await listMemberships(deps.db, user!.id));
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    await advanceCounter(tx, verified, now);
    return startSession(deps, tx, user!, ctx, { mfa: true, method: 'passkey', meta });
  });
}

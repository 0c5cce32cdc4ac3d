// Admin MFA reset: never one's own account; the factors and sessions are the account's, in every tenant, so
// the caller's authority must cover every membership of it.
import type { Deps } from '../../deps.js';
import { authorityOf } from '../../access/account-authority.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { assertAccountAuthority } from '../../http/refusal.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import { revokeUserSessions } from '../identity/index.js';
import { clearAllFactors } from '../mfa/index.js';
import { auditTenant } from '../tenants/index.js';
import type { Target } from '../../db/tenant-filter.js';
import { consented } from './guards.js';
import { findMember, mfaStateOf } from './repo.js';

export async function resetUserMfa(
  deps: Deps,
  caller: Principal,
  target: Target,
  userId: string,
  meta: AuditRequestMeta,
) {
  if (userId === caller.userId)
    throw new AppError('forbidden_self_action', 'Use your own security settings to change your factors.');
  await deps.db.transaction(async (tx) => {
    consented(await findMember(tx, target, userId));
    await assertAccountAuthority(tx, authorityOf(caller), userId);
    const user = await mfaStateOf(tx, userId);
    await clearAllFactors(tx, userId, deps.clock.now());
    // Sessions and refresh tokens end now; remote sessions hang off these sessions and end with them.
    const revoked = await revokeUserSessions(deps, tx, userId, 'mfa_reset');
    await deps.audit.record(
      tx,
      {
        action: 'user.mfa_reset',
        actor: actorOf(caller),
        ...auditTenant(target),
        resourceType: 'user',
        resourceId: userId,
        details: {
          clearedMethod: user?.mfaMethod ?? null,
          wasEnabled: user?.mfaEnabled ?? false,
          sessionsRevoked: revoked,
        },
      },
      meta,
    );
  });
  return { success: true as const };
}

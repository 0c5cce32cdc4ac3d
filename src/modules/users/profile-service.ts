import type { Deps } from '../../deps.js';
import type { Principal } from '../../http/context.js';
import { notFound } from '../../http/errors.js';
import type { AuditRequestMeta } from '../audit/index.js';
import { toProfile, type UserProfile } from '../identity/index.js';
import { updateProfileRow } from './repo.js';

export async function updateOwnProfile(
  deps: Pick<Deps, 'db' | 'audit' | 'clock'>,
  principal: Principal,
  patch: { name?: string; avatarUrl?: string | null },
  meta: AuditRequestMeta,
): Promise<UserProfile> {
  return deps.db.transaction(async (tx) => {
    const user = await updateProfileRow(tx, principal.userId, { ...patch, updatedAt: deps.clock.now() });
    if (!user) throw notFound('user');
    await deps.audit.record(
      tx,
      {
        action: 'user.profile.update',
        actor: { userId: principal.userId, email: principal.email },
        partnerId: principal.partnerId,
        orgId: principal.orgId,
        resourceType: 'user',
        resourceId: principal.userId,
        details: { fields: Object.keys(patch).sort() },
      },
      meta,
    );
    return toProfile(user, principal);
  });
}

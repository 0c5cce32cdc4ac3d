import type { Deps } from '../../deps.js';
import type { Principal } from '../../http/context.js';
import { notFound } from '../../http/errors.js';
import type { AuditRequestMeta } from '../audit/index.js';
import { requestEmailChange } from '../auth/index.js';
import { toProfile, type UserProfile } from '../identity/index.js';
import { updateProfileRow } from './repo.js';

export async function updateOwnProfile(
  deps: Pick<Deps, 'db' | 'audit' | 'clock' | 'outbox' | 'config'>,
  principal: Principal,
  patch: { name?: string; avatarUrl?: string | null; email?: string },
  meta: AuditRequestMeta,
): Promise<UserProfile> {
  const profile = await deps.db.transaction(async (tx) => {
    const { email, ...fields } = patch;
    const user = await updateProfileRow(tx, principal.userId, { ...fields, updatedAt: deps.clock.now() });
    if (!user) throw notFound('user');
    // The login moves only when the link mailed to the new address is opened (GET /auth/verify-email shows it pending).
    if (email !== undefined) await requestEmailChange(deps, tx, user, email, { kind: 'self' });
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
  if (patch.email !== undefined) deps.outbox.kick();
  return profile;
}

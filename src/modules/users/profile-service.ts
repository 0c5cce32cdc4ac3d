import { eq } from 'drizzle-orm';
import type { Deps } from '../../deps.js';
import { users } from '../../db/schema/index.js';
import type { Principal } from '../../http/context.js';
import { notFound } from '../../http/errors.js';
import type { AuditRequestMeta } from '../audit/index.js';
import { toProfile } from './profile.js';
import type { UserProfile } from './schemas.js';

export async function updateOwnProfile(
  deps: Pick<Deps, 'db' | 'audit' | 'clock'>,
  principal: Principal,
  patch: { name?: string; avatarUrl?: string | null },
  meta: AuditRequestMeta,
): Promise<UserProfile> {
  return deps.db.transaction(async (tx) => {
    const [user] = await tx
      .update(users)
      .set({ ...patch, updatedAt: deps.clock.now() })
      .where(eq(users.id, principal.userId))
      .returning();
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

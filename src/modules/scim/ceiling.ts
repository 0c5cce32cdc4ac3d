// The roles a SCIM token hands out stay under its creator's ceiling (the users module's check), read live: a creator
// who lost a permission, or left the tenant, no longer lends it to the identity provider.
import { and, eq } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { organizationUsers, partnerUsers, users } from '../../db/schema/index.js';
import { AppError } from '../../http/errors.js';
import { loadRoleChain } from '../roles/resolver.js';
import { assertWithinCeiling } from '../roles/service.js';

export interface TokenOwner {
  partnerId: string;
  orgId: string | null;
  createdBy: string | null;
}

/** The creator's effective permissions in the token's tenant now (empty when the creator is gone or disabled). */
export async function creatorPermissions(db: Executor, t: TokenOwner): Promise<ReadonlySet<string>> {
  if (!t.createdBy) return new Set();
  const [u] = await db.select({ status: users.status }).from(users).where(eq(users.id, t.createdBy));
  if (u?.status !== 'active') return new Set();
  const [pm] = await db.select().from(partnerUsers).where(and(eq(partnerUsers.partnerId, t.partnerId), eq(partnerUsers.userId, t.createdBy)));
  if (pm && (!t.orgId || pm.orgAccess === 'all' || (pm.orgAccess === 'selected' && pm.orgIds.includes(t.orgId)))) return (await loadRoleChain(db, pm.roleId))?.permissions ?? new Set();
  if (t.orgId) {
    const [om] = await db.select().from(organizationUsers).where(and(eq(organizationUsers.orgId, t.orgId), eq(organizationUsers.userId, t.createdBy)));
    if (om && om.siteIds === null && om.deviceGroupIds === null) return (await loadRoleChain(db, om.roleId))?.permissions ?? new Set();
  }
  return new Set();
}

/** A role SCIM may give: never `*:*`, and within `ceiling` (403 permission_ceiling naming what is missing). */
export async function assertScimAssignable(db: Executor, ceiling: ReadonlySet<string>, roleId: string): Promise<void> {
  const perms = (await loadRoleChain(db, roleId))?.permissions ?? new Set<string>();
  if (perms.has('*:*')) throw new AppError('permission_ceiling', 'Provisioning never hands out *:* (full administrative access).', { missing: ['*:*'] });
  assertWithinCeiling(ceiling, perms);
}

// The roles a SCIM token hands out stay under its creator's ceiling (the users module's check), read live: a creator
// who lost a permission, or left the tenant, no longer lends it to the identity provider.
import type { Executor } from '../../db/connect.js';
import { AppError } from '../../http/errors.js';
import { assertWithinCeiling, loadRoleChain } from '../roles/index.js';
import { accountStatus, orgMembership, partnerMembership } from './repo.js';

export interface TokenOwner {
  partnerId: string;
  orgId: string | null;
  createdBy: string | null;
}

/** The creator's effective permissions in the token's tenant now (empty when the creator is gone or disabled). */
export async function creatorPermissions(db: Executor, t: TokenOwner): Promise<ReadonlySet<string>> {
  if (!t.createdBy) return new Set();
  if ((await accountStatus(db, t.createdBy)) !== 'active') return new Set();
  const pm = await partnerMembership(db, t.partnerId, t.createdBy);
  if (pm && (!t.orgId || pm.orgAccess === 'all' || (pm.orgAccess === 'selected' && pm.orgIds.includes(t.orgId))))
    return (await loadRoleChain(db, pm.roleId))?.permissions ?? new Set();
  if (t.orgId) {
    const om = await orgMembership(db, t.orgId, t.createdBy);
    if (om && om.siteIds === null && om.deviceGroupIds === null)
      return (await loadRoleChain(db, om.roleId))?.permissions ?? new Set();
  }
  return new Set();
}

/** A role SCIM may give: never `*:*`, and within `ceiling` (403 permission_ceiling naming what is missing). */
export async function assertScimAssignable(db: Executor, ceiling: ReadonlySet<string>, roleId: string): Promise<void> {
  const perms = (await loadRoleChain(db, roleId))?.permissions ?? new Set<string>();
  if (perms.has('*:*'))
    throw new AppError('permission_ceiling', 'Provisioning never hands out *:* (full administrative access).', {
      missing: ['*:*'],
    });
  assertWithinCeiling(ceiling, perms);
}

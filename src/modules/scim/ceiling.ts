// What a SCIM token hands out stays within its creator's reach (the one ceiling rule, src/access/ceiling.ts), read
// live: a creator who lost a permission, was restricted to sites, or left the tenant no longer lends it to the IdP.
import type { Reach } from '../../access/ceiling.js';
import { ORGANIZATION_WIDE } from '../../access/ceiling.js';
import type { Executor } from '../../db/connect.js';
import { AppError } from '../../http/errors.js';
import { assertWithinReach } from '../../http/refusal.js';
import { loadRoleChain } from '../roles/index.js';
import { accountStatus, orgMembership, partnerMembership } from './repo.js';

export interface TokenOwner {
  partnerId: string;
  orgId: string | null;
  createdBy: string | null;
}

const NOTHING: Reach = { permissions: new Set(), siteIds: [], deviceGroupIds: [] };

/** The creator's reach in the token's tenant now (nothing when the creator is gone, disabled or out of reach). */
export async function creatorReach(db: Executor, t: TokenOwner): Promise<Reach> {
  if (!t.createdBy) return NOTHING;
  if ((await accountStatus(db, t.createdBy)) !== 'active') return NOTHING;
  const pm = await partnerMembership(db, t.partnerId, t.createdBy);
  if (
    pm &&
    (!t.orgId ||
      pm.orgAccess === 'all' ||
      (pm.orgAccess === 'selected' && pm.orgIds.includes(t.orgId)) ||
      (pm.orgAccess === 'all_except' && !pm.orgIds.includes(t.orgId)))
  )
    return { ...ORGANIZATION_WIDE, permissions: (await loadRoleChain(db, pm.roleId))?.permissions ?? new Set() };
  if (t.orgId) {
    const om = await orgMembership(db, t.orgId, t.createdBy);
    if (om)
      return {
        permissions: (await loadRoleChain(db, om.roleId))?.permissions ?? new Set(),
        siteIds: om.siteIds,
        deviceGroupIds: om.deviceGroupIds,
      };
  }
  return NOTHING;
}

/**
 * A role SCIM may give: never `*:*`, and within `creator`'s reach, organisation-wide as every provisioned member is
 * (403 permission_ceiling naming what is missing).
 */
export async function assertScimAssignable(db: Executor, creator: Reach, roleId: string): Promise<void> {
  const perms = (await loadRoleChain(db, roleId))?.permissions ?? new Set<string>();
  if (perms.has('*:*'))
    throw new AppError('permission_ceiling', 'Provisioning never hands out *:* (full administrative access).', {
      missing: ['*:*'],
    });
  assertWithinReach(creator, { permissions: perms, ...ORGANIZATION_WIDE });
}

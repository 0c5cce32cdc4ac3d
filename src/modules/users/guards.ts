// Escalation guards for user administration: the target's powers, the last administrator, other tenants.
import type { Executor } from '../../db/connect.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { assertWithinCeiling, loadRoleChain } from '../roles/index.js';
import { activePartnerMembers, countIdsInOrg, lockPartnerRow, partnerMembershipsOf } from './repo.js';

/** A caller may only administer a member whose role grants no more than the caller holds. */
export async function assertTargetWithinCeiling(db: Executor, caller: Principal, targetRoleId: string): Promise<void> {
  const chain = await loadRoleChain(db, targetRoleId);
  assertWithinCeiling(caller.permissions, chain?.permissions ?? []);
}

/**
 * An organisation user restricted to sites or device groups grants and administers no wider access than its own:
 * the other membership's lists must be given (null = everything) and lie within the caller's.
 */
export function assertWithinSiteScope(
  caller: Principal,
  other: { siteIds?: string[] | null; deviceGroupIds?: string[] | null },
): void {
  if (caller.scope !== 'organization') return;
  const within = (mine: string[] | null, theirs: string[] | null | undefined) =>
    mine === null || theirs?.every((id) => mine.includes(id));
  const missing = [
    ...(within(caller.siteIds, other.siteIds) ? [] : ['siteIds']),
    ...(within(caller.deviceGroupIds, other.deviceGroupIds) ? [] : ['deviceGroupIds']),
  ];
  if (missing.length)
    throw new AppError(
      'permission_ceiling',
      'You cannot grant or administer access to sites or device groups beyond your own.',
      { missing },
    );
}

/**
 * Refuses a change that would leave a partner without an active holder of `*:*`. Locks the partner row, so two
 * administrators demoting each other at once cannot both succeed.
 */
export async function assertNotLastAdmin(tx: Executor, partnerId: string, userId: string): Promise<void> {
  await lockPartnerRow(tx, partnerId);
  const members = await activePartnerMembers(tx, partnerId);
  const adminRoles = new Set<string>();
  for (const roleId of new Set(members.map((m) => m.roleId))) {
    if ((await loadRoleChain(tx, roleId))?.permissions.has('*:*')) adminRoles.add(roleId);
  }
  const admins = members.filter((m) => adminRoles.has(m.roleId));
  if (admins.some((m) => m.userId === userId) && !admins.some((m) => m.userId !== userId))
    throw new AppError('last_admin');
}

/** Partners where the user holds `*:*` (for a global change such as disabling the account). */
export async function partnersAdministeredBy(tx: Executor, userId: string): Promise<string[]> {
  const rows = await partnerMembershipsOf(tx, userId);
  const out: string[] = [];
  for (const r of rows) if ((await loadRoleChain(tx, r.roleId))?.permissions.has('*:*')) out.push(r.partnerId);
  return out;
}

export async function assertIdsInOrg(
  db: Executor,
  table: 'sites' | 'device_groups',
  orgId: string,
  ids: string[] | undefined,
  field: string,
) {
  if (!ids?.length) return;
  const unique = [...new Set(ids)];
  const n = await countIdsInOrg(db, table, orgId, unique);
  if (n !== unique.length)
    throw new AppError('validation_failed', `Some ${field} are not of this organization.`, {
      details: { fieldErrors: { [field]: ['Not of this organization'] }, formErrors: [] },
    });
}

// Escalation guards for user administration: the target's powers, the last administrator, other tenants.
import type { Executor, Tx } from '../../db/connect.js';
import type { Principal } from '../../http/context.js';
import { AppError, notFound } from '../../http/errors.js';
import { assertWithinReach } from '../../http/refusal.js';
import { findRole, loadRoleChain } from '../roles/index.js';
import type { Target } from '../../db/tenant-filter.js';
import { activePartnerMembers, countIdsInOrg, lockPartnerRow, partnerMembershipsOf } from './repo.js';

/** A caller may only administer a member whose role grants no more than the caller holds. */
export async function assertTargetWithinCeiling(db: Executor, caller: Principal, targetRoleId: string): Promise<void> {
  const chain = await loadRoleChain(db, targetRoleId);
  assertWithinReach(caller, { permissions: chain?.permissions ?? [] });
}

/** A member is administered only by a caller whose sites and device groups cover the member's (absent = everything). */
export function assertMemberWithinReach(
  caller: Principal,
  member: { siteIds?: string[] | null; deviceGroupIds?: string[] | null },
): void {
  assertWithinReach(caller, { siteIds: member.siteIds ?? null, deviceGroupIds: member.deviceGroupIds ?? null });
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

/**
 * The member, refused when it is missing (404) or has not accepted the membership: a pending member's account is not
 * the scope's to administer (403 account_outside_authority); only withdrawing or re-sending the offer is.
 */
export function consented<M extends { membership: 'active' | 'pending' }>(member: M | null): M {
  if (!member) throw notFound('user');
  if (member.membership === 'pending') throw new AppError('account_outside_authority');
  return member;
}

export const fieldError = (field: string, msg: string) =>
  new AppError('validation_failed', msg, { details: { fieldErrors: { [field]: [msg] }, formErrors: [] } });

/** A role the caller may hand out in this scope: visible here and within the caller's own permissions. */
export async function assignableRole(tx: Tx, caller: Principal, target: Target, roleId: string) {
  const role = await findRole(tx, target, roleId).catch(() => {
    throw fieldError('roleId', 'Not a role of this scope');
  });
  assertWithinReach(caller, { permissions: (await loadRoleChain(tx, role.id))?.permissions ?? [] });
  return role;
}

// A partner member's standing organisation access: `all`, `selected` (orgIds), `none`, `eligible` (orgIds: those it
// may ask just-in-time access to) or `all_except` (every organisation of the partner, those created later included,
// except excludedOrgIds). The ids are stored in the membership's org_ids and mean what its mode says; every id named
// must be an organisation of the partner. Set by an invitation and by PATCH /users/:id, always audited.
import type { OrgAccessMode } from '../../access/principal.js';
import type { Executor, Tx } from '../../db/connect.js';
import type { Target } from '../../db/tenant-filter.js';
import type { Deps } from '../../deps.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import { auditTenant, partnerOrgIds } from '../tenants/index.js';
import { assertMemberWithinReach, assertTargetWithinCeiling, fieldError } from './guards.js';
import { membershipOrgAccess, type MemberRecord, setMembershipOrgAccess } from './repo.js';

export interface OrgAccessInput {
  orgAccess?: OrgAccessMode;
  orgIds?: string[];
  excludedOrgIds?: string[];
}

/** The mode and the ids to store, each id checked to be the partner's (400 with the field named otherwise). */
export async function resolveOrgAccess(
  tx: Executor,
  partnerId: string,
  input: OrgAccessInput,
): Promise<{ orgAccess: OrgAccessMode; orgIds: string[] }> {
  const orgAccess = input.orgAccess ?? 'none';
  const listed = orgAccess === 'selected' || orgAccess === 'eligible';
  if (!listed && input.orgIds?.length) throw fieldError('orgIds', 'orgIds go with orgAccess "selected" or "eligible"');
  if (orgAccess !== 'all_except' && input.excludedOrgIds?.length)
    throw fieldError('excludedOrgIds', 'excludedOrgIds go with orgAccess "all_except"');
  const field = orgAccess === 'all_except' ? 'excludedOrgIds' : 'orgIds';
  const ids = [...new Set((orgAccess === 'all_except' ? input.excludedOrgIds : input.orgIds) ?? [])];
  if (ids.length) {
    const mine = await partnerOrgIds(tx, partnerId, ids);
    if (mine.size !== ids.length) throw fieldError(field, 'Some organizations are not of this partner');
  }
  return { orgAccess, orgIds: listed || orgAccess === 'all_except' ? ids : [] };
}

/**
 * PATCH /users/:id with orgAccess: replaces a partner member's standing access (mode and ids), in the caller's
 * transaction. Not one's own, and only of a member whose role lies within the caller's; audited user.org_access with
 * what it was and what it is.
 */
export async function changeOrgAccess(
  deps: Deps,
  tx: Tx,
  caller: Principal,
  target: Target,
  member: MemberRecord,
  input: OrgAccessInput,
  meta: AuditRequestMeta,
): Promise<void> {
  if (target.kind !== 'partner')
    throw fieldError('orgAccess', 'orgAccess, orgIds and excludedOrgIds apply to partner members');
  if (member.id === caller.userId)
    throw new AppError('forbidden_self_action', 'You cannot change your own organisation access.');
  await assertTargetWithinCeiling(tx, caller, member.roleId);
  assertMemberWithinReach(caller, member);
  const access = await resolveOrgAccess(tx, target.partnerId, input);
  const was = await membershipOrgAccess(tx, target.partnerId, member.id);
  await setMembershipOrgAccess(tx, target.partnerId, member.id, access, deps.clock.now());
  await deps.audit.record(
    tx,
    {
      action: 'user.org_access',
      actor: actorOf(caller),
      ...auditTenant(target),
      resourceType: 'user',
      resourceId: member.id,
      details: { from: was, to: access },
    },
    meta,
  );
}

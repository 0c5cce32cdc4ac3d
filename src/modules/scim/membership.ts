// What a SCIM user's state means for its Gatehouse membership in the token's tenant: active = a member holding the
// role of its mapped groups (else the token's default role), under the token creator's ceiling; inactive = no
// membership (its site and device-group restrictions kept aside) and the user's sessions there revoked at once.
import type { Tx } from '../../db/connect.js';
import type { Deps } from '../../deps.js';
import { offerMembership } from '../invitations/index.js';
import { loadRoleChain } from '../roles/index.js';
import { revokeUserSessions } from '../identity/index.js';
import type { Target } from '../../db/tenant-filter.js';
import { deleteMembership, setMembershipRole } from '../users/index.js';
import { assertScimAssignable, creatorReach } from './ceiling.js';
import type { ScimCaller } from './context.js';
import {
  accountById,
  tenantName,
  insertOrgMember,
  insertPartnerMember,
  mappedGroupRoles,
  orgMembership,
  partnerMembership,
  sessionsInTenant,
  setSuspended,
  type ScimUserRow,
} from './repo.js';

async function currentMembership(tx: Tx, target: Target, userId: string) {
  if (target.kind === 'partner') {
    const m = await partnerMembership(tx, target.partnerId, userId);
    return m
      ? { roleId: m.roleId, saved: { siteIds: null, deviceGroupIds: null, orgAccess: m.orgAccess, orgIds: m.orgIds } }
      : null;
  }
  const m = await orgMembership(tx, target.orgId, userId);
  return m
    ? {
        roleId: m.roleId,
        saved: { siteIds: m.siteIds, deviceGroupIds: m.deviceGroupIds, orgAccess: 'none' as const, orgIds: [] },
      }
    : null;
}

/** The role of the user's mapped groups (the one granting most, then by group name), else its default role. */
export async function effectiveRole(tx: Tx, su: ScimUserRow): Promise<string> {
  const mapped = await mappedGroupRoles(tx, su.id);
  let best: { roleId: string; size: number } | null = null;
  for (const g of mapped) {
    const size = (await loadRoleChain(tx, g.roleId!))?.permissions.size ?? 0;
    if (!best || size > best.size) best = { roleId: g.roleId!, size };
  }
  return best?.roleId ?? su.defaultRoleId;
}

/** Revokes the user's sessions signed in to this tenant (another tenant's sessions are not this token's to end). */
async function revokeTenantSessions(
  deps: Pick<Deps, 'clock'>,
  tx: Tx,
  target: Target,
  userId: string,
): Promise<number> {
  return revokeUserSessions(deps, tx, userId, 'scim_deprovisioned', undefined, sessionsInTenant(target));
}

/** Brings the membership in line with the SCIM user; answers what changed, for the audit record. */
export async function syncMembership(
  deps: Pick<Deps, 'clock' | 'outbox' | 'config'>,
  tx: Tx,
  caller: ScimCaller,
  su: ScimUserRow,
): Promise<{ roleId: string | null; sessionsRevoked: number; pending?: boolean }> {
  const target = caller.target;
  const current = await currentMembership(tx, target, su.userId);
  if (!su.active) {
    if (!current) return { roleId: null, sessionsRevoked: 0 };
    await setSuspended(tx, su.id, current.saved);
    await deleteMembership(tx, target, su.userId);
    return { roleId: null, sessionsRevoked: await revokeTenantSessions(deps, tx, target, su.userId) };
  }
  const roleId = await effectiveRole(tx, su);
  if (current?.roleId === roleId) return { roleId, sessionsRevoked: 0 };
  await assertScimAssignable(tx, await creatorReach(tx, { ...target, createdBy: caller.createdBy }), roleId);
  if (current) await setMembershipRole(tx, target, su.userId, roleId);
  else if (!su.ownsAccount) {
    // An account SCIM did not create is offered the membership: it grants nothing until the account accepts it.
    const account = await accountById(tx, su.userId);
    await offerMembership(
      deps,
      tx,
      target.kind === 'partner'
        ? {
            kind: 'partner',
            partnerId: target.partnerId,
            roleId,
            orgAccess: su.suspended?.orgAccess ?? 'none',
            orgIds: su.suspended?.orgIds ?? [],
          }
        : {
            kind: 'organization',
            orgId: target.orgId,
            roleId,
            siteIds: su.suspended?.siteIds ?? null,
            deviceGroupIds: su.suspended?.deviceGroupIds ?? null,
          },
      {
        userId: su.userId,
        email: account!.email,
        inviterName: caller.tokenName,
        tenantName: (await tenantName(tx, target)) ?? (target.orgId ? 'your organization' : 'your partner'),
        byPartner: caller.actor.forPartner === true,
      },
    );
    if (su.suspended) await setSuspended(tx, su.id, null);
    return { roleId, sessionsRevoked: 0, pending: true };
  } else if (target.kind === 'partner') {
    const s = su.suspended;
    await insertPartnerMember(tx, {
      partnerId: target.partnerId,
      userId: su.userId,
      roleId,
      orgAccess: s?.orgAccess ?? 'none',
      orgIds: s?.orgIds ?? [],
    });
  } else {
    await insertOrgMember(tx, {
      orgId: target.orgId,
      userId: su.userId,
      roleId,
      siteIds: su.suspended?.siteIds ?? null,
      deviceGroupIds: su.suspended?.deviceGroupIds ?? null,
    });
  }
  if (su.suspended) await setSuspended(tx, su.id, null);
  return { roleId, sessionsRevoked: 0 };
}

/** Removes the membership and the sessions in the tenant (DELETE /Users/:id). */
export async function endMembership(
  deps: Pick<Deps, 'clock'>,
  tx: Tx,
  target: Target,
  userId: string,
): Promise<number> {
  await deleteMembership(tx, target, userId);
  return revokeTenantSessions(deps, tx, target, userId);
}

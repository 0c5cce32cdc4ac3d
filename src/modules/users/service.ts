import type { Deps } from '../../deps.js';
import { authorityOf } from '../../access/account-authority.js';
import type { Principal } from '../../http/context.js';
import { AppError, notFound } from '../../http/errors.js';
import { assertAccountAuthority } from '../../http/refusal.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import { requestEmailChange } from '../auth/index.js';
import { revokeUserSessions } from '../identity/index.js';
import { findRole, loadRoleChain } from '../roles/index.js';
import { auditTenant } from '../tenants/index.js';
import type { Target } from '../../db/tenant-filter.js';
import {
  consented,
  assertMemberWithinReach,
  assertNotLastAdmin,
  assertTargetWithinCeiling,
  assignableRole,
  partnersAdministeredBy,
} from './guards.js';
import { changeOrgAccess, type OrgAccessInput } from './org-access.js';
import { deleteMembership, findMember, listMembers, memberJson, setMembershipRole, updateUserRow } from './repo.js';

export async function updateUser(
  deps: Deps,
  caller: Principal,
  target: Target,
  userId: string,
  body: { name?: string; status?: 'active' | 'disabled'; email?: string } & OrgAccessInput,
  meta: AuditRequestMeta,
) {
  const { orgAccess, orgIds, excludedOrgIds, ...patch } = body;
  await deps.db.transaction(async (tx) => {
    const member = consented(await findMember(tx, target, userId));
    if (orgAccess !== undefined)
      await changeOrgAccess(deps, tx, caller, target, member, { orgAccess, orgIds, excludedOrgIds }, meta);
    if (Object.keys(patch).length === 0) return;
    if (userId === caller.userId && patch.status)
      throw new AppError('forbidden_self_action', 'You cannot change your own status.');
    // Name, status and address are the account's, in every tenant it belongs to.
    await assertAccountAuthority(tx, authorityOf(caller), userId);
    // A new address becomes the login only once the link mailed to it is opened.
    const pendingEmail =
      patch.email === undefined
        ? undefined
        : await requestEmailChange(deps, tx, member, patch.email, {
            kind: 'admin',
            partnerId: target.partnerId,
            orgId: target.orgId,
          });
    assertMemberWithinReach(caller, member);
    if (patch.status === 'active' && member.status === 'invited')
      throw new AppError('conflict', 'An invited user becomes active by accepting the invitation.');
    if (patch.status === 'disabled' && member.status !== 'disabled') {
      for (const partnerId of await partnersAdministeredBy(tx, userId)) await assertNotLastAdmin(tx, partnerId, userId);
    }
    await updateUserRow(tx, userId, {
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.status ? { status: patch.status } : {}),
      updatedAt: deps.clock.now(),
    });
    const revoked = patch.status === 'disabled' ? await revokeUserSessions(deps, tx, userId, 'disabled') : 0;
    await deps.audit.record(
      tx,
      {
        action: 'user.update',
        actor: actorOf(caller),
        ...auditTenant(target),
        resourceType: 'user',
        resourceId: userId,
        details: {
          changed: Object.keys(patch).sort(),
          ...(patch.status ? { status: patch.status } : {}),
          ...(pendingEmail ? { pendingEmail } : {}),
          sessionsRevoked: revoked,
        },
      },
      meta,
    );
  });
  if (patch.email !== undefined) deps.outbox.kick();
  return memberJson((await findMember(deps.db, target, userId))!);
}

export async function removeUser(
  deps: Deps,
  caller: Principal,
  target: Target,
  userId: string,
  meta: AuditRequestMeta,
) {
  await deps.db.transaction(async (tx) => {
    if (userId === caller.userId) throw new AppError('forbidden_self_action', 'You cannot remove yourself.');
    const member = await findMember(tx, target, userId);
    if (!member) throw notFound('user');
    await assertTargetWithinCeiling(tx, caller, member.roleId);
    assertMemberWithinReach(caller, member);
    if (target.kind === 'partner') await assertNotLastAdmin(tx, target.partnerId, userId);
    await deleteMembership(tx, target, userId);
    await deps.audit.record(
      tx,
      {
        action: 'user.remove',
        actor: actorOf(caller),
        ...auditTenant(target),
        resourceType: 'user',
        resourceId: userId,
        details: { email: member.email, roleId: member.roleId },
      },
      meta,
    );
  });
}

export async function assignRole(
  deps: Deps,
  caller: Principal,
  target: Target,
  userId: string,
  roleId: string,
  meta: AuditRequestMeta,
) {
  await deps.db.transaction(async (tx) => {
    if (userId === caller.userId) throw new AppError('forbidden_self_action', 'You cannot change your own role.');
    const member = consented(await findMember(tx, target, userId));
    await assertTargetWithinCeiling(tx, caller, member.roleId);
    assertMemberWithinReach(caller, member);
    await assignableRole(tx, caller, target, roleId);
    if (target.kind === 'partner' && !(await loadRoleChain(tx, roleId))?.permissions.has('*:*'))
      await assertNotLastAdmin(tx, target.partnerId, userId);
    await setMembershipRole(tx, target, userId, roleId);
    await deps.audit.record(
      tx,
      {
        action: 'user.role.assign',
        actor: actorOf(caller),
        ...auditTenant(target),
        resourceType: 'user',
        resourceId: userId,
        details: { fromRoleId: member.roleId, toRoleId: roleId },
      },
      meta,
    );
  });
  return memberJson((await findMember(deps.db, target, userId))!);
}

/** Members of the scope (GET /users). */
export const listUsers = (deps: Pick<Deps, 'db'>, target: Target, q: Parameters<typeof listMembers>[2]) =>
  listMembers(deps.db, target, q);

/** Members of the scope holding a role of the scope (404 for a role not visible there). */
export async function listRoleHolders(
  deps: Pick<Deps, 'db'>,
  target: Target,
  roleId: string,
  q: Omit<Parameters<typeof listMembers>[2], 'roleId'>,
) {
  await findRole(deps.db, target, roleId);
  return listMembers(deps.db, target, { ...q, roleId });
}

export async function memberOrThrow(deps: Deps, target: Target, userId: string) {
  const member = await findMember(deps.db, target, userId);
  if (!member) throw notFound('user');
  return memberJson(member);
}

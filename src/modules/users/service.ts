// User administration in a target scope.
import { speaksForPartner } from '../../access/principal.js';
import type { Tx } from '../../db/connect.js';
import type { Deps } from '../../deps.js';
import { authorityOf } from '../../access/account-authority.js';
import type { Principal } from '../../http/context.js';
import { AppError, notFound } from '../../http/errors.js';
import { assertAccountAuthority } from '../../http/refusal.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import { createInviteToken, inviteUrl, requestEmailChange } from '../auth/index.js';
import { findUserByEmail, lockAddress, mails, revokeUserSessions } from '../identity/index.js';
import { assertWithinReach } from '../../http/refusal.js';
import { offerMembership, renewOffer } from '../invitations/index.js';
import { findRole, loadRoleChain } from '../roles/index.js';
import { auditTenant, partnerOrgIds, type TargetScope } from '../tenants/index.js';
import {
  consented,
  assertIdsInOrg,
  assertMemberWithinReach,
  assertNotLastAdmin,
  assertTargetWithinCeiling,
  partnersAdministeredBy,
} from './guards.js';
import {
  deleteMembership,
  findMember,
  insertInvitedUser,
  insertOrgMembership,
  insertPartnerMembership,
  listMembers,
  memberJson,
  belongsAnywhere,
  organizationNameOf,
  partnerNameOf,
  setMembershipRole,
  updateUserRow,
  userNameOf,
} from './repo.js';

async function tenantName(tx: Tx, target: TargetScope): Promise<string> {
  if (target.orgId) return (await organizationNameOf(tx, target.orgId)) ?? 'your organization';
  return (await partnerNameOf(tx, target.partnerId)) ?? 'your partner';
}

async function inviterNameOf(tx: Tx, caller: Principal): Promise<string> {
  return (await userNameOf(tx, caller.userId)) ?? caller.serviceAccount?.name ?? caller.email;
}

const fieldError = (field: string, msg: string) =>
  new AppError('validation_failed', msg, { details: { fieldErrors: { [field]: [msg] }, formErrors: [] } });

/** A role the caller may hand out in this scope: visible here and within the caller's own permissions. */
async function assignableRole(tx: Tx, caller: Principal, target: TargetScope, roleId: string) {
  const role = await findRole(tx, target, roleId).catch(() => {
    throw fieldError('roleId', 'Not a role of this scope');
  });
  assertWithinReach(caller, { permissions: (await loadRoleChain(tx, role.id))?.permissions ?? [] });
  return role;
}

export interface InviteInput {
  email: string;
  name: string;
  roleId: string;
  siteIds?: string[];
  deviceGroupIds?: string[];
  orgAccess?: 'all' | 'selected' | 'none' | 'eligible';
  orgIds?: string[];
}

export async function inviteUser(
  deps: Deps,
  caller: Principal,
  target: TargetScope,
  input: InviteInput,
  meta: AuditRequestMeta,
) {
  if (target.kind === 'partner' && (input.siteIds || input.deviceGroupIds))
    throw fieldError('siteIds', 'siteIds and deviceGroupIds apply to organization members');
  if (target.kind === 'organization' && (input.orgAccess || input.orgIds))
    throw fieldError('orgAccess', 'orgAccess and orgIds apply to partner members');
  const orgAccess = input.orgAccess ?? 'none';
  if (target.kind === 'partner' && orgAccess !== 'selected' && orgAccess !== 'eligible' && input.orgIds?.length)
    throw fieldError('orgIds', 'orgIds go with orgAccess "selected" or "eligible"');

  const now = deps.clock.now();
  const result = await deps.db.transaction(async (tx) => {
    await assignableRole(tx, caller, target, input.roleId);
    if (target.kind === 'organization') {
      assertMemberWithinReach(caller, input);
      await assertIdsInOrg(tx, 'sites', target.orgId, input.siteIds, 'siteIds');
      await assertIdsInOrg(tx, 'device_groups', target.orgId, input.deviceGroupIds, 'deviceGroupIds');
    } else if (input.orgIds?.length) {
      const mine = await partnerOrgIds(tx, target.partnerId, input.orgIds);
      if (mine.size !== new Set(input.orgIds).size)
        throw fieldError('orgIds', 'Some organizations are not of this partner');
    }
    // Serialise invitations of one address: the unique email index would otherwise fail one of two racers.
    await lockAddress(tx, input.email);
    const found = (await findUserByEmail(tx, input.email)) ?? undefined;
    // An account that never set itself up and belongs nowhere (its invitations were withdrawn) is invited afresh: the
    // invitation link is its proof. Any other existing account must consent.
    const unclaimed = found?.status === 'invited' && !(await belongsAnywhere(tx, found.id));
    const existing = unclaimed ? undefined : found;
    const tenantLabel = await tenantName(tx, target);
    const inviterName = await inviterNameOf(tx, caller);
    const orgIds = orgAccess === 'selected' || orgAccess === 'eligible' ? [...new Set(input.orgIds ?? [])] : [];
    if (existing) {
      // An existing account is offered the membership: it grants nothing until the account accepts it.
      const notice = {
        userId: existing.id,
        email: existing.email,
        inviterName,
        tenantName: tenantLabel,
        byPartner: speaksForPartner(caller),
      };
      const member = await findMember(tx, target, existing.id);
      if (member && member.membership !== 'pending') throw new AppError('user_exists_in_scope');
      if (member) await renewOffer(deps, tx, target, notice);
      else
        await offerMembership(
          deps,
          tx,
          target.kind === 'partner'
            ? { kind: 'partner', partnerId: target.partnerId, roleId: input.roleId, orgAccess, orgIds }
            : {
                kind: 'organization',
                orgId: target.orgId,
                roleId: input.roleId,
                siteIds: input.siteIds ? [...new Set(input.siteIds)] : null,
                deviceGroupIds: input.deviceGroupIds ? [...new Set(input.deviceGroupIds)] : null,
              },
          notice,
        );
      await deps.audit.record(
        tx,
        {
          action: 'user.invite',
          actor: actorOf(caller),
          ...auditTenant(target),
          resourceType: 'user',
          resourceId: existing.id,
          details: { email: existing.email, roleId: input.roleId, existingAccount: true, pending: true },
        },
        meta,
      );
      return { user: { ...existing, status: 'pending' as const } };
    }
    const u = found ?? (await insertInvitedUser(tx, input.email, input.name))!;
    if (target.kind === 'partner') {
      await insertPartnerMembership(tx, {
        partnerId: target.partnerId,
        userId: u.id,
        roleId: input.roleId,
        orgAccess,
        orgIds,
      });
    } else {
      await insertOrgMembership(tx, {
        orgId: target.orgId,
        userId: u.id,
        roleId: input.roleId,
        siteIds: input.siteIds ? [...new Set(input.siteIds)] : null,
        deviceGroupIds: input.deviceGroupIds ? [...new Set(input.deviceGroupIds)] : null,
      });
    }
    const ctx = { scope: target.kind, partnerId: target.partnerId, orgId: target.orgId, roleId: input.roleId } as const;
    const token = await createInviteToken(tx, now, u.id, ctx, caller.userId, speaksForPartner(caller));
    await deps.audit.record(
      tx,
      {
        action: 'user.invite',
        actor: actorOf(caller),
        ...auditTenant(target),
        resourceType: 'user',
        resourceId: u.id,
        details: { email: u.email, roleId: input.roleId, existingAccount: Boolean(found) },
      },
      meta,
    );
    await deps.outbox.enqueue(
      tx,
      mails.invitation(u.email, { inviterName, tenantName: tenantLabel, url: inviteUrl(deps.config.appUrl, token) }),
    );
    return { user: u };
  });
  deps.outbox.kick();
  const { user } = result;
  return {
    id: user.id,
    email: user.email,
    // The scope learns nothing of an existing account's profile: the name it gave is answered back.
    name: user.status === 'pending' ? input.name : user.name,
    status: user.status,
    roleId: input.roleId,
    inviteEmailSent: deps.mailer.configured && user.status !== 'disabled',
  };
}

export async function resendInvite(
  deps: Deps,
  caller: Principal,
  target: TargetScope,
  userId: string,
  meta: AuditRequestMeta,
) {
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    const member = await findMember(tx, target, userId);
    if (!member) throw notFound('user');
    if (member.membership === 'pending') {
      const notice = {
        userId,
        email: member.email,
        inviterName: await inviterNameOf(tx, caller),
        tenantName: await tenantName(tx, target),
        byPartner: speaksForPartner(caller),
      };
      await renewOffer(deps, tx, target, notice);
      await deps.audit.record(
        tx,
        {
          action: 'user.invite.resend',
          actor: actorOf(caller),
          ...auditTenant(target),
          resourceType: 'user',
          resourceId: userId,
          details: { email: member.email, pending: true },
        },
        meta,
      );
      return;
    }
    if (member.status !== 'invited') throw new AppError('conflict', 'The user has already accepted the invitation.');
    const ctx = {
      scope: target.kind,
      partnerId: target.partnerId,
      orgId: target.orgId,
      roleId: member.roleId,
    } as const;
    const t = await createInviteToken(tx, now, userId, ctx, caller.userId, speaksForPartner(caller));
    await deps.audit.record(
      tx,
      {
        action: 'user.invite.resend',
        actor: actorOf(caller),
        ...auditTenant(target),
        resourceType: 'user',
        resourceId: userId,
        details: { email: member.email },
      },
      meta,
    );
    await deps.outbox.enqueue(
      tx,
      mails.invitation(member.email, {
        inviterName: await inviterNameOf(tx, caller),
        tenantName: await tenantName(tx, target),
        url: inviteUrl(deps.config.appUrl, t),
      }),
    );
  });
  deps.outbox.kick();
  return { success: true as const, inviteEmailSent: deps.mailer.configured };
}

export async function updateUser(
  deps: Deps,
  caller: Principal,
  target: TargetScope,
  userId: string,
  patch: { name?: string; status?: 'active' | 'disabled'; email?: string },
  meta: AuditRequestMeta,
) {
  await deps.db.transaction(async (tx) => {
    const member = consented(await findMember(tx, target, userId));
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
  target: TargetScope,
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
  target: TargetScope,
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
export const listUsers = (deps: Pick<Deps, 'db'>, target: TargetScope, q: Parameters<typeof listMembers>[2]) =>
  listMembers(deps.db, target, q);

/** Members of the scope holding a role of the scope (404 for a role not visible there). */
export async function listRoleHolders(
  deps: Pick<Deps, 'db'>,
  target: TargetScope,
  roleId: string,
  q: Omit<Parameters<typeof listMembers>[2], 'roleId'>,
) {
  await findRole(deps.db, target, roleId);
  return listMembers(deps.db, target, { ...q, roleId });
}

export async function memberOrThrow(deps: Deps, target: TargetScope, userId: string) {
  const member = await findMember(deps.db, target, userId);
  if (!member) throw notFound('user');
  return memberJson(member);
}

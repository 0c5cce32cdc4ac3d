// Inviting a member and re-sending the invitation: a new account gets an invitation link; an existing account is
// offered a pending membership it must accept.
import { speaksForPartner } from '../../access/principal.js';
import type { Tx } from '../../db/connect.js';
import type { Deps } from '../../deps.js';
import type { Principal } from '../../http/context.js';
import { AppError, notFound } from '../../http/errors.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import { createInviteToken, inviteUrl } from '../auth/index.js';
import { findUserByEmail, lockAddress, mails } from '../identity/index.js';
import { offerMembership, renewOffer } from '../invitations/index.js';
import { auditTenant } from '../tenants/index.js';
import type { Target } from '../../db/tenant-filter.js';
import { type OrgAccessInput, resolveOrgAccess } from './org-access.js';
import { assertIdsInOrg, assertMemberWithinReach, assignableRole, fieldError } from './guards.js';
import {
  findMember,
  insertInvitedUser,
  insertOrgMembership,
  insertPartnerMembership,
  belongsAnywhere,
  organizationNameOf,
  partnerNameOf,
  userNameOf,
} from './repo.js';

async function tenantName(tx: Tx, target: Target): Promise<string> {
  if (target.orgId) return (await organizationNameOf(tx, target.orgId)) ?? 'your organization';
  return (await partnerNameOf(tx, target.partnerId)) ?? 'your partner';
}

async function inviterNameOf(tx: Tx, caller: Principal): Promise<string> {
  return (await userNameOf(tx, caller.userId)) ?? caller.serviceAccount?.name ?? caller.email;
}

export interface InviteInput {
  email: string;
  name: string;
  roleId: string;
  siteIds?: string[];
  deviceGroupIds?: string[];
  orgAccess?: OrgAccessInput['orgAccess'];
  orgIds?: string[];
  excludedOrgIds?: string[];
}

export async function inviteUser(
  deps: Deps,
  caller: Principal,
  target: Target,
  input: InviteInput,
  meta: AuditRequestMeta,
) {
  if (target.kind === 'partner' && (input.siteIds || input.deviceGroupIds))
    throw fieldError('siteIds', 'siteIds and deviceGroupIds apply to organization members');
  if (target.kind === 'organization' && (input.orgAccess || input.orgIds || input.excludedOrgIds))
    throw fieldError('orgAccess', 'orgAccess, orgIds and excludedOrgIds apply to partner members');

  const now = deps.clock.now();
  const result = await deps.db.transaction(async (tx) => {
    await assignableRole(tx, caller, target, input.roleId);
    if (target.kind === 'organization') {
      assertMemberWithinReach(caller, input);
      await assertIdsInOrg(tx, 'sites', target.orgId, input.siteIds, 'siteIds');
      await assertIdsInOrg(tx, 'device_groups', target.orgId, input.deviceGroupIds, 'deviceGroupIds');
    }
    const { orgAccess, orgIds } =
      target.kind === 'partner'
        ? await resolveOrgAccess(tx, target.partnerId, input)
        : { orgAccess: 'none' as const, orgIds: [] };
    const accessDetails = target.kind === 'partner' ? { orgAccess, orgIds } : {};
    // Serialise invitations of one address: the unique email index would otherwise fail one of two racers.
    await lockAddress(tx, input.email);
    const found = (await findUserByEmail(tx, input.email)) ?? undefined;
    // An account that never set itself up and belongs nowhere (its invitations were withdrawn) is invited afresh: the
    // invitation link is its proof. Any other existing account must consent.
    const unclaimed = found?.status === 'invited' && !(await belongsAnywhere(tx, found.id));
    const existing = unclaimed ? undefined : found;
    const tenantLabel = await tenantName(tx, target);
    const inviterName = await inviterNameOf(tx, caller);
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
          details: {
            email: existing.email,
            roleId: input.roleId,
            existingAccount: true,
            pending: true,
            ...accessDetails,
          },
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
        details: { email: u.email, roleId: input.roleId, existingAccount: Boolean(found), ...accessDetails },
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
  target: Target,
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

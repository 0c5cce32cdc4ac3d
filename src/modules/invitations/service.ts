// Pending memberships: an invitation, SCIM or SSO provisioning that names an existing account offers it a membership
// (status pending, granting nothing) and mails the address a link; the account accepts or declines it. Accepting
// by id needs a proven address (a squatter who registered someone's address unproven must not take the role); the
// mailed link is itself the proof.
import type { Executor, Tx } from '../../db/connect.js';
import type { Deps } from '../../deps.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import type { AuditRequestMeta } from '../audit/index.js';
import { partnerMadeRefusal } from '../../http/refusal.js';
import { consumeFlow, createFlow, liveFlowFor, mails, peekFlow, voidFlowsFor } from '../identity/index.js';
import {
  type Accepted,
  activatePendingMembership,
  addressOf,
  deletePendingMembership,
  insertPendingOrgMembership,
  insertPendingPartnerMembership,
  markAddressProven,
  type OfferTarget,
  type PendingRow,
  pendingMembershipsOf,
  refreshPendingMembership,
} from './repo.js';

export const OFFER_TTL_MS = 7 * 24 * 3600 * 1000;

export const offerUrl = (appUrl: string, token: string) => `${appUrl}/invitations?token=${encodeURIComponent(token)}`;

export type Offer =
  | {
      kind: 'partner';
      partnerId: string;
      roleId: string;
      orgAccess: 'all' | 'selected' | 'none' | 'eligible' | 'all_except';
      orgIds: string[];
    }
  | {
      kind: 'organization';
      orgId: string;
      roleId: string;
      siteIds: string[] | null;
      deviceGroupIds: string[] | null;
    };

/** Who is offered what, and what the mail says. */
export interface OfferNotice {
  userId: string;
  email: string;
  inviterName: string;
  tenantName: string;
  /**
   * The offer was made by someone speaking for the partner (partner staff, a credential the partner made): an
   * organisation that suspends its partner's access holds it until the suspension is lifted.
   */
  byPartner?: boolean;
}

/** A fresh link for the offer (any earlier link of the same offer stops working), mailed to the account's address. */
async function mailOffer(deps: Pick<Deps, 'clock' | 'outbox' | 'config'>, tx: Executor, id: string, n: OfferNotice) {
  const now = deps.clock.now();
  await voidFlowsFor(tx, 'membership_invite', 'membershipId', id, now);
  const { token } = await createFlow(tx, {
    kind: 'membership_invite',
    userId: n.userId,
    data: {
      membershipId: id,
      email: n.email.toLowerCase(),
      inviterName: n.inviterName,
      byPartner: n.byPartner === true,
    },
    ttlMs: OFFER_TTL_MS,
    now,
  });
  await deps.outbox.enqueue(
    tx,
    mails.membershipOffer(n.email, {
      inviterName: n.inviterName,
      tenantName: n.tenantName,
      url: offerUrl(deps.config.appUrl, token),
    }),
  );
}

/** Offers an existing account a membership (pending until it accepts) and mails it; the invitation's id. */
export async function offerMembership(
  deps: Pick<Deps, 'clock' | 'outbox' | 'config'>,
  tx: Executor,
  offer: Offer,
  notice: OfferNotice,
): Promise<string> {
  const now = deps.clock.now();
  const id =
    offer.kind === 'partner'
      ? await insertPendingPartnerMembership(
          tx,
          {
            partnerId: offer.partnerId,
            userId: notice.userId,
            roleId: offer.roleId,
            orgAccess: offer.orgAccess,
            orgIds: offer.orgIds,
          },
          now,
        )
      : await insertPendingOrgMembership(
          tx,
          {
            orgId: offer.orgId,
            userId: notice.userId,
            roleId: offer.roleId,
            siteIds: offer.siteIds,
            deviceGroupIds: offer.deviceGroupIds,
          },
          now,
        );
  await mailOffer(deps, tx, id, notice);
  return id;
}

/**
 * The same tenant offers again while the account has not answered: invitedAt moves to now and a new link is mailed
 * (no second membership). False when the account holds no pending membership there.
 */
export async function renewOffer(
  deps: Pick<Deps, 'clock' | 'outbox' | 'config'>,
  tx: Executor,
  target: OfferTarget,
  notice: OfferNotice,
): Promise<boolean> {
  const id = await refreshPendingMembership(tx, target, notice.userId, deps.clock.now());
  if (!id) return false;
  await mailOffer(deps, tx, id, notice);
  return true;
}

const iso = (v: Date | string | null) => (v === null ? null : new Date(v).toISOString());

function invitationJson(r: PendingRow) {
  return {
    id: r.id,
    kind: r.kind,
    partnerId: r.partner_id,
    orgId: r.org_id,
    tenantName: r.tenant_name,
    roleId: r.role_id,
    roleName: r.role_name,
    invitedAt: iso(r.invited_at),
    invitedBy: r.invited_by,
  };
}

/** The caller's own pending invitations (GET /auth/invitations). */
export async function listInvitations(deps: Pick<Deps, 'db'>, caller: Principal) {
  return { data: (await pendingMembershipsOf(deps.db, caller.userId)).map(invitationJson) };
}

async function recordAnswer(
  deps: Deps,
  tx: Tx,
  caller: Principal,
  id: string,
  m: Accepted,
  action: 'membership.invitation.accept' | 'membership.invitation.decline',
  meta: AuditRequestMeta,
  details: Record<string, unknown> = {},
) {
  await deps.audit.record(
    tx,
    {
      action,
      actor: { userId: caller.userId, email: caller.email },
      partnerId: m.partnerId,
      orgId: m.orgId,
      resourceType: 'user',
      resourceId: caller.userId,
      details: { invitationId: id, kind: m.kind, roleId: m.roleId, ...details },
    },
    meta,
  );
}

const acceptedJson = (id: string, m: Accepted) => ({ id, status: 'active' as const, ...m });

/** An organisation's offer made for the partner is held while the organisation suspends its partner's access. */
async function assertNotHeld(tx: Tx, offer: PendingRow, byPartner: boolean | undefined): Promise<void> {
  if (offer.kind !== 'organization' || !offer.org_id || !byPartner) return;
  const refusal = await partnerMadeRefusal(tx, offer.org_id, 'invitation');
  if (refusal) throw refusal;
}

/** Accepts one of the caller's pending invitations; the caller's address must be proven. */
export async function acceptInvitation(deps: Deps, caller: Principal, id: string, meta: AuditRequestMeta) {
  return deps.db.transaction(async (tx) => {
    const [offer] = await pendingMembershipsOf(tx, caller.userId, id);
    if (!offer) throw new AppError('invitation_not_found');
    if (!(await addressOf(tx, caller.userId))?.emailVerified) throw new AppError('email_unverified');
    const link = await liveFlowFor(tx, 'membership_invite', 'membershipId', id, deps.clock.now());
    await assertNotHeld(tx, offer, (link?.data as { byPartner?: boolean } | undefined)?.byPartner);
    // The offer's live link first, the membership second: the order the link's acceptance takes, so the two never
    // wait on each other's locks.
    await voidFlowsFor(tx, 'membership_invite', 'membershipId', id, deps.clock.now());
    const m = await activatePendingMembership(tx, id, caller.userId, deps.clock.now());
    if (!m) throw new AppError('invitation_not_found');
    await recordAnswer(deps, tx, caller, id, m, 'membership.invitation.accept', meta, { via: 'account' });
    return acceptedJson(id, m);
  });
}

/** Declines one of the caller's pending invitations: the pending membership is deleted. */
export async function declineInvitation(deps: Deps, caller: Principal, id: string, meta: AuditRequestMeta) {
  await deps.db.transaction(async (tx) => {
    await voidFlowsFor(tx, 'membership_invite', 'membershipId', id, deps.clock.now());
    const m = await deletePendingMembership(tx, id, caller.userId);
    if (!m) throw new AppError('invitation_not_found');
    await recordAnswer(deps, tx, caller, id, m, 'membership.invitation.decline', meta);
  });
  return { success: true as const };
}

/**
 * Accepts by the mailed link, signed in as the account it was mailed for: the link reached the address, so the
 * address counts as proven too (if it is still the one mailed). The link is spent once.
 */
export async function acceptInvitationByLink(deps: Deps, caller: Principal, token: string, meta: AuditRequestMeta) {
  const now = deps.clock.now();
  // Someone else's link is not spent by a look.
  const seen = await peekFlow(deps.db, 'membership_invite', token, now);
  if (!seen || seen.userId !== caller.userId) throw new AppError('invitation_not_found');
  return deps.db.transaction(async (tx) => {
    const flow = await consumeFlow(tx, 'membership_invite', token, now);
    if (!flow || flow.userId !== caller.userId) throw new AppError('invitation_not_found');
    const data = flow.data as { membershipId: string; email: string; byPartner?: boolean };
    const [offer] = await pendingMembershipsOf(tx, caller.userId, data.membershipId);
    if (!offer) throw new AppError('invitation_not_found');
    await assertNotHeld(tx, offer, data.byPartner);
    const m = await activatePendingMembership(tx, data.membershipId, caller.userId, now);
    if (!m) throw new AppError('invitation_not_found');
    await markAddressProven(tx, caller.userId, data.email, now);
    await recordAnswer(deps, tx, caller, data.membershipId, m, 'membership.invitation.accept', meta, { via: 'link' });
    return acceptedJson(data.membershipId, m);
  });
}

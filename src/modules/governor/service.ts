// Freezes and co-signatures: the rules of who may set, lift and approve them. A freeze is a column of the tenant row
// and bumps the authorisation epoch in its transaction, so the next decision on every instance meets it.
import type { Deps } from '../../deps.js';
import type { Principal } from '../../http/context.js';
import { AppError, notFound } from '../../http/errors.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import { findInScope, ORGANIZATION } from '../tenants/index.js';
import { adminsOfBothSides, bumpAuthzEpoch } from '../../access/repo.js';
import { type FreezeInfo as FreezeRecord, speaksForPartner } from '../../access/principal.js';
import { BUDGET_DIMENSIONS } from '../../platform/budget-store.js';
import type { Executor } from '../../db/connect.js';
import { governorMails } from './mails.js';
import {
  adminsOfPartnerAndOrgs,
  approveCoSignRow,
  coSignById,
  type CoSignRow,
  frozenOrgs,
  insertCoSign,
  listCoSigns,
  orgFreezeForUpdate,
  partnerFreezeForUpdate,
  setOrgFreeze,
  setPartnerFreeze,
} from './repo.js';

const nameOf = (p: Principal) =>
  p.actorType === 'service_account' ? (p.serviceAccount?.name ?? p.email) : p.user?.name || p.email;

const freezeJson = (f: FreezeRecord | null) =>
  f ? { side: f.side, reason: f.reason, at: f.at, byName: f.byName } : null;

function freezeOf(p: Principal, reason: string, at: Date): FreezeRecord {
  return {
    reason,
    at: at.toISOString(),
    side: speaksForPartner(p) ? 'partner' : 'organization',
    byType: p.actorType,
    byId: p.userId,
    byName: nameOf(p),
  };
}

async function mailFreeze(
  deps: Deps,
  tx: Executor,
  emails: string[],
  m: { frozen: boolean; where: string; partnerName: string; actor: string; reason: string | null },
) {
  for (const email of emails)
    await deps.outbox.enqueue(tx, governorMails.freezeChanged(email, { ...m, url: `${deps.config.appUrl}/audit` }));
}

/** POST /orgs/partners/me/freeze: every destructive permission of the partner's staff and service accounts stops. */
export async function freezePartner(deps: Deps, p: Principal, reason: string, meta: AuditRequestMeta) {
  const now = deps.clock.now();
  const out = await deps.db.transaction(async (tx) => {
    const partner = await partnerFreezeForUpdate(tx, p.partnerId!);
    if (!partner) throw notFound('partner');
    if (partner.freeze) throw new AppError('already_frozen');
    const freeze = freezeOf(p, reason, now);
    await setPartnerFreeze(tx, partner.id, freeze, now);
    await bumpAuthzEpoch(tx);
    await deps.audit.record(
      tx,
      {
        action: 'governor.freeze',
        actor: actorOf(p),
        partnerId: partner.id,
        resourceType: 'partner',
        resourceId: partner.id,
        details: { scope: 'partner', reason },
      },
      meta,
    );
    const where = `every member and service account of ${partner.name}`;
    await mailFreeze(deps, tx, await adminsOfPartnerAndOrgs(tx, partner.id), {
      frozen: true,
      where,
      partnerName: partner.name,
      actor: freeze.byName,
      reason,
    });
    return { frozen: true, freeze: freezeJson(freeze) };
  });
  deps.outbox.kick();
  return out;
}

/** DELETE /orgs/partners/me/freeze. */
export async function thawPartner(deps: Deps, p: Principal, meta: AuditRequestMeta) {
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    const partner = await partnerFreezeForUpdate(tx, p.partnerId!);
    if (!partner) throw notFound('partner');
    if (!partner.freeze) return;
    await setPartnerFreeze(tx, partner.id, null, now);
    await bumpAuthzEpoch(tx);
    await deps.audit.record(
      tx,
      {
        action: 'governor.unfreeze',
        actor: actorOf(p),
        partnerId: partner.id,
        resourceType: 'partner',
        resourceId: partner.id,
        details: { scope: 'partner', frozenSince: partner.freeze.at, frozenBy: partner.freeze.byName },
      },
      meta,
    );
    await mailFreeze(deps, tx, await adminsOfPartnerAndOrgs(tx, partner.id), {
      frozen: false,
      where: `the members and service accounts of ${partner.name}`,
      partnerName: partner.name,
      actor: nameOf(p),
      reason: null,
    });
  });
  deps.outbox.kick();
  return { frozen: false, freeze: null };
}

/** POST /orgs/organizations/:id/freeze: everyone's destructive permissions in the organisation stop. */
export async function freezeOrg(deps: Deps, p: Principal, orgId: string, reason: string, meta: AuditRequestMeta) {
  const now = deps.clock.now();
  const out = await deps.db.transaction(async (tx) => {
    const { row } = await findInScope(tx, p, ORGANIZATION, orgId);
    const org = await orgFreezeForUpdate(tx, row.id);
    if (!org) throw notFound('organization');
    if (org.freeze) throw new AppError('already_frozen');
    const freeze = freezeOf(p, reason, now);
    await setOrgFreeze(tx, org.id, freeze, now);
    await bumpAuthzEpoch(tx);
    await deps.audit.record(
      tx,
      {
        action: 'governor.freeze',
        actor: actorOf(p),
        partnerId: row.partnerId,
        orgId: org.id,
        resourceType: 'organization',
        resourceId: org.id,
        details: { scope: 'organization', side: freeze.side, reason },
      },
      meta,
    );
    const side = await adminsOfBothSides(tx, row.partnerId, org.id);
    await mailFreeze(deps, tx, side.emails, {
      frozen: true,
      where: `everyone acting in ${side.orgName}`,
      partnerName: side.partnerName,
      actor: freeze.byName,
      reason,
    });
    return { frozen: true, freeze: freezeJson(freeze) };
  });
  deps.outbox.kick();
  return out;
}

/** DELETE /orgs/organizations/:id/freeze: only the side that set the freeze lifts it. */
export async function thawOrg(deps: Deps, p: Principal, orgId: string, meta: AuditRequestMeta) {
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    const { row } = await findInScope(tx, p, ORGANIZATION, orgId);
    const org = await orgFreezeForUpdate(tx, row.id);
    if (!org) throw notFound('organization');
    if (!org.freeze) return;
    if (org.freeze.side !== (speaksForPartner(p) ? 'partner' : 'organization')) throw new AppError('freeze_other_side');
    await setOrgFreeze(tx, org.id, null, now);
    await bumpAuthzEpoch(tx);
    await deps.audit.record(
      tx,
      {
        action: 'governor.unfreeze',
        actor: actorOf(p),
        partnerId: row.partnerId,
        orgId: org.id,
        resourceType: 'organization',
        resourceId: org.id,
        details: { scope: 'organization', frozenSince: org.freeze.at, frozenBy: org.freeze.byName },
      },
      meta,
    );
    const side = await adminsOfBothSides(tx, row.partnerId, org.id);
    await mailFreeze(deps, tx, side.emails, {
      frozen: false,
      where: `everyone acting in ${side.orgName}`,
      partnerName: side.partnerName,
      actor: nameOf(p),
      reason: null,
    });
  });
  deps.outbox.kick();
  return { frozen: false, freeze: null };
}

/** GET /governor: the partner's freeze, its organisations' freezes, its budget and co-signature policy. */
export async function governorStatus(deps: Deps, p: Principal) {
  const g = await deps.governor.cache.of(p.partnerId, p.epoch);
  const orgs = await frozenOrgs(deps.db, p.partnerId!);
  return {
    freeze: freezeJson(g.partner),
    frozenOrganizations: orgs.map((o) => ({ id: o.id, name: o.name, freeze: freezeJson(o.freeze)! })),
    budget: g.budget,
    coSign: g.coSign,
    dimensions: [...BUDGET_DIMENSIONS],
  };
}

function coSignStatus(r: CoSignRow, now: Date): 'pending' | 'approved' | 'expired' | 'used' {
  if (r.status === 'pending') return r.expiresAt > now ? 'pending' : 'expired';
  if (r.remaining <= 0) return 'used';
  return r.unlockExpiresAt && r.unlockExpiresAt > now ? 'approved' : 'expired';
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function coSignJson(r: CoSignRow, now: Date) {
  return {
    id: r.id,
    principalType: r.principalType,
    principalId: r.principalId,
    principalName: r.principalName,
    reason: r.reason,
    status: coSignStatus(r, now),
    actions: r.actions,
    remaining: r.remaining,
    createdAt: r.createdAt.toISOString(),
    expiresAt: r.expiresAt.toISOString(),
    approvedByName: r.approvedByName,
    approvedAt: iso(r.approvedAt),
    unlockExpiresAt: iso(r.unlockExpiresAt),
  };
}

/** POST /governor/co-signs: the caller (over a budget) asks another Partner Admin to let its next actions through. */
export async function requestCoSign(deps: Deps, p: Principal, reason: string, meta: AuditRequestMeta) {
  const now = deps.clock.now();
  const { coSign } = await deps.governor.cache.of(p.partnerId, p.epoch);
  return deps.db.transaction(async (tx) => {
    const row = await insertCoSign(tx, {
      partnerId: p.partnerId!,
      principalType: p.actorType,
      principalId: p.userId,
      principalName: nameOf(p),
      reason,
      actions: coSign.actions,
      remaining: coSign.actions,
      createdAt: now,
      expiresAt: new Date(now.getTime() + coSign.minutes * 60_000),
    });
    await deps.audit.record(
      tx,
      {
        action: 'governor.co_sign.request',
        actor: actorOf(p),
        partnerId: p.partnerId,
        orgId: p.tenantKind === 'organization' ? p.orgId : null,
        resourceType: 'co_sign_request',
        resourceId: row.id,
        details: { reason, actions: row.actions },
      },
      meta,
    );
    return coSignJson(row, now);
  });
}

/** POST /governor/co-signs/:id/approve: another Partner Admin of the same partner, within the request's time. */
export async function approveCoSign(deps: Deps, p: Principal, id: string, meta: AuditRequestMeta) {
  const now = deps.clock.now();
  const { coSign } = await deps.governor.cache.of(p.partnerId, p.epoch);
  return deps.db.transaction(async (tx) => {
    const row = await coSignById(tx, id, p.partnerId!);
    if (!row) throw notFound('co-sign request');
    if (row.principalId === p.userId) throw new AppError('co_sign_not_allowed');
    const approved = await approveCoSignRow(
      tx,
      row.id,
      { userId: p.userId, name: nameOf(p) },
      now,
      new Date(now.getTime() + coSign.minutes * 60_000),
    );
    if (!approved) throw new AppError('co_sign_closed');
    await deps.audit.record(
      tx,
      {
        action: 'governor.co_sign.approve',
        actor: actorOf(p),
        partnerId: p.partnerId,
        resourceType: 'co_sign_request',
        resourceId: row.id,
        details: {
          principalType: row.principalType,
          principalId: row.principalId,
          principalName: row.principalName,
          actions: row.actions,
        },
      },
      meta,
    );
    return coSignJson(approved, now);
  });
}

/** GET /governor/co-signs: a Partner Admin sees the partner's; anyone else their own. */
export async function listCoSignRequests(deps: Deps, p: Principal, all: boolean, status?: string) {
  const now = deps.clock.now();
  const rows = await listCoSigns(deps.db, p.partnerId!, all ? null : p.userId, 200);
  const data = rows.map((r) => coSignJson(r, now)).filter((r) => !status || r.status === status);
  return { data };
}

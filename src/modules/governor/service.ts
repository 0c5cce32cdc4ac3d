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

/** A freeze set (`next`) or lifted (`previous` was in force) on the partner (`orgId` null) or one organisation. */
interface FreezeChange {
  partnerId: string;
  orgId: string | null;
  /** The partner's name, as the partner's own freeze read it with its row (organisation freezes read it with the admins). */
  partnerName?: string;
  next: FreezeRecord | null;
  previous: FreezeRecord | null;
  reason: string | null;
}

/**
 * The one way a freeze changes: stored, the authorisation epoch moved in the same transaction (so the next decision
 * on every instance meets it), audited, and mailed to the admins of both sides.
 */
async function changeFreeze(deps: Deps, tx: Executor, p: Principal, c: FreezeChange, meta: AuditRequestMeta) {
  const now = deps.clock.now();
  if (c.orgId) await setOrgFreeze(tx, c.orgId, c.next, now);
  else await setPartnerFreeze(tx, c.partnerId, c.next, now);
  await bumpAuthzEpoch(tx);
  const scope = c.orgId ? 'organization' : 'partner';
  const details = c.next
    ? { scope, ...(c.orgId ? { side: c.next.side } : {}), reason: c.reason }
    : { scope, frozenSince: c.previous?.at, frozenBy: c.previous?.byName };
  await deps.audit.record(
    tx,
    {
      action: c.next ? 'governor.freeze' : 'governor.unfreeze',
      actor: actorOf(p),
      partnerId: c.partnerId,
      ...(c.orgId ? { orgId: c.orgId } : {}),
      resourceType: scope,
      resourceId: c.orgId ?? c.partnerId,
      details,
    },
    meta,
  );
  const to = c.orgId
    ? await adminsOfBothSides(tx, c.partnerId, c.orgId)
    : { emails: await adminsOfPartnerAndOrgs(tx, c.partnerId), partnerName: c.partnerName ?? '', orgName: null };
  const { partnerName } = to;
  const where = c.orgId
    ? `everyone acting in ${to.orgName}`
    : c.next
      ? `every member and service account of ${partnerName}`
      : `the members and service accounts of ${partnerName}`;
  const m = { frozen: c.next !== null, where, partnerName, actor: c.next?.byName ?? nameOf(p), reason: c.reason };
  for (const email of to.emails)
    await deps.outbox.enqueue(tx, governorMails.freezeChanged(email, { ...m, url: `${deps.config.appUrl}/audit` }));
}

/** POST /orgs/partners/me/freeze: every destructive permission of the partner's staff and service accounts stops. */
export async function freezePartner(deps: Deps, p: Principal, reason: string, meta: AuditRequestMeta) {
  const out = await deps.db.transaction(async (tx) => {
    const partner = await partnerFreezeForUpdate(tx, p.partnerId!);
    if (!partner) throw notFound('partner');
    if (partner.freeze) throw new AppError('already_frozen');
    const next = freezeOf(p, reason, deps.clock.now());
    const change = { partnerId: partner.id, partnerName: partner.name, orgId: null, next, previous: null, reason };
    await changeFreeze(deps, tx, p, change, meta);
    return { frozen: true, freeze: freezeJson(next) };
  });
  deps.outbox.kick();
  return out;
}

/** DELETE /orgs/partners/me/freeze. */
export async function thawPartner(deps: Deps, p: Principal, meta: AuditRequestMeta) {
  await deps.db.transaction(async (tx) => {
    const partner = await partnerFreezeForUpdate(tx, p.partnerId!);
    if (!partner) throw notFound('partner');
    if (!partner.freeze) return;
    const change = {
      partnerId: partner.id,
      partnerName: partner.name,
      orgId: null,
      next: null,
      previous: partner.freeze,
      reason: null,
    };
    await changeFreeze(deps, tx, p, change, meta);
  });
  deps.outbox.kick();
  return { frozen: false, freeze: null };
}

/** POST /orgs/organizations/:id/freeze: everyone's destructive permissions in the organisation stop. */
export async function freezeOrg(deps: Deps, p: Principal, orgId: string, reason: string, meta: AuditRequestMeta) {
  const out = await deps.db.transaction(async (tx) => {
    const { row } = await findInScope(tx, p, ORGANIZATION, orgId);
    const org = await orgFreezeForUpdate(tx, row.id);
    if (!org) throw notFound('organization');
    if (org.freeze) throw new AppError('already_frozen');
    const next = freezeOf(p, reason, deps.clock.now());
    await changeFreeze(deps, tx, p, { partnerId: row.partnerId, orgId: org.id, next, previous: null, reason }, meta);
    return { frozen: true, freeze: freezeJson(next) };
  });
  deps.outbox.kick();
  return out;
}

/** DELETE /orgs/organizations/:id/freeze: only the side that set the freeze lifts it. */
export async function thawOrg(deps: Deps, p: Principal, orgId: string, meta: AuditRequestMeta) {
  await deps.db.transaction(async (tx) => {
    const { row } = await findInScope(tx, p, ORGANIZATION, orgId);
    const org = await orgFreezeForUpdate(tx, row.id);
    if (!org) throw notFound('organization');
    if (!org.freeze) return;
    if (org.freeze.side !== (speaksForPartner(p) ? 'partner' : 'organization')) throw new AppError('freeze_other_side');
    const change = { partnerId: row.partnerId, orgId: org.id, next: null, previous: org.freeze, reason: null };
    await changeFreeze(deps, tx, p, change, meta);
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

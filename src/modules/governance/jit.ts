// Just-in-time access to an organisation: a partner member eligible for an organisation (orgAccess
// `eligible` with orgIds, or standing access to one under mspAccess approval_required) requests access for a duration;
// the organisation's policy (jitApproval) grants it at once or has a Partner Admin or one of its own admins approve it.
// A grant is read with the session on every request (authenticate's GRANTS_SQL) and decided in decision.ts's
// organisation-access step: it widens the scope for its duration only, and revocation and expiry bite on the next request.
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import { recordGrantExpiry } from '../../access/grants.js';
import type { Principal } from '../../http/context.js';
import { AppError, notFound } from '../../http/errors.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import { jitApprovalOf, jitMaxMinutesOf, mspAccessOf } from '../../access/settings.js';
import { isOrgAdmin, isPartnerAdmin } from './admins.js';
import { withName, withNames } from './jit-names.js';
import type { AccessRequestBody, DecisionBody, GrantListQuery, RequestListQuery } from './jit-schemas.js';
import {
  type AccessGrantRow as GrantRow,
  type AccessRequestRow as RequestRow,
  decideAccessRequest,
  type GrantAudience,
  insertAccessGrant,
  insertAccessRequest,
  listAccessGrants,
  listAccessRequests,
  lockAccessRequest,
  lockGrantWithRequest,
  overdueGrantIds,
  partnerOrganization,
  partnerSettings,
  type RequestAudience,
  revokeAccessGrant,
  siteOfOrganization,
} from './repo.js';

const fieldError = (field: string, msg: string) =>
  new AppError('validation_failed', msg, { details: { fieldErrors: { [field]: [msg] }, formErrors: [] } });

function grantState(g: GrantRow, now: number): 'active' | 'expired' | 'revoked' {
  if (g.revokedAt) return 'revoked';
  return g.expiredAt || g.expiresAt.getTime() <= now ? 'expired' : 'active';
}

function grantJson(g: GrantRow, r: Pick<RequestRow, 'reason' | 'ticketRef'>, now: number) {
  return {
    id: g.id,
    requestId: g.requestId,
    partnerId: g.partnerId,
    orgId: g.orgId,
    siteId: g.siteId,
    userId: g.userId,
    approval: g.approval,
    approvedBy: g.approvedBy,
    startsAt: g.startsAt.toISOString(),
    expiresAt: g.expiresAt.toISOString(),
    revokedAt: g.revokedAt?.toISOString() ?? null,
    revokedBy: g.revokedBy,
    state: grantState(g, now),
    reason: r.reason,
    ticketRef: r.ticketRef,
  };
}

function requestJson(r: RequestRow, g: GrantRow | null, now: number) {
  return {
    id: r.id,
    partnerId: r.partnerId,
    orgId: r.orgId,
    siteId: r.siteId,
    userId: r.userId,
    durationMinutes: r.durationMinutes,
    reason: r.reason,
    ticketRef: r.ticketRef,
    approval: r.approval,
    status: r.status,
    decidedBy: r.decidedBy,
    decidedAt: r.decidedAt?.toISOString() ?? null,
    decisionNote: r.decisionNote,
    createdAt: r.createdAt.toISOString(),
    grant: g ? grantJson(g, r, now) : null,
  };
}

const auditOf = (r: RequestRow, extra: Record<string, unknown> = {}) => ({
  requestId: r.id,
  userId: r.userId,
  siteId: r.siteId,
  durationMinutes: r.durationMinutes,
  approval: r.approval,
  reason: r.reason,
  ticketRef: r.ticketRef,
  ...extra,
});

function assertPartnerPerson(p: Principal) {
  if (p.actorType !== 'user') throw new AppError('service_account_not_allowed');
  if (p.tenantKind !== 'partner' || !p.partnerId)
    throw new AppError('forbidden', "Just-in-time access is requested by the partner's members.");
}

/** Opens the grant of an approved request, from now for its duration, audited `access.grant`. */
async function openGrant(
  deps: Deps,
  tx: Executor,
  r: RequestRow,
  approvedBy: string | null,
  actor: Principal,
  meta: AuditRequestMeta,
) {
  const now = deps.clock.now();
  const g = await insertAccessGrant(tx, {
    requestId: r.id,
    partnerId: r.partnerId,
    orgId: r.orgId,
    siteId: r.siteId,
    userId: r.userId,
    approval: r.approval,
    approvedBy,
    startsAt: now,
    expiresAt: new Date(now.getTime() + r.durationMinutes * 60_000),
  });
  await deps.audit.record(
    tx,
    {
      action: 'access.grant',
      actor: actorOf(actor),
      partnerId: r.partnerId,
      orgId: r.orgId,
      resourceType: 'access_grant',
      resourceId: g.id,
      details: auditOf(r, { expiresAt: g.expiresAt.toISOString() }),
    },
    meta,
  );
  return g;
}

export async function requestAccess(deps: Deps, p: Principal, body: AccessRequestBody, meta: AuditRequestMeta) {
  assertPartnerPerson(p);
  const org = await partnerOrganization(deps.db, body.orgId, p.partnerId!);
  if (!org) throw notFound('organization');
  const msp = mspAccessOf(org.settings);
  const standing =
    p.orgAccess === 'all' ||
    (p.orgAccess === 'selected' && p.orgIds.includes(org.id)) ||
    (p.orgAccess === 'all_except' && !(p.excludedOrgIds ?? []).includes(org.id));
  const eligible =
    (p.orgAccess === 'eligible' && (p.eligibleOrgIds ?? []).includes(org.id)) ||
    (standing && msp === 'approval_required');
  if (!eligible) throw new AppError('jit_not_eligible');
  if (msp === 'suspended') throw new AppError('msp_access_denied');
  if (body.siteId) {
    if (!(await siteOfOrganization(deps.db, body.siteId, org.id))) throw notFound('site');
  }
  const max = jitMaxMinutesOf(await partnerSettings(deps.db, p.partnerId!));
  if (body.durationMinutes > max)
    throw fieldError('durationMinutes', `At most ${max} minutes (the partner's settings.security.jitMaxMinutes)`);
  const approval = jitApprovalOf(org.settings);
  const out = await deps.db.transaction(async (tx) => {
    const now = deps.clock.now();
    const r = await insertAccessRequest(tx, {
      partnerId: p.partnerId!,
      orgId: org.id,
      siteId: body.siteId ?? null,
      userId: p.userId,
      durationMinutes: body.durationMinutes,
      reason: body.reason,
      ticketRef: body.ticketRef ?? null,
      approval,
      createdAt: now,
      ...(approval === 'auto' ? { status: 'approved' as const, decidedAt: now } : {}),
    });
    await deps.audit.record(
      tx,
      {
        action: 'access.request',
        actor: actorOf(p),
        partnerId: r.partnerId,
        orgId: r.orgId,
        resourceType: 'access_request',
        resourceId: r.id,
        details: auditOf(r),
      },
      meta,
    );
    const g = approval === 'auto' ? await openGrant(deps, tx, r, null, p, meta) : null;
    return requestJson(r, g, now.getTime());
  });
  return withName(deps.db, out);
}

/** Requests the caller may approve (pending, by the organisation's policy). */
function approverAudience(p: Principal): RequestAudience | undefined {
  if (isPartnerAdmin(p)) return { kind: 'partner_admin', partnerId: p.partnerId! };
  if (p.tenantKind === 'organization' && p.orgId && isOrgAdmin(p, p.orgId))
    return { kind: 'customer_admin', orgId: p.orgId };
  return undefined;
}

export async function listRequests(deps: Deps, p: Principal, q: RequestListQuery) {
  if (p.actorType !== 'user') throw new AppError('service_account_not_allowed');
  const own: RequestAudience | undefined =
    p.tenantKind === 'partner' ? { kind: 'own', userId: p.userId, partnerId: p.partnerId! } : undefined;
  const approvable = approverAudience(p);
  const who = q.view === 'approvable' ? [approvable] : q.view === 'own' ? [own] : [own, approvable];
  const audiences = who.filter((a): a is RequestAudience => a !== undefined);
  if (audiences.length === 0) return { data: [] };
  const rows = await listAccessRequests(deps.db, audiences, q.status, q.limit);
  const now = deps.clock.now().getTime();
  return {
    data: await withNames(
      deps.db,
      rows.map((x) => requestJson(x.r, x.g, now)),
    ),
  };
}

/** Approves or denies a pending request: only the approver the organisation's policy names, never the requester. */
export async function decideRequest(
  deps: Deps,
  p: Principal,
  id: string,
  verdict: 'approve' | 'deny',
  body: DecisionBody,
  meta: AuditRequestMeta,
) {
  if (p.actorType !== 'user') throw new AppError('service_account_not_allowed');
  const out = await deps.db.transaction(async (tx) => {
    const r = await lockAccessRequest(tx, id);
    // Outside the caller's partner (or, for an organisation member, outside its organisation): it does not exist here.
    const visible =
      r &&
      (p.tenantKind === 'partner'
        ? r.partnerId === p.partnerId
        : p.tenantKind === 'organization' && r.orgId === p.orgId);
    if (!r || !visible) throw notFound('access request');
    if (r.userId === p.userId)
      throw new AppError('forbidden_self_action', 'You cannot approve or deny your own access request.');
    const mayApprove =
      r.approval === 'partner_admin'
        ? isPartnerAdmin(p)
        : r.approval === 'customer_admin'
          ? isOrgAdmin(p, r.orgId)
          : false;
    if (!mayApprove)
      throw new AppError(
        'jit_approver_required',
        r.approval === 'customer_admin'
          ? "One of the organization's admins approves this request."
          : 'A Partner Admin approves this request.',
      );
    if (r.status !== 'pending') throw new AppError('access_request_not_pending');
    const now = deps.clock.now();
    const decided = await decideAccessRequest(tx, id, {
      status: verdict === 'approve' ? 'approved' : 'denied',
      decidedBy: p.userId,
      decidedAt: now,
      decisionNote: body.note ?? null,
    });
    await deps.audit.record(
      tx,
      {
        action: verdict === 'approve' ? 'access.approve' : 'access.deny',
        actor: actorOf(p),
        partnerId: r.partnerId,
        orgId: r.orgId,
        resourceType: 'access_request',
        resourceId: r.id,
        details: auditOf(decided, { note: body.note ?? null }),
      },
      meta,
    );
    const g = verdict === 'approve' ? await openGrant(deps, tx, decided, p.userId, p, meta) : null;
    return requestJson(decided, g, now.getTime());
  });
  return withName(deps.db, out);
}

/** Grants the caller sees: a member its own; a Partner Admin every one of the partner; an organisation admin its organisation's. */
export async function listGrants(deps: Deps, p: Principal, q: GrantListQuery) {
  if (p.actorType !== 'user') throw new AppError('service_account_not_allowed');
  const who: GrantAudience | undefined =
    p.tenantKind === 'partner'
      ? isPartnerAdmin(p)
        ? { kind: 'partner', partnerId: p.partnerId! }
        : { kind: 'member', partnerId: p.partnerId!, userId: p.userId }
      : p.tenantKind === 'organization' && p.orgId && isOrgAdmin(p, p.orgId)
        ? { kind: 'organization', orgId: p.orgId }
        : undefined;
  if (!who) return { data: [] };
  const now = deps.clock.now();
  // The sweep: grants past their end that no request has observed yet are recorded expired now.
  const overdue = await overdueGrantIds(deps.db, who, now);
  if (overdue.length) {
    await deps.db.transaction(async (tx) => {
      for (const id of overdue) await recordGrantExpiry(tx, deps.audit, id, now, 'sweep');
    });
  }
  const rows = await listAccessGrants(deps.db, who, q.state === 'active', now, q.limit);
  return {
    data: await withNames(
      deps.db,
      rows.map((x) => grantJson(x.g, x, now.getTime())),
    ),
  };
}

/** Revokes a grant in force: the member itself, a Partner Admin, or an admin of the organisation. Bites on the next request. */
export async function revokeGrant(deps: Deps, p: Principal, id: string, meta: AuditRequestMeta) {
  if (p.actorType !== 'user') throw new AppError('service_account_not_allowed');
  const out = await deps.db.transaction(async (tx) => {
    const row = await lockGrantWithRequest(tx, id);
    const g = row?.g;
    const visible =
      g &&
      (p.tenantKind === 'partner'
        ? g.partnerId === p.partnerId && (g.userId === p.userId || isPartnerAdmin(p))
        : isOrgAdmin(p, g.orgId));
    if (!row || !g || !visible) throw notFound('access grant');
    const now = deps.clock.now();
    if (grantState(g, now.getTime()) !== 'active') throw new AppError('conflict', 'The grant has already ended.');
    const revoked = await revokeAccessGrant(tx, id, now, p.userId);
    await deps.audit.record(
      tx,
      {
        action: 'access.revoke',
        actor: actorOf(p),
        partnerId: g.partnerId,
        orgId: g.orgId,
        resourceType: 'access_grant',
        resourceId: g.id,
        details: auditOf(row.r, { expiresAt: g.expiresAt.toISOString() }),
      },
      meta,
    );
    return grantJson(revoked, row.r, now.getTime());
  });
  return withName(deps.db, out);
}

// Just-in-time access to an organisation (issue 18 §1): a partner member eligible for an organisation (orgAccess
// `eligible` with orgIds, or standing access to one under mspAccess approval_required) requests access for a duration;
// the organisation's policy (jitApproval) grants it at once or has a Partner Admin or one of its own admins approve it.
// A grant is read with the session on every request (authenticate's GRANTS_SQL) and decided in decision.ts's
// organisation-access step: it widens the scope for its duration only, and revocation and expiry bite on the next request.
import { and, desc, eq, isNull, or, sql, type SQL } from 'drizzle-orm';
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import { accessGrants, accessRequests, organizations, partners, sites } from '../../db/schema/index.js';
import { recordGrantExpiry } from '../../access/grants.js';
import type { Principal } from '../../http/context.js';
import { AppError, notFound } from '../../http/errors.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import { jitApprovalOf, jitMaxMinutesOf, mspAccessOf } from '../tenants/index.js';
import { isOrgAdmin, isPartnerAdmin } from './admins.js';
import type { AccessRequestBody, DecisionBody, GrantListQuery, RequestListQuery } from './jit-schemas.js';

type RequestRow = typeof accessRequests.$inferSelect;
type GrantRow = typeof accessGrants.$inferSelect;

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
  if (p.scope !== 'partner' || !p.partnerId)
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
  const [g] = await tx
    .insert(accessGrants)
    .values({
      requestId: r.id,
      partnerId: r.partnerId,
      orgId: r.orgId,
      siteId: r.siteId,
      userId: r.userId,
      approval: r.approval,
      approvedBy,
      startsAt: now,
      expiresAt: new Date(now.getTime() + r.durationMinutes * 60_000),
    })
    .returning();
  await deps.audit.record(
    tx,
    {
      action: 'access.grant',
      actor: actorOf(actor),
      partnerId: r.partnerId,
      orgId: r.orgId,
      resourceType: 'access_grant',
      resourceId: g!.id,
      details: auditOf(r, { expiresAt: g!.expiresAt.toISOString() }),
    },
    meta,
  );
  return g!;
}

export async function requestAccess(deps: Deps, p: Principal, body: AccessRequestBody, meta: AuditRequestMeta) {
  assertPartnerPerson(p);
  const [org] = await deps.db
    .select({ id: organizations.id, settings: organizations.settings })
    .from(organizations)
    .where(and(eq(organizations.id, body.orgId), eq(organizations.partnerId, p.partnerId!)));
  if (!org) throw notFound('organization');
  const msp = mspAccessOf(org.settings);
  const standing = p.orgAccess === 'all' || (p.orgAccess === 'selected' && p.orgIds.includes(org.id));
  const eligible =
    (p.orgAccess === 'eligible' && (p.eligibleOrgIds ?? []).includes(org.id)) ||
    (standing && msp === 'approval_required');
  if (!eligible) throw new AppError('jit_not_eligible');
  if (msp === 'suspended') throw new AppError('msp_access_denied');
  if (body.siteId) {
    const [site] = await deps.db
      .select({ id: sites.id })
      .from(sites)
      .where(and(eq(sites.id, body.siteId), eq(sites.orgId, org.id)));
    if (!site) throw notFound('site');
  }
  const [partner] = await deps.db
    .select({ settings: partners.settings })
    .from(partners)
    .where(eq(partners.id, p.partnerId!));
  const max = jitMaxMinutesOf(partner?.settings);
  if (body.durationMinutes > max)
    throw fieldError('durationMinutes', `At most ${max} minutes (the partner's settings.security.jitMaxMinutes)`);
  const approval = jitApprovalOf(org.settings);
  const out = await deps.db.transaction(async (tx) => {
    const now = deps.clock.now();
    const [r] = await tx
      .insert(accessRequests)
      .values({
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
      })
      .returning();
    await deps.audit.record(
      tx,
      {
        action: 'access.request',
        actor: actorOf(p),
        partnerId: r!.partnerId,
        orgId: r!.orgId,
        resourceType: 'access_request',
        resourceId: r!.id,
        details: auditOf(r!),
      },
      meta,
    );
    const g = approval === 'auto' ? await openGrant(deps, tx, r!, null, p, meta) : null;
    return requestJson(r!, g, now.getTime());
  });
  return out;
}

/** Requests the caller may approve (pending, by the organisation's policy) and the caller's own. */
function approverCondition(p: Principal): SQL | undefined {
  if (isPartnerAdmin(p))
    return and(
      eq(accessRequests.partnerId, p.partnerId!),
      eq(accessRequests.approval, 'partner_admin'),
      eq(accessRequests.status, 'pending'),
    );
  if (p.scope === 'organization' && p.orgId && isOrgAdmin(p, p.orgId))
    return and(
      eq(accessRequests.orgId, p.orgId),
      eq(accessRequests.approval, 'customer_admin'),
      eq(accessRequests.status, 'pending'),
    );
  return undefined;
}

export async function listRequests(deps: Deps, p: Principal, q: RequestListQuery) {
  if (p.actorType !== 'user') throw new AppError('service_account_not_allowed');
  const own =
    p.scope === 'partner'
      ? and(eq(accessRequests.userId, p.userId), eq(accessRequests.partnerId, p.partnerId!))
      : undefined;
  const approvable = approverCondition(p);
  const who = q.view === 'approvable' ? approvable : q.view === 'own' ? own : or(own, approvable);
  if (!who) return { data: [] };
  const rows = await deps.db
    .select({ r: accessRequests, g: accessGrants })
    .from(accessRequests)
    .leftJoin(accessGrants, eq(accessGrants.requestId, accessRequests.id))
    .where(and(who, q.status ? eq(accessRequests.status, q.status) : undefined))
    .orderBy(desc(accessRequests.createdAt), desc(accessRequests.id))
    .limit(q.limit);
  const now = deps.clock.now().getTime();
  return { data: rows.map((x) => requestJson(x.r, x.g, now)) };
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
    const [r] = await tx.select().from(accessRequests).where(eq(accessRequests.id, id)).for('update');
    // Outside the caller's partner (or, for an organisation member, outside its organisation): it does not exist here.
    const visible =
      r && (p.scope === 'partner' ? r.partnerId === p.partnerId : p.scope === 'organization' && r.orgId === p.orgId);
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
    const [decided] = await tx
      .update(accessRequests)
      .set({
        status: verdict === 'approve' ? 'approved' : 'denied',
        decidedBy: p.userId,
        decidedAt: now,
        decisionNote: body.note ?? null,
      })
      .where(eq(accessRequests.id, id))
      .returning();
    await deps.audit.record(
      tx,
      {
        action: verdict === 'approve' ? 'access.approve' : 'access.deny',
        actor: actorOf(p),
        partnerId: r.partnerId,
        orgId: r.orgId,
        resourceType: 'access_request',
        resourceId: r.id,
        details: auditOf(decided!, { note: body.note ?? null }),
      },
      meta,
    );
    const g = verdict === 'approve' ? await openGrant(deps, tx, decided!, p.userId, p, meta) : null;
    return requestJson(decided!, g, now.getTime());
  });
  return out;
}

/** Grants the caller sees: a member its own; a Partner Admin every one of the partner; an organisation admin its organisation's. */
export async function listGrants(deps: Deps, p: Principal, q: GrantListQuery) {
  if (p.actorType !== 'user') throw new AppError('service_account_not_allowed');
  const who =
    p.scope === 'partner'
      ? isPartnerAdmin(p)
        ? eq(accessGrants.partnerId, p.partnerId!)
        : and(eq(accessGrants.partnerId, p.partnerId!), eq(accessGrants.userId, p.userId))
      : p.scope === 'organization' && p.orgId && isOrgAdmin(p, p.orgId)
        ? eq(accessGrants.orgId, p.orgId)
        : undefined;
  if (!who) return { data: [] };
  const now = deps.clock.now();
  // The sweep: grants past their end that no request has observed yet are recorded expired now.
  const overdue = await deps.db
    .select({ id: accessGrants.id })
    .from(accessGrants)
    .where(
      and(
        who,
        isNull(accessGrants.revokedAt),
        isNull(accessGrants.expiredAt),
        sql`${accessGrants.expiresAt} <= ${now}`,
      ),
    )
    .limit(200);
  if (overdue.length) {
    await deps.db.transaction(async (tx) => {
      for (const g of overdue) await recordGrantExpiry(tx, deps.audit, g.id, now, 'sweep');
    });
  }
  const active = and(
    isNull(accessGrants.revokedAt),
    isNull(accessGrants.expiredAt),
    sql`${accessGrants.expiresAt} > ${now}`,
  );
  const rows = await deps.db
    .select({ g: accessGrants, reason: accessRequests.reason, ticketRef: accessRequests.ticketRef })
    .from(accessGrants)
    .innerJoin(accessRequests, eq(accessRequests.id, accessGrants.requestId))
    .where(and(who, q.state === 'active' ? active : undefined))
    .orderBy(desc(accessGrants.startsAt), desc(accessGrants.id))
    .limit(q.limit);
  return { data: rows.map((x) => grantJson(x.g, x, now.getTime())) };
}

/** Revokes a grant in force: the member itself, a Partner Admin, or an admin of the organisation. Bites on the next request. */
export async function revokeGrant(deps: Deps, p: Principal, id: string, meta: AuditRequestMeta) {
  if (p.actorType !== 'user') throw new AppError('service_account_not_allowed');
  return deps.db.transaction(async (tx) => {
    const [row] = await tx
      .select({ g: accessGrants, r: accessRequests })
      .from(accessGrants)
      .innerJoin(accessRequests, eq(accessRequests.id, accessGrants.requestId))
      .where(eq(accessGrants.id, id))
      .for('update', { of: accessGrants });
    const g = row?.g;
    const visible =
      g &&
      (p.scope === 'partner'
        ? g.partnerId === p.partnerId && (g.userId === p.userId || isPartnerAdmin(p))
        : isOrgAdmin(p, g.orgId));
    if (!row || !g || !visible) throw notFound('access grant');
    const now = deps.clock.now();
    if (grantState(g, now.getTime()) !== 'active') throw new AppError('conflict', 'The grant has already ended.');
    const [revoked] = await tx
      .update(accessGrants)
      .set({ revokedAt: now, revokedBy: p.userId })
      .where(eq(accessGrants.id, id))
      .returning();
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
    return grantJson(revoked!, row.r, now.getTime());
  });
}

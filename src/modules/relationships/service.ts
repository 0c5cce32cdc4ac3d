// Delegated-access relationships: the partner drafts what its staff may do in one of its organisations (a set
// of its roles, the reach, a duration), asks for approval, and the organisation's admins approve or decline it.
// An approved relationship is frozen: narrowing applies at once, widening needs a new relationship. Either side ends
// it. What it lets staff do is decided by the access core (src/access/relationships.ts) on every request.
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import { ORG_ADMIN_ROLE_ID } from '../../access/catalog.js';
import { adminsOfBothSides } from '../../access/repo.js';
import { currentEnd } from '../../access/relationships.js';
import type { Principal } from '../../http/context.js';
import { AppError, notFound } from '../../http/errors.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { assertWithinReach } from '../../http/refusal.js';
import { actorOf, type AuditRequestMeta, csvCell } from '../audit/index.js';
import { hasPermission, loadRoleChain } from '../roles/index.js';
import { relationshipMails } from './mails.js';
import {
  EXPIRING_DAYS,
  findRelationship,
  insertRelationship,
  isPartnerOrganization,
  listRelationshipRows,
  lockRelationship,
  orgGroupIds,
  orgSiteIds,
  partnerRoleIds,
  type RelationshipAudience,
  type RelationshipRow,
  updateRelationship,
} from './repo.js';
import {
  addDuration,
  type CreateRelationship,
  type PatchRelationship,
  relationshipCursor,
  type RelationshipExportQuery,
  type RelationshipListQuery,
  type RelationshipStatus,
} from './schemas.js';

const DAY_MS = 86_400_000;
/** How long a request for approval stays open. */
export const REQUEST_DAYS = 90;
/** Permissions that govern access itself: a relationship holding any of them never extends itself. */
export const NO_AUTO_EXTEND = ['*:*', 'users:write', 'roles:write'] as const;

const fieldError = (field: string, msg: string) =>
  new AppError('validation_failed', msg, { details: { fieldErrors: { [field]: [msg] }, formErrors: [] } });

/** The state as the service clock sees it: a lapsed request and a relationship past its end are expired. */
export function statusAt(r: RelationshipRow, now: number): RelationshipStatus {
  if (r.status === 'approval_pending' && r.requestExpiresAt && r.requestExpiresAt.getTime() <= now) return 'expired';
  if (r.status !== 'active' || !r.endsAt) return r.status;
  const end = currentEnd(r.endsAt, r.autoExtend, now).getTime();
  if (end <= now) return 'expired';
  return !r.autoExtend && end - now <= EXPIRING_DAYS * DAY_MS ? 'expiring' : 'active';
}

export const approvalUrlOf = (deps: Deps, r: Pick<RelationshipRow, 'id'>) =>
  `${deps.config.appUrl}/relationships/${r.id}/approval`;

export function relationshipToJson(deps: Deps, r: RelationshipRow, now: number) {
  const status = statusAt(r, now);
  const end = r.endsAt ? currentEnd(r.endsAt, r.autoExtend, now) : null;
  return {
    id: r.id,
    partnerId: r.partnerId,
    orgId: r.orgId,
    name: r.name,
    roleIds: r.roleIds,
    siteIds: r.siteIds ?? [],
    deviceGroupIds: r.deviceGroupIds ?? [],
    duration: r.duration,
    autoExtend: r.autoExtend,
    status,
    requestExpiresAt: r.requestExpiresAt?.toISOString() ?? null,
    startsAt: r.startsAt?.toISOString() ?? null,
    endsAt: end?.toISOString() ?? null,
    ...(status === 'approval_pending' ? { approvalUrl: approvalUrlOf(deps, r) } : {}),
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

/** The partner's side: a person or service account acting for the partner (the route guards hold the permission). */
function assertPartnerSide(p: Principal) {
  if (p.tenantKind !== 'partner' || !p.partnerId)
    throw new AppError('forbidden', 'Relationships are drafted, requested and changed by the partner.');
}

/** An admin of the organisation (the system Organization Admin role), as a person: who approves and declines. */
const isOrgAdmin = (p: Principal, orgId: string) =>
  p.actorType === 'user' && p.tenantKind === 'organization' && p.orgId === orgId && p.roleId === ORG_ADMIN_ROLE_ID;

/** Whether the relationship is the caller's to see: its partner's side, or a member of its organisation. */
const visibleTo = (p: Principal, r: RelationshipRow) =>
  p.tenantKind === 'partner' ? r.partnerId === p.partnerId : p.tenantKind === 'organization' && r.orgId === p.orgId;

async function visible(tx: Executor, p: Principal, id: string, lock: boolean): Promise<RelationshipRow> {
  const r = lock ? await lockRelationship(tx, id) : await findRelationship(tx, id);
  if (!r || !visibleTo(p, r)) throw notFound('relationship');
  return r;
}

/** Null for an empty list: the whole organisation. */
const reachOf = (ids: string[] | undefined) => (ids?.length ? ids : null);

/** Checks what a relationship names: the partner's roles (within the caller's own permissions), the organisation's sites and groups. */
async function checkContents(
  db: Executor,
  p: Principal,
  partnerId: string,
  orgId: string,
  c: { roleIds: string[]; siteIds: string[] | null; deviceGroupIds: string[] | null; autoExtend: boolean },
) {
  const known = await partnerRoleIds(db, partnerId, c.roleIds);
  const unknown = c.roleIds.filter((id) => !known.has(id));
  if (unknown.length) throw fieldError('roleIds', `Not a role of the partner: ${unknown.join(', ')}`);
  const permissions = new Set<string>();
  for (const id of c.roleIds) for (const k of (await loadRoleChain(db, id))?.permissions ?? []) permissions.add(k);
  // Nobody signs away more than they hold.
  assertWithinReach(p, { permissions });
  if (c.autoExtend && NO_AUTO_EXTEND.some((k) => hasPermission(permissions, k)))
    throw new AppError('auto_extend_not_allowed');
  if (c.siteIds) {
    const found = await orgSiteIds(db, orgId, c.siteIds);
    const missing = c.siteIds.filter((id) => !found.has(id));
    if (missing.length) throw fieldError('siteIds', `Not a site of the organisation: ${missing.join(', ')}`);
  }
  if (c.deviceGroupIds) {
    const found = await orgGroupIds(db, orgId, c.deviceGroupIds);
    const missing = c.deviceGroupIds.filter((id) => !found.has(id));
    if (missing.length)
      throw fieldError('deviceGroupIds', `Not a device group of the organisation: ${missing.join(', ')}`);
  }
}

async function audit(
  deps: Deps,
  tx: Executor,
  p: Principal,
  action: string,
  r: RelationshipRow,
  meta: AuditRequestMeta,
  details: Record<string, unknown> = {},
) {
  await deps.audit.record(
    tx,
    {
      action,
      actor: actorOf(p),
      partnerId: r.partnerId,
      orgId: r.orgId,
      resourceType: 'relationship',
      resourceId: r.id,
      details: { name: r.name, roleIds: r.roleIds, siteIds: r.siteIds, deviceGroupIds: r.deviceGroupIds, ...details },
    },
    meta,
  );
}

export async function createRelationship(deps: Deps, p: Principal, body: CreateRelationship, meta: AuditRequestMeta) {
  assertPartnerSide(p);
  const partnerId = p.partnerId!;
  if (!(await isPartnerOrganization(deps.db, partnerId, body.orgId))) throw notFound('organization');
  const contents = {
    roleIds: body.roleIds,
    siteIds: reachOf(body.siteIds),
    deviceGroupIds: reachOf(body.deviceGroupIds),
    autoExtend: body.autoExtend ?? false,
  };
  await checkContents(deps.db, p, partnerId, body.orgId, contents);
  return deps.db.transaction(async (tx) => {
    const now = deps.clock.now();
    const r = await insertRelationship(tx, {
      partnerId,
      orgId: body.orgId,
      name: body.name,
      ...contents,
      duration: body.duration,
      createdBy: p.actorType === 'user' ? p.userId : null,
      createdAt: now,
      updatedAt: now,
    });
    await audit(deps, tx, p, 'relationship.create', r, meta, { duration: r.duration, autoExtend: r.autoExtend });
    return relationshipToJson(deps, r, now.getTime());
  });
}

export async function getRelationship(deps: Deps, p: Principal, id: string) {
  const r = await visible(deps.db, p, id, false);
  return relationshipToJson(deps, r, deps.clock.now().getTime());
}

export async function listRelationships(deps: Deps, p: Principal, q: RelationshipListQuery) {
  const who: RelationshipAudience | null =
    p.tenantKind === 'partner' && p.partnerId
      ? { kind: 'partner', partnerId: p.partnerId }
      : p.tenantKind === 'organization' && p.orgId
        ? { kind: 'organization', orgId: p.orgId }
        : null;
  if (!who) throw new AppError('tenant_context_required');
  const after = decodeCursor(q.cursor, relationshipCursor);
  const now = deps.clock.now();
  const rows = await listRelationshipRows(
    deps.db,
    who,
    { orgId: q.orgId, status: q.status, after, limit: q.limit },
    now,
  );
  const page = pageOf(rows, q.limit, (r) => ({ c: r.createdAt.toISOString(), id: r.id }));
  return { data: page.data.map((r) => relationshipToJson(deps, r, now.getTime())), nextCursor: page.nextCursor };
}

const EXPORT_MAX = 10_000;
const CSV_COLUMNS = [
  'id',
  'orgId',
  'name',
  'status',
  'roleIds',
  'siteIds',
  'deviceGroupIds',
  'duration',
  'autoExtend',
  'requestExpiresAt',
  'startsAt',
  'endsAt',
  'createdAt',
] as const;

/** The list as CSV (the expiring list for a spreadsheet): the same filters and states as the list, lists joined by spaces. */
export async function exportRelationships(deps: Deps, p: Principal, q: RelationshipExportQuery): Promise<string> {
  const lines = [CSV_COLUMNS.join(',')];
  let cursor: string | undefined;
  do {
    const page = await listRelationships(deps, p, { ...q, limit: 200, cursor });
    for (const r of page.data) {
      const row: Record<string, unknown> = { ...r };
      lines.push(
        CSV_COLUMNS.map((c) => csvCell(Array.isArray(row[c]) ? (row[c] as string[]).join(' ') : row[c])).join(','),
      );
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor && lines.length <= EXPORT_MAX);
  return `${lines.join('\r\n')}\r\n`;
}

/** The sets of `next` that reach beyond `prev` (null: the whole organisation). */
const widens = (prev: string[] | null, next: string[] | null) =>
  prev !== null && (next === null || next.some((id) => !prev.includes(id)));

/**
 * Changes a relationship. A draft changes freely. Once asked for or approved it is frozen: removing roles, sites or
 * device groups, a shorter duration or switching auto-extension off apply at once; anything wider is refused.
 */
export async function patchRelationship(
  deps: Deps,
  p: Principal,
  id: string,
  body: PatchRelationship,
  meta: AuditRequestMeta,
) {
  assertPartnerSide(p);
  return deps.db.transaction(async (tx) => {
    const r = await visible(tx, p, id, true);
    const now = deps.clock.now();
    const status = statusAt(r, now.getTime());
    if (!['draft', 'approval_pending', 'active', 'expiring'].includes(status))
      throw new AppError('relationship_state_invalid', `The relationship is ${status}: it no longer changes.`);
    const next = {
      roleIds: body.roleIds ?? r.roleIds,
      siteIds: body.siteIds !== undefined ? reachOf(body.siteIds) : r.siteIds,
      deviceGroupIds: body.deviceGroupIds !== undefined ? reachOf(body.deviceGroupIds) : r.deviceGroupIds,
      autoExtend: body.autoExtend ?? r.autoExtend,
    };
    const duration = body.duration ?? r.duration;
    if (status !== 'draft') {
      const from = r.startsAt ?? now;
      const wider = [
        ...(widens(r.roleIds, next.roleIds) ? ['roleIds'] : []),
        ...(widens(r.siteIds, next.siteIds) ? ['siteIds'] : []),
        ...(widens(r.deviceGroupIds, next.deviceGroupIds) ? ['deviceGroupIds'] : []),
        ...(addDuration(from, duration).getTime() > addDuration(from, r.duration).getTime() ? ['duration'] : []),
        ...(next.autoExtend && !r.autoExtend ? ['autoExtend'] : []),
      ];
      if (wider.length) throw new AppError('relationship_frozen', undefined, { widened: wider });
    }
    await checkContents(tx, p, r.partnerId, r.orgId, next);
    const ends = r.startsAt && duration !== r.duration ? { endsAt: addDuration(r.startsAt, duration) } : {};
    const updated = await updateRelationship(tx, r.id, {
      ...next,
      ...(body.name !== undefined ? { name: body.name } : {}),
      duration,
      ...ends,
      updatedAt: now,
    });
    await audit(deps, tx, p, 'relationship.update', updated, meta, {
      before: { roleIds: r.roleIds, siteIds: r.siteIds, deviceGroupIds: r.deviceGroupIds, duration: r.duration },
      duration,
      autoExtend: updated.autoExtend,
    });
    return relationshipToJson(deps, updated, now.getTime());
  });
}

/** Locks a draft and asks the organisation's admins to approve it (mailed to both sides' admins, with the link). */
export async function requestApproval(deps: Deps, p: Principal, id: string, meta: AuditRequestMeta) {
  assertPartnerSide(p);
  const out = await deps.db.transaction(async (tx) => {
    const r = await visible(tx, p, id, true);
    if (r.status !== 'draft')
      throw new AppError('relationship_state_invalid', 'Only a draft is sent for approval; this one is not a draft.');
    const now = deps.clock.now();
    const updated = await updateRelationship(tx, r.id, {
      status: 'approval_pending',
      requestExpiresAt: new Date(now.getTime() + REQUEST_DAYS * DAY_MS),
      updatedAt: now,
    });
    await audit(deps, tx, p, 'relationship.request', updated, meta, {
      duration: updated.duration,
      requestExpiresAt: updated.requestExpiresAt!.toISOString(),
    });
    const side = await adminsOfBothSides(tx, r.partnerId, r.orgId);
    for (const email of side.emails) {
      await deps.outbox.enqueue(
        tx,
        relationshipMails.approvalRequested(email, {
          orgName: side.orgName,
          partnerName: side.partnerName,
          name: updated.name,
          ends: updated.duration,
          actor: p.email,
          url: approvalUrlOf(deps, updated),
        }),
      );
    }
    return relationshipToJson(deps, updated, now.getTime());
  });
  deps.outbox.kick();
  return out;
}

/** The organisation's admins approve (active from now for its duration) or decline a request still open. */
export async function decideRelationship(
  deps: Deps,
  p: Principal,
  id: string,
  verdict: 'approve' | 'decline',
  meta: AuditRequestMeta,
) {
  return deps.db.transaction(async (tx) => {
    const r = await visible(tx, p, id, true);
    if (!isOrgAdmin(p, r.orgId)) throw new AppError('relationship_approver_required');
    const now = deps.clock.now();
    const status = statusAt(r, now.getTime());
    if (status !== 'approval_pending')
      throw new AppError(
        'relationship_state_invalid',
        status === 'expired' && r.status === 'approval_pending'
          ? 'The request lapsed after 90 days: the partner asks again with a new relationship.'
          : `The relationship is ${status}: there is no request to decide.`,
      );
    const updated = await updateRelationship(tx, r.id, {
      ...(verdict === 'approve'
        ? { status: 'active' as const, startsAt: now, endsAt: addDuration(now, r.duration) }
        : { status: 'declined' as const }),
      decidedBy: p.userId,
      updatedAt: now,
    });
    await audit(deps, tx, p, verdict === 'approve' ? 'relationship.approve' : 'relationship.decline', updated, meta, {
      endsAt: updated.endsAt?.toISOString() ?? null,
    });
    return relationshipToJson(deps, updated, now.getTime());
  });
}

/** Either side ends a relationship that has not ended: the partner's side, or the organisation's admins. */
export async function terminateRelationship(deps: Deps, p: Principal, id: string, meta: AuditRequestMeta) {
  return deps.db.transaction(async (tx) => {
    const r = await visible(tx, p, id, true);
    if (p.tenantKind === 'organization' && !isOrgAdmin(p, r.orgId))
      throw new AppError('relationship_approver_required');
    const now = deps.clock.now();
    const status = statusAt(r, now.getTime());
    if (!['draft', 'approval_pending', 'active', 'expiring'].includes(status))
      throw new AppError('relationship_state_invalid', `The relationship is ${status}: it has already ended.`);
    const updated = await updateRelationship(tx, r.id, {
      status: 'terminated',
      terminatedBy: p.actorType === 'user' ? p.userId : null,
      updatedAt: now,
    });
    await audit(deps, tx, p, 'relationship.terminate', updated, meta, {
      side: p.tenantKind === 'partner' ? 'partner' : 'organization',
      wasStatus: status,
    });
    return relationshipToJson(deps, updated, now.getTime());
  });
}

// Partner-side access groups: the partner's staff reach a customer through the groups attached to its relationships
// (one group per relationship, or one shared by several). Adding a member is the grant, removing it the revocation;
// both bite on the member's next request on every instance, as the access core reads the groups with the session.
// A group mapped to a partner-level SCIM group takes that group's active members too: membership follows the IdP.
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import { isUniqueViolation } from '../../db/unique-violation.js';
import type { Principal } from '../../http/context.js';
import { AppError, notFound } from '../../http/errors.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import {
  type AccessGroupRow,
  attachGroup,
  deleteGroup,
  deleteMember,
  detachGroup,
  findGroup,
  groupDetails,
  type GroupDetails,
  insertGroup,
  insertMember,
  listGroupRows,
  listMemberRows,
  type MemberRow,
  partnerRelationship,
  partnerScimGroup,
  partnerScimGroups,
  partnerStaff,
  updateGroup,
} from './repo.js';
import { type CreateGroup, groupCursor, memberCursor, type PatchGroup } from './schemas.js';

const fieldError = (field: string, msg: string) =>
  new AppError('validation_failed', msg, { details: { fieldErrors: { [field]: [msg] }, formErrors: [] } });

/** States in which a relationship has ended for good: no group is attached to one any more. */
const ENDED = new Set(['declined', 'terminated', 'expired']);

/** The partner's side: a person or service account acting for the partner (the route guards hold the permission). */
function partnerOf(p: Principal): string {
  if (p.tenantKind !== 'partner' || !p.partnerId)
    throw new AppError('forbidden', "Access groups are the partner's: its staff manage them.");
  return p.partnerId;
}

const groupJson = (g: AccessGroupRow, d: GroupDetails) => ({
  id: g.id,
  partnerId: g.partnerId,
  name: g.name,
  scimGroupId: g.scimGroupId,
  scimGroupName: d.scimGroupName,
  memberCount: d.memberCount,
  relationships: d.relationships,
  createdAt: g.createdAt.toISOString(),
  updatedAt: g.updatedAt.toISOString(),
});

async function withDetails(db: Executor, g: AccessGroupRow) {
  return groupJson(g, (await groupDetails(db, [g.id])).get(g.id)!);
}

async function ownGroup(db: Executor, partnerId: string, id: string): Promise<AccessGroupRow> {
  const g = await findGroup(db, partnerId, id);
  if (!g) throw notFound('access group');
  return g;
}

async function checkScimGroup(db: Executor, partnerId: string, id: string | null | undefined) {
  if (!id) return;
  if (!(await partnerScimGroup(db, partnerId, id)))
    throw fieldError('scimGroupId', "Not a partner-level SCIM group of the partner's identity provider");
}

async function audit(
  deps: Deps,
  tx: Executor,
  p: Principal,
  action: string,
  g: AccessGroupRow,
  meta: AuditRequestMeta,
  details: Record<string, unknown> = {},
) {
  await deps.audit.record(
    tx,
    {
      action,
      actor: actorOf(p),
      partnerId: g.partnerId,
      orgId: null,
      resourceType: 'access_group',
      resourceId: g.id,
      details: { name: g.name, ...details },
    },
    meta,
  );
}

/** A name another group of the partner holds: 409 name_taken. */
async function named<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isUniqueViolation(err, /access_groups_partner_name_key/)) throw new AppError('name_taken');
    throw err;
  }
}

export async function createGroup(deps: Deps, p: Principal, body: CreateGroup, meta: AuditRequestMeta) {
  const partnerId = partnerOf(p);
  await checkScimGroup(deps.db, partnerId, body.scimGroupId);
  const g = await named(() =>
    deps.db.transaction(async (tx) => {
      const now = deps.clock.now();
      const row = await insertGroup(tx, {
        partnerId,
        name: body.name,
        scimGroupId: body.scimGroupId ?? null,
        createdAt: now,
        updatedAt: now,
      });
      await audit(deps, tx, p, 'access_group.create', row, meta, { scimGroupId: row.scimGroupId });
      return row;
    }),
  );
  return withDetails(deps.db, g);
}

export async function listGroups(
  deps: Deps,
  p: Principal,
  q: { limit: number; cursor?: string; search?: string; relationshipId?: string },
) {
  const partnerId = partnerOf(p);
  const rows = await listGroupRows(deps.db, partnerId, {
    search: q.search,
    relationshipId: q.relationshipId,
    after: decodeCursor(q.cursor, groupCursor),
    limit: q.limit,
  });
  const pg = pageOf(rows, q.limit, (g) => ({ n: g.name.toLowerCase(), id: g.id }));
  const details = await groupDetails(
    deps.db,
    pg.data.map((g) => g.id),
  );
  return { data: pg.data.map((g) => groupJson(g, details.get(g.id)!)), nextCursor: pg.nextCursor };
}

/** The partner-level SCIM groups of the partner's identity provider, for mapping a group to one. */
export async function listScimGroups(deps: Deps, p: Principal) {
  return { data: await partnerScimGroups(deps.db, partnerOf(p)) };
}

export async function getGroup(deps: Deps, p: Principal, id: string) {
  return withDetails(deps.db, await ownGroup(deps.db, partnerOf(p), id));
}

export async function patchGroup(deps: Deps, p: Principal, id: string, body: PatchGroup, meta: AuditRequestMeta) {
  const partnerId = partnerOf(p);
  await checkScimGroup(deps.db, partnerId, body.scimGroupId);
  const g = await named(() =>
    deps.db.transaction(async (tx) => {
      const was = await ownGroup(tx, partnerId, id);
      const row = await updateGroup(tx, id, {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.scimGroupId !== undefined ? { scimGroupId: body.scimGroupId } : {}),
        updatedAt: deps.clock.now(),
      });
      await audit(deps, tx, p, 'access_group.update', row, meta, {
        from: { name: was.name, scimGroupId: was.scimGroupId },
        to: { name: row.name, scimGroupId: row.scimGroupId },
      });
      return row;
    }),
  );
  return withDetails(deps.db, g);
}

/**
 * Deleting a group detaches it from its relationships: its members lose what it gave them on their next request, and
 * a relationship left without groups serves nobody until another is attached.
 */
export async function removeGroup(deps: Deps, p: Principal, id: string, meta: AuditRequestMeta) {
  const partnerId = partnerOf(p);
  await deps.db.transaction(async (tx) => {
    const g = await ownGroup(tx, partnerId, id);
    const d = (await groupDetails(tx, [g.id])).get(g.id)!;
    await deleteGroup(tx, g.id);
    await audit(deps, tx, p, 'access_group.delete', g, meta, {
      relationshipIds: d.relationships.map((r) => r.id),
      memberCount: d.memberCount,
    });
  });
}

const memberJson = (groupId: string, m: MemberRow) => ({
  groupId,
  userId: m.user_id,
  name: m.name,
  email: m.email,
  source: m.source,
  addedAt: m.added_at ? new Date(m.added_at).toISOString() : null,
});

export async function listMembers(deps: Deps, p: Principal, id: string, q: { limit: number; cursor?: string }) {
  const g = await ownGroup(deps.db, partnerOf(p), id);
  const after = decodeCursor(q.cursor, memberCursor);
  const rows = await listMemberRows(deps.db, g, after?.id ?? null, q.limit);
  const pg = pageOf(rows, q.limit, (m) => ({ id: m.user_id }));
  return { data: pg.data.map((m) => memberJson(g.id, m)), nextCursor: pg.nextCursor };
}

/** The grant: a member of the partner's staff joins the group (400 with userId named for anyone else). */
export async function addMember(deps: Deps, p: Principal, id: string, userId: string, meta: AuditRequestMeta) {
  const partnerId = partnerOf(p);
  return deps.db.transaction(async (tx) => {
    const g = await ownGroup(tx, partnerId, id);
    const person = await partnerStaff(tx, partnerId, userId);
    if (!person) throw fieldError('userId', "Not a member of the partner's staff");
    const now = deps.clock.now();
    if (!(await insertMember(tx, partnerId, g.id, userId, now)))
      throw new AppError('conflict', 'Already a member of the group.');
    await audit(deps, tx, p, 'access_group.member.add', g, meta, { userId, email: person.email });
    return memberJson(g.id, {
      user_id: userId,
      name: person.name,
      email: person.email,
      source: 'direct',
      added_at: now,
    });
  });
}

/** The revocation: bites on the member's next request, on every instance. */
export async function removeMember(deps: Deps, p: Principal, id: string, userId: string, meta: AuditRequestMeta) {
  const partnerId = partnerOf(p);
  await deps.db.transaction(async (tx) => {
    const g = await ownGroup(tx, partnerId, id);
    if (!(await deleteMember(tx, g.id, userId))) throw notFound('member');
    await audit(deps, tx, p, 'access_group.member.remove', g, meta, { userId });
  });
}

/** Attaches the group to one of the partner's relationships that has not ended. */
export async function attach(deps: Deps, p: Principal, id: string, relationshipId: string, meta: AuditRequestMeta) {
  const partnerId = partnerOf(p);
  return deps.db.transaction(async (tx) => {
    const g = await ownGroup(tx, partnerId, id);
    const r = await partnerRelationship(tx, partnerId, relationshipId);
    if (!r) throw fieldError('relationshipId', 'Not a relationship of the partner');
    if (ENDED.has(r.status)) throw new AppError('relationship_state_invalid', `The relationship is ${r.status}.`);
    if (!(await attachGroup(tx, partnerId, r.id, g.id, deps.clock.now())))
      throw new AppError('conflict', 'The group is already attached to the relationship.');
    await audit(deps, tx, p, 'access_group.attach', g, meta, { relationshipId: r.id, orgId: r.orgId });
    return { groupId: g.id, groupName: g.name, relationshipId: r.id, relationshipName: r.name, orgId: r.orgId };
  });
}

/** Detaching only narrows: a relationship once bound to groups is used through its remaining groups alone. */
export async function detach(deps: Deps, p: Principal, id: string, relationshipId: string, meta: AuditRequestMeta) {
  const partnerId = partnerOf(p);
  await deps.db.transaction(async (tx) => {
    const g = await ownGroup(tx, partnerId, id);
    if (!(await detachGroup(tx, relationshipId, g.id))) throw notFound('attachment');
    await audit(deps, tx, p, 'access_group.detach', g, meta, { relationshipId });
  });
}

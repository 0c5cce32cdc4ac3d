// SCIM Groups (RFC 7643 4.2) of the token's tenant. A group may be mapped to a role of the tenant through Gatehouse's
// Group extension (`roleId`): its members then hold that role, within the token creator's permissions; a member
// leaving every mapped group falls back to its default role.
import type { Tx } from '../../db/connect.js';
import type { Deps } from '../../deps.js';
import { AppError, notFound } from '../../http/errors.js';
import type { AuditRequestMeta } from '../audit/index.js';
import { findRole } from '../roles/index.js';
import { auditTenant } from '../tenants/index.js';
import type { Target } from '../../db/tenant-filter.js';
import { assertScimAssignable, creatorReach } from './ceiling.js';
import { applyPatch, assertIfMatch, assertResourceId, etag, paging, project } from './common.js';
import type { ScimCaller } from './context.js';
import { syncMembership } from './membership.js';
import {
  addGroupMembers,
  deleteGroupRow,
  findGroupRow,
  groupNameTaken,
  insertGroup,
  lockTenant,
  membersOfGroups,
  pageOfGroups,
  removeGroupMembers,
  scimUsersByIds,
  tenantUserIds,
  updateGroupRow,
  type ScimGroupRow,
} from './repo.js';
import {
  GROUP_EXTENSION,
  GROUP_SCHEMA,
  LIST_RESPONSE,
  scimGroupInput,
  type PatchBody,
  type ScimGroupInput,
} from './schemas.js';

type Row = ScimGroupRow;
type Member = { id: string; userName: string };

function groupJson(deps: Deps, r: Row, members: Member[]) {
  return {
    schemas: [GROUP_SCHEMA, GROUP_EXTENSION],
    id: r.id,
    ...(r.externalId !== null ? { externalId: r.externalId } : {}),
    displayName: r.displayName,
    members: members.map((m) => ({
      value: m.id,
      display: m.userName,
      $ref: `${deps.config.publicUrl}/scim/v2/Users/${m.id}`,
      type: 'User' as const,
    })),
    [GROUP_EXTENSION]: { roleId: r.roleId },
    meta: {
      resourceType: 'Group',
      created: r.createdAt.toISOString(),
      lastModified: r.updatedAt.toISOString(),
      location: `${deps.config.publicUrl}/scim/v2/Groups/${r.id}`,
      version: etag(r.version),
    },
  };
}

async function membersOf(db: Deps['db'] | Tx, ids: string[]) {
  const out = new Map<string, Member[]>();
  if (!ids.length) return out;
  const rows = await membersOfGroups(db, ids);
  for (const r of rows) out.set(r.groupId, [...(out.get(r.groupId) ?? []), { id: r.id, userName: r.userName }]);
  return out;
}

async function findRow(db: Deps['db'] | Tx, t: Target, id: string): Promise<Row> {
  const row = await findGroupRow(db, t, assertResourceId(id, 'group'));
  if (!row) throw notFound('group');
  return row;
}

const jsonOf = async (deps: Deps, db: Deps['db'] | Tx, r: Row) =>
  groupJson(deps, r, (await membersOf(db, [r.id])).get(r.id) ?? []);

export async function getGroup(
  deps: Deps,
  caller: ScimCaller,
  id: string,
  q: { attributes?: string; excludedAttributes?: string },
) {
  return project(await jsonOf(deps, deps.db, await findRow(deps.db, caller.target, id)), q, GROUP_SCHEMA);
}

export async function listGroups(
  deps: Deps,
  caller: ScimCaller,
  q: { filter?: string; startIndex?: number; count?: number; attributes?: string; excludedAttributes?: string },
) {
  const { startIndex, count, offset } = paging(q);
  const { total, rows } = await pageOfGroups(deps.db, caller.target, q.filter, count, offset);
  const wantMembers = !/(^|,)\s*members\s*(,|$)/i.test(q.excludedAttributes ?? '');
  const members = wantMembers
    ? await membersOf(
        deps.db,
        rows.map((r) => r.id),
      )
    : new Map<string, Member[]>();
  return {
    schemas: [LIST_RESPONSE],
    totalResults: total,
    startIndex,
    itemsPerPage: rows.length,
    Resources: rows.map((r) => project(groupJson(deps, r, members.get(r.id) ?? []), q, GROUP_SCHEMA)),
  };
}

/** Member ids of the body that are users of this tenant (anything else is 400 invalidValue, naming it). */
async function memberIds(tx: Tx, t: Target, input: ScimGroupInput): Promise<string[]> {
  const ids = [...new Set((input.members ?? []).map((m) => m.value.toLowerCase()))];
  if (!ids.length) return [];
  const bad = ids.filter((i) => !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(i));
  const found = bad.length ? [] : await tenantUserIds(tx, t, ids);
  const missing = bad.length ? bad : ids.filter((i) => !found.some((f) => f.id === i));
  if (missing.length)
    throw new AppError('validation_failed', `members: not users of this tenant: ${missing.slice(0, 5).join(', ')}.`, {
      details: { fieldErrors: { members: ['Not a user of this tenant'] }, formErrors: [] },
    });
  return ids;
}

/** The mapped role: a role of the tenant, within the token creator's permissions, never `*:*`. */
async function mappedRole(tx: Tx, caller: ScimCaller, roleId: string | null | undefined): Promise<string | null> {
  if (!roleId) return null;
  const role = await findRole(tx, caller.target, roleId).catch(() => {
    throw new AppError('validation_failed', 'roleId is not a role of this tenant.', {
      details: { fieldErrors: { [`${GROUP_EXTENSION}.roleId`]: ['Not a role of this tenant'] }, formErrors: [] },
    });
  });
  await assertScimAssignable(tx, await creatorReach(tx, { ...caller.target, createdBy: caller.createdBy }), role.id);
  return role.id;
}

async function assertNameFree(tx: Tx, t: Target, displayName: string, selfId?: string) {
  if (await groupNameTaken(tx, t, displayName, selfId))
    throw new AppError('name_taken', 'A group with this displayName already exists here.');
}

/** Members' memberships follow the group's mapping (only those whose role can change). */
async function resync(deps: Deps, tx: Tx, caller: ScimCaller, scimUserIds: string[]) {
  if (!scimUserIds.length) return;
  for (const su of await scimUsersByIds(tx, scimUserIds)) await syncMembership(deps, tx, caller, su);
}

export async function createGroup(deps: Deps, caller: ScimCaller, input: ScimGroupInput, meta: AuditRequestMeta) {
  const t = caller.target;
  const now = deps.clock.now();
  const row = await deps.db.transaction(async (tx) => {
    await lockTenant(tx, t);
    await assertNameFree(tx, t, input.displayName);
    const roleId = await mappedRole(tx, caller, input[GROUP_EXTENSION]?.roleId);
    const ids = await memberIds(tx, t, input);
    const created = await insertGroup(tx, {
      partnerId: t.partnerId,
      orgId: t.orgId,
      displayName: input.displayName,
      externalId: input.externalId ?? null,
      roleId,
      createdAt: now,
      updatedAt: now,
    });
    if (ids.length) await addGroupMembers(tx, t.partnerId, created.id, ids);
    if (roleId) await resync(deps, tx, caller, ids);
    await deps.audit.record(
      tx,
      {
        action: 'scim.group.create',
        actor: caller.actor,
        ...auditTenant(t),
        resourceType: 'scim_group',
        resourceId: created.id,
        details: { displayName: input.displayName, roleId, members: ids.length },
      },
      meta,
    );
    return created;
  });
  return jsonOf(deps, deps.db, row);
}

async function writeGroup(
  deps: Deps,
  caller: ScimCaller,
  id: string,
  ifMatch: string | string[] | undefined,
  meta: AuditRequestMeta,
  next: (current: ReturnType<typeof groupJson>) => ScimGroupInput,
) {
  const t = caller.target;
  const row = await deps.db.transaction(async (tx) => {
    await lockTenant(tx, t);
    const current = await findRow(tx, t, id);
    assertIfMatch(ifMatch, current.version);
    const before = (await membersOf(tx, [current.id])).get(current.id) ?? [];
    const input = next(groupJson(deps, current, before));
    if (input.id !== undefined && input.id.toLowerCase() !== current.id)
      throw new AppError('attribute_immutable', 'id is assigned by the service provider and cannot change.');
    if (input.displayName.toLowerCase() !== current.displayName.toLowerCase())
      await assertNameFree(tx, t, input.displayName, current.id);
    const ext = input[GROUP_EXTENSION];
    const wanted =
      ext === undefined || (ext !== null && ext.roleId === undefined) ? current.roleId : (ext?.roleId ?? null);
    const roleId = wanted === current.roleId ? current.roleId : await mappedRole(tx, caller, wanted);
    const ids = input.members === undefined ? before.map((m) => m.id) : await memberIds(tx, t, input);
    const added = ids.filter((i) => !before.some((m) => m.id === i));
    const removed = before.map((m) => m.id).filter((i) => !ids.includes(i));
    const changedFields =
      input.displayName !== current.displayName ||
      (input.externalId ?? null) !== current.externalId ||
      roleId !== current.roleId;
    if (!changedFields && !added.length && !removed.length) return current;
    const updated = await updateGroupRow(tx, current.id, {
      displayName: input.displayName,
      externalId: input.externalId ?? null,
      roleId,
      version: current.version + 1,
      updatedAt: deps.clock.now(),
    });
    if (removed.length) await removeGroupMembers(tx, current.id, removed);
    if (added.length) await addGroupMembers(tx, t.partnerId, current.id, added);
    if (roleId || current.roleId)
      await resync(deps, tx, caller, roleId !== current.roleId ? ids.concat(removed) : added.concat(removed));
    await deps.audit.record(
      tx,
      {
        action: 'scim.group.update',
        actor: caller.actor,
        ...auditTenant(t),
        resourceType: 'scim_group',
        resourceId: current.id,
        details: { displayName: input.displayName, roleId, added, removed },
      },
      meta,
    );
    return updated;
  });
  return jsonOf(deps, deps.db, row);
}

export async function replaceGroup(
  deps: Deps,
  caller: ScimCaller,
  id: string,
  input: ScimGroupInput,
  ifMatch: string | string[] | undefined,
  meta: AuditRequestMeta,
) {
  return writeGroup(deps, caller, id, ifMatch, meta, () => input);
}

export async function patchGroup(
  deps: Deps,
  caller: ScimCaller,
  id: string,
  body: PatchBody,
  ifMatch: string | string[] | undefined,
  meta: AuditRequestMeta,
) {
  return writeGroup(deps, caller, id, ifMatch, meta, (current) => {
    const { meta: _m, ...resource } = current;
    const patched = applyPatch(resource, body);
    // scim-patch drops an attribute whose last value was removed: no members left, not "members unchanged".
    const parsed = scimGroupInput.safeParse({ members: [], ...patched });
    if (!parsed.success) {
      const fieldErrors: Record<string, string[]> = {};
      for (const issue of parsed.error.issues)
        (fieldErrors[issue.path.join('.') || '(resource)'] ??= []).push(issue.message);
      throw new AppError('validation_failed', 'The patched group is not valid.', {
        details: { fieldErrors, formErrors: [] },
      });
    }
    return parsed.data;
  });
}

export async function deleteGroup(
  deps: Deps,
  caller: ScimCaller,
  id: string,
  ifMatch: string | string[] | undefined,
  meta: AuditRequestMeta,
) {
  const t = caller.target;
  await deps.db.transaction(async (tx) => {
    await lockTenant(tx, t);
    const current = await findRow(tx, t, id);
    assertIfMatch(ifMatch, current.version);
    const members = (await membersOf(tx, [current.id])).get(current.id) ?? [];
    await deleteGroupRow(tx, current.id);
    if (current.roleId)
      await resync(
        deps,
        tx,
        caller,
        members.map((m) => m.id),
      );
    await deps.audit.record(
      tx,
      {
        action: 'scim.group.delete',
        actor: caller.actor,
        ...auditTenant(t),
        resourceType: 'scim_group',
        resourceId: current.id,
        details: { displayName: current.displayName, members: members.length },
      },
      meta,
    );
  });
}

// Roles: custom roles scoped to a partner or an organisation, single-parent
// inheritance, immutable system roles, and the permission ceiling.
import { z } from 'zod';
import type { Executor, Tx } from '../../db/connect.js';
import { isUniqueViolation } from '../../db/unique-violation.js';
import type { Deps } from '../../deps.js';
import type { Principal } from '../../http/context.js';
import { AppError, notFound } from '../../http/errors.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import { auditTenant } from '../tenants/index.js';
import type { Target } from '../../db/tenant-filter.js';
import { canonicalAction, CATALOG_ENTRIES, isCatalogued } from '../../access/catalog.js';
import {
  bumpAuthzEpoch,
  childRoleCount,
  deleteRoleRow,
  descendantDepth as depthBelow,
  directPermissionRows,
  findRoleRow,
  holderCount,
  insertRole,
  listRoleRows,
  lockOwner,
  memberCounts,
  roleNamesByIds,
  scimUsesRole,
  serviceAccountCount,
  setPermissions,
  ssoDefaultRole,
  updateRoleRow,
  type RoleRow,
} from './repo.js';
import { loadRoleChain, MAX_ROLE_DEPTH } from '../../access/resolver.js';
import { assertWithinReach } from '../../http/refusal.js';

export async function findRole(db: Executor, target: Target, id: string): Promise<RoleRow> {
  const row = await findRoleRow(db, target, id);
  if (!row) throw notFound('role');
  return row;
}

/** Members of the target scope holding a role (a system role's count never includes other tenants). */
async function userCounts(db: Executor, target: Target, roleIds: string[]): Promise<Map<string, number>> {
  if (roleIds.length === 0) return new Map();
  const rows = await memberCounts(db, target, roleIds);
  return new Map(rows.map((r) => [r.roleId, Number(r.n)]));
}

async function toJson(db: Executor, target: Target, rows: RoleRow[]) {
  const counts = await userCounts(
    db,
    target,
    rows.map((r) => r.id),
  );
  const parentIds = [...new Set(rows.map((r) => r.parentRoleId).filter((x): x is string => !!x))];
  const parents = parentIds.length ? await roleNamesByIds(db, parentIds) : [];
  const parentName = new Map(parents.map((p) => [p.id, p.name]));
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    description: r.description,
    scope: r.scope,
    isSystem: r.isSystem,
    parentRoleId: r.parentRoleId,
    parentRoleName: r.parentRoleId ? (parentName.get(r.parentRoleId) ?? null) : null,
    forceMfa: r.forceMfa,
    userCount: counts.get(r.id) ?? 0,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  }));
}

const roleCursor = z.object({ n: z.string(), id: z.uuid() });

export async function listRoles(db: Executor, target: Target, q: { limit: number; cursor?: string; search?: string }) {
  const after = decodeCursor(q.cursor, roleCursor);
  const rows = await listRoleRows(db, target, { search: q.search, after, limit: q.limit });
  const page = pageOf(rows, q.limit, (r) => ({ n: r.name.toLowerCase(), id: r.id }));
  return { data: await toJson(db, target, page.data), nextCursor: page.nextCursor };
}

export async function directPermissions(db: Executor, roleId: string) {
  return directPermissionRows(db, roleId);
}

export async function getRoleDetail(db: Executor, target: Target, id: string) {
  const row = await findRole(db, target, id);
  const [json] = await toJson(db, target, [row]);
  return { ...json!, permissions: await directPermissions(db, id) };
}

/** Canonical `resource:action` keys; unknown verbs or resources, and `*:*`, are refused. */
export function canonicalPermissions(input: { resource: string; action: string }[]): string[] {
  const fieldErrors: Record<string, string[]> = {};
  const keys = new Set<string>();
  input.forEach((p, i) => {
    if (p.resource === '*' || p.action === '*') {
      fieldErrors[`permissions.${i}`] = ['*:* cannot be assigned to a custom role'];
      return;
    }
    const action = canonicalAction(p.action);
    if (!action || !isCatalogued(p.resource, action)) {
      fieldErrors[`permissions.${i}`] = [`${p.resource}:${p.action} is not in the permission catalogue`];
      return;
    }
    keys.add(`${p.resource}:${action}`);
  });
  if (Object.keys(fieldErrors).length)
    throw new AppError('unknown_permission', undefined, { details: { fieldErrors, formErrors: [] } });
  return [...keys].sort();
}

/** Effective permissions of a role that would have `direct` and the given parent. */
async function effectiveWith(db: Executor, direct: string[], parentRoleId: string | null): Promise<Set<string>> {
  const out = new Set(direct);
  if (parentRoleId) for (const k of (await loadRoleChain(db, parentRoleId))?.permissions ?? []) out.add(k);
  return out;
}

export const expandWildcard = (keys: Iterable<string>) =>
  [...keys].includes('*:*') ? CATALOG_ENTRIES.map((e) => `${e.resource}:${e.action}`) : [...keys];

/** Deepest chain below a role (0 = no children). */
const descendantDepth = (tx: Executor, roleId: string) => depthBelow(tx, roleId, MAX_ROLE_DEPTH);

async function checkParent(
  tx: Tx,
  target: Target,
  roleId: string | null,
  parentRoleId: string,
  appliesTo: 'partner' | 'organization',
) {
  const parent = await findRole(tx, target, parentRoleId).catch(() => {
    throw new AppError('validation_failed', 'The parent role is not a role of this scope.', {
      details: { fieldErrors: { parentRoleId: ['Not a role of this scope'] }, formErrors: [] },
    });
  });
  if (parent.appliesTo !== appliesTo) {
    throw new AppError('validation_failed', 'The parent role serves another kind of membership.', {
      details: { fieldErrors: { parentRoleId: ['Wrong membership kind'] }, formErrors: [] },
    });
  }
  const chain = await loadRoleChain(tx, parentRoleId);
  // Inheriting from Partner Admin would hand a custom role *:* (never assignable; clone it instead).
  if (chain?.permissions.has('*:*')) {
    throw new AppError('validation_failed', 'A role holding *:* cannot be a parent; clone it instead.', {
      details: { fieldErrors: { parentRoleId: ['Holds *:*'] }, formErrors: [] },
    });
  }
  if (roleId && chain?.chain.some((c) => c.id === roleId)) throw new AppError('circular_inheritance');
  const below = roleId ? await descendantDepth(tx, roleId) : 0;
  if ((chain?.chain.length ?? 0) + 1 + below > MAX_ROLE_DEPTH) throw new AppError('inheritance_too_deep');
}

export async function createRole(
  deps: Deps,
  caller: Principal,
  target: Target,
  body: {
    name: string;
    description?: string | null;
    permissions: { resource: string; action: string }[];
    parentRoleId?: string | null;
    forceMfa?: boolean;
    phishingResistantOnly?: boolean;
  },
  meta: AuditRequestMeta,
) {
  const keys = canonicalPermissions(body.permissions);
  const appliesTo = target.kind;
  try {
    const id = await deps.db.transaction(async (tx) => {
      await lockOwner(tx, target);
      if (body.parentRoleId) await checkParent(tx, target, null, body.parentRoleId, appliesTo);
      assertWithinReach(caller, { permissions: await effectiveWith(tx, keys, body.parentRoleId ?? null) });
      const row = await insertRole(tx, {
        scope: target.kind,
        appliesTo,
        partnerId: target.partnerId,
        orgId: target.orgId,
        name: body.name,
        description: body.description ?? null,
        parentRoleId: body.parentRoleId ?? null,
        forceMfa: body.forceMfa ?? false,
        phishingResistantOnly: body.phishingResistantOnly ?? false,
      });
      await setPermissions(tx, row.id, keys);
      await deps.audit.record(
        tx,
        {
          action: 'role.create',
          actor: actorOf(caller),
          ...auditTenant(target),
          resourceType: 'role',
          resourceId: row.id,
          details: { name: body.name, permissions: keys, parentRoleId: body.parentRoleId ?? null },
        },
        meta,
      );
      return row.id;
    });
    return getRoleDetail(deps.db, target, id);
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('name_taken', 'A role with this name already exists here.');
    throw err;
  }
}

export async function updateRole(
  deps: Deps,
  caller: Principal,
  target: Target,
  id: string,
  body: {
    name?: string;
    description?: string | null;
    permissions?: { resource: string; action: string }[];
    parentRoleId?: string | null;
    forceMfa?: boolean;
    phishingResistantOnly?: boolean;
  },
  meta: AuditRequestMeta,
) {
  const keys = body.permissions ? canonicalPermissions(body.permissions) : null;
  try {
    await deps.db.transaction(async (tx) => {
      await lockOwner(tx, target);
      const role = await findRole(tx, target, id);
      if (role.isSystem) throw new AppError('system_role_immutable');
      const before = (await loadRoleChain(tx, id))?.permissions ?? new Set<string>();
      assertWithinReach(caller, { permissions: before });
      const parentRoleId = body.parentRoleId === undefined ? role.parentRoleId : body.parentRoleId;
      if (body.parentRoleId) await checkParent(tx, target, id, body.parentRoleId, role.appliesTo);
      const direct = keys ?? (await directPermissions(tx, id)).map((p) => `${p.resource}:${p.action}`);
      assertWithinReach(caller, { permissions: await effectiveWith(tx, direct, parentRoleId) });
      await updateRoleRow(tx, id, {
        name: body.name ?? role.name,
        description: body.description === undefined ? role.description : body.description,
        parentRoleId,
        forceMfa: body.forceMfa ?? role.forceMfa,
        phishingResistantOnly: body.phishingResistantOnly ?? role.phishingResistantOnly,
        updatedAt: deps.clock.now(),
      });
      if (keys) await setPermissions(tx, id, keys);
      await bumpAuthzEpoch(tx);
      await deps.audit.record(
        tx,
        {
          action: 'role.update',
          actor: actorOf(caller),
          ...auditTenant(target),
          resourceType: 'role',
          resourceId: id,
          details: { changed: Object.keys(body).sort(), ...(keys ? { permissions: keys } : {}) },
        },
        meta,
      );
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('name_taken', 'A role with this name already exists here.');
    throw err;
  }
  return getRoleDetail(deps.db, target, id);
}

export async function deleteRole(deps: Deps, caller: Principal, target: Target, id: string, meta: AuditRequestMeta) {
  await deps.db.transaction(async (tx) => {
    await lockOwner(tx, target);
    const role = await findRole(tx, target, id);
    if (role.isSystem) throw new AppError('system_role_immutable', 'Cannot delete system roles.');
    const userCount = await holderCount(tx, id);
    if (userCount > 0) throw new AppError('role_has_users', undefined, { userCount });
    const accounts = await serviceAccountCount(tx, id);
    if (accounts > 0)
      throw new AppError('role_has_users', 'Cannot delete a role that service accounts hold.', {
        userCount: 0,
        serviceAccountCount: accounts,
      });
    const children = await childRoleCount(tx, id);
    if (children > 0) throw new AppError('role_has_children', undefined, { childRoleCount: children });
    assertWithinReach(caller, { permissions: (await loadRoleChain(tx, id))?.permissions ?? [] });
    if (await ssoDefaultRole(tx, id))
      throw new AppError('resource_in_use', 'The role is the default role of an SSO provider.');
    if (await scimUsesRole(tx, id))
      throw new AppError(
        'resource_in_use',
        'The role is the default role of a SCIM token or provisioned user, or a SCIM group maps to it.',
      );
    await deleteRoleRow(tx, id);
    await bumpAuthzEpoch(tx);
    await deps.audit.record(
      tx,
      {
        action: 'role.delete',
        actor: actorOf(caller),
        ...auditTenant(target),
        resourceType: 'role',
        resourceId: id,
        details: { name: role.name },
      },
      meta,
    );
  });
}

/** Copies the source's effective permissions (a `*:*` source gives every catalogue permission) into a new custom role. */
export async function cloneRole(
  deps: Deps,
  caller: Principal,
  target: Target,
  id: string,
  name: string,
  meta: AuditRequestMeta,
) {
  const source = await findRole(deps.db, target, id);
  const chain = await loadRoleChain(deps.db, id);
  const keys = expandWildcard(chain?.permissions ?? []).sort();
  assertWithinReach(caller, { permissions: keys });
  try {
    const newId = await deps.db.transaction(async (tx) => {
      await lockOwner(tx, target);
      const row = await insertRole(tx, {
        scope: target.kind,
        appliesTo: target.kind,
        partnerId: target.partnerId,
        orgId: target.orgId,
        name,
        description: source.description,
        forceMfa: chain?.forceMfa ?? source.forceMfa,
        phishingResistantOnly: chain?.phishingResistantOnly ?? source.phishingResistantOnly,
      });
      await setPermissions(tx, row.id, keys);
      await deps.audit.record(
        tx,
        {
          action: 'role.clone',
          actor: actorOf(caller),
          ...auditTenant(target),
          resourceType: 'role',
          resourceId: row.id,
          details: { sourceRoleId: id, name },
        },
        meta,
      );
      return row.id;
    });
    return getRoleDetail(deps.db, target, newId);
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('name_taken', 'A role with this name already exists here.');
    throw err;
  }
}

export async function roleEffectivePermissions(db: Executor, target: Target, id: string) {
  const role = await findRole(db, target, id);
  const chain = await loadRoleChain(db, id);
  return {
    roleId: role.id,
    roleName: role.name,
    inheritanceChain: chain?.chain ?? [],
    permissions: (chain?.sources ?? []).map((s) => ({
      resource: s.resource,
      action: s.action,
      inherited: s.roleId !== id,
      sourceRoleId: s.roleId,
      sourceRoleName: s.roleName,
    })),
  };
}

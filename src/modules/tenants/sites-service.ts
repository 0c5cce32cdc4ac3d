// Sites and device groups of an organisation. Site-restricted members see only their sites.
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import { isUniqueViolation } from '../../db/unique-violation.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { actorOf, type AuditRequestMeta } from '../../access/audit.js';
import { groupRestriction, type Scope, scopeOf, siteRestriction } from '../../access/scope.js';
import { accessibleOrg } from './access.js';
import { DEVICE_GROUP, SITE, findInScope } from './by-id.js';
import {
  deleteGroupRow,
  deleteSiteRow,
  deviceCountOfSite,
  groupDeviceCounts,
  insertGroup,
  insertSite,
  listGroupRows,
  listSiteRows,
  updateGroupRow,
  updateSiteRow,
  type GroupRow,
  type SiteRow,
} from './repo.js';

export const siteToJson = (s: SiteRow) => ({
  id: s.id,
  orgId: s.orgId,
  name: s.name,
  timezone: s.timezone,
  address: s.address,
  createdAt: s.createdAt.toISOString(),
  updatedAt: s.updatedAt.toISOString(),
});
const actor = actorOf;
const cursor = z.object({ n: z.string(), id: z.uuid() });

export async function listSites(
  db: Executor,
  p: Principal,
  scope: Scope,
  q: { orgId?: string; limit: number; cursor?: string; search?: string },
) {
  if (q.orgId) await accessibleOrg(db, p, q.orgId);
  const after = decodeCursor(q.cursor, cursor);
  const rows = await listSiteRows(db, scope, { orgId: q.orgId, search: q.search, after, limit: q.limit });
  const page = pageOf(rows, q.limit, (s) => ({ n: s.name.toLowerCase(), id: s.id }));
  return { data: page.data.map(siteToJson), nextCursor: page.nextCursor };
}

export async function findSite(db: Executor, p: Principal, id: string): Promise<SiteRow> {
  return (await findInScope(db, p, SITE, id)).row;
}

export async function createSite(
  deps: Deps,
  p: Principal,
  input: { orgId: string; name: string; timezone?: string; address?: string | null },
  meta: AuditRequestMeta,
) {
  const org = await accessibleOrg(deps.db, p, input.orgId);
  if (siteRestriction(p)) throw new AppError('forbidden', 'A site-restricted member cannot create sites.');
  try {
    return await deps.db.transaction(async (tx) => {
      const row = await insertSite(tx, {
        orgId: org.id,
        name: input.name,
        timezone: input.timezone ?? 'UTC',
        address: input.address ?? null,
      });
      await deps.audit.record(
        tx,
        {
          action: 'site.create',
          actor: actor(p),
          partnerId: org.partnerId,
          orgId: org.id,
          resourceType: 'site',
          resourceId: row.id,
          details: { name: input.name },
        },
        meta,
      );
      return siteToJson(row);
    });
  } catch (err) {
    if (isUniqueViolation(err))
      throw new AppError('name_taken', 'A site with this name already exists in the organization.');
    throw err;
  }
}

export async function updateSite(
  deps: Deps,
  p: Principal,
  id: string,
  patch: { name?: string; timezone?: string; address?: string | null },
  meta: AuditRequestMeta,
) {
  try {
    return await deps.db.transaction(async (tx) => {
      const site = await findSite(tx, p, id);
      const row = await updateSiteRow(tx, id, { ...patch, updatedAt: deps.clock.now() });
      await deps.audit.record(
        tx,
        {
          action: 'site.update',
          actor: actor(p),
          partnerId: p.partnerId,
          orgId: site.orgId,
          resourceType: 'site',
          resourceId: id,
          details: { changed: Object.keys(patch).sort() },
        },
        meta,
      );
      return siteToJson(row);
    });
  } catch (err) {
    if (isUniqueViolation(err))
      throw new AppError('name_taken', 'A site with this name already exists in the organization.');
    throw err;
  }
}

export async function deleteSite(deps: Deps, p: Principal, id: string, meta: AuditRequestMeta) {
  await deps.db.transaction(async (tx) => {
    const site = await findSite(tx, p, id);
    const deviceCount = await deviceCountOfSite(tx, id);
    if (deviceCount > 0)
      throw new AppError('resource_in_use', 'The site still has devices; move or remove them first.', { deviceCount });
    await deleteSiteRow(tx, id);
    await deps.audit.record(
      tx,
      {
        action: 'site.delete',
        actor: actor(p),
        partnerId: p.partnerId,
        orgId: site.orgId,
        resourceType: 'site',
        resourceId: id,
        details: { name: site.name },
      },
      meta,
    );
  });
}

// Device groups.

/** deviceCount counts only devices the caller may see: the group itself is visible, so the site restriction is what remains. */
async function groupsToJson(db: Executor, p: Principal, rows: GroupRow[]) {
  const s = scopeOf(p);
  const counts = rows.length
    ? await groupDeviceCounts(
        db,
        s,
        rows.map((r) => r.id),
      )
    : [];
  const byId = new Map(counts.map((c) => [c.groupId, Number(c.n)]));
  return rows.map((g) => ({
    id: g.id,
    orgId: g.orgId,
    siteId: g.siteId,
    name: g.name,
    deviceCount: byId.get(g.id) ?? 0,
    createdAt: g.createdAt.toISOString(),
    updatedAt: g.updatedAt.toISOString(),
  }));
}

export async function findGroup(db: Executor, p: Principal, id: string): Promise<GroupRow> {
  return (await findInScope(db, p, DEVICE_GROUP, id)).row;
}

export async function listGroups(
  db: Executor,
  p: Principal,
  scope: Scope,
  q: { orgId: string; limit: number; cursor?: string; search?: string },
) {
  await accessibleOrg(db, p, q.orgId);
  const after = decodeCursor(q.cursor, cursor);
  const rows = await listGroupRows(db, scope, { orgId: q.orgId, search: q.search, after, limit: q.limit });
  const page = pageOf(rows, q.limit, (g) => ({ n: g.name.toLowerCase(), id: g.id }));
  return { data: await groupsToJson(db, p, page.data), nextCursor: page.nextCursor };
}

export async function getGroup(db: Executor, p: Principal, id: string) {
  return (await groupsToJson(db, p, [await findGroup(db, p, id)]))[0]!;
}

/** Refuses (400, on `siteId`) a site the caller cannot see or that is not of the organisation. */
export async function checkSiteOfOrg(db: Executor, p: Principal, orgId: string, siteId: string | null | undefined) {
  if (!siteId) return;
  const site = await findSite(db, p, siteId).catch(() => null);
  if (!site || site.orgId !== orgId)
    throw new AppError('validation_failed', 'The site is not of this organization.', {
      details: { fieldErrors: { siteId: ['Not a site of this organization'] }, formErrors: [] },
    });
}

export async function createGroup(
  deps: Deps,
  p: Principal,
  input: { orgId: string; siteId?: string | null; name: string },
  meta: AuditRequestMeta,
) {
  const org = await accessibleOrg(deps.db, p, input.orgId);
  if (groupRestriction(p)) throw new AppError('forbidden', 'A group-restricted member cannot create device groups.');
  await checkSiteOfOrg(deps.db, p, org.id, input.siteId);
  try {
    return await deps.db.transaction(async (tx) => {
      const row = await insertGroup(tx, { orgId: org.id, siteId: input.siteId ?? null, name: input.name });
      await deps.audit.record(
        tx,
        {
          action: 'device_group.create',
          actor: actor(p),
          partnerId: org.partnerId,
          orgId: org.id,
          resourceType: 'device_group',
          resourceId: row.id,
          details: { name: input.name },
        },
        meta,
      );
      return (await groupsToJson(tx, p, [row]))[0]!;
    });
  } catch (err) {
    if (isUniqueViolation(err))
      throw new AppError('name_taken', 'A device group with this name already exists in the organization.');
    throw err;
  }
}

export async function updateGroup(
  deps: Deps,
  p: Principal,
  id: string,
  patch: { name?: string; siteId?: string | null },
  meta: AuditRequestMeta,
) {
  const group = await findGroup(deps.db, p, id);
  await checkSiteOfOrg(deps.db, p, group.orgId, patch.siteId);
  try {
    return await deps.db.transaction(async (tx) => {
      const row = await updateGroupRow(tx, id, { ...patch, updatedAt: deps.clock.now() });
      await deps.audit.record(
        tx,
        {
          action: 'device_group.update',
          actor: actor(p),
          partnerId: p.partnerId,
          orgId: group.orgId,
          resourceType: 'device_group',
          resourceId: id,
          details: { changed: Object.keys(patch).sort() },
        },
        meta,
      );
      return (await groupsToJson(tx, p, [row]))[0]!;
    });
  } catch (err) {
    if (isUniqueViolation(err))
      throw new AppError('name_taken', 'A device group with this name already exists in the organization.');
    throw err;
  }
}

export async function deleteGroup(deps: Deps, p: Principal, id: string, meta: AuditRequestMeta) {
  await deps.db.transaction(async (tx) => {
    const group = await findGroup(tx, p, id);
    await deleteGroupRow(tx, id);
    await deps.audit.record(
      tx,
      {
        action: 'device_group.delete',
        actor: actor(p),
        partnerId: p.partnerId,
        orgId: group.orgId,
        resourceType: 'device_group',
        resourceId: id,
        details: { name: group.name },
      },
      meta,
    );
  });
}

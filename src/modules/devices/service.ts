// Devices (created only by agent enrolment). A site- or group-restricted member never sees, counts or
// changes a device outside the restriction: the condition is part of every query.
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import { accessibleOrg, checkSiteOfOrg, DEVICE, findGroup, findInScope, findSite } from '../tenants/index.js';
import { type Scope, scopeOf } from '../../access/scope.js';
import {
  addGroupMembers,
  countVisibleInOrg,
  deleteDeviceRow,
  inventoryOf,
  listDeviceRows,
  membershipsOf,
  moveDevicesToSite,
  onlySiteOf,
  setVisibleGroups,
  updateDeviceRow,
  type DeviceRow,
} from './repo.js';

const actor = actorOf;

async function toJson(db: Executor, rows: DeviceRow[]) {
  const memberships = rows.length
    ? await membershipsOf(
        db,
        rows.map((r) => r.id),
      )
    : [];
  const groups = new Map<string, string[]>();
  for (const m of memberships) groups.set(m.deviceId, [...(groups.get(m.deviceId) ?? []), m.groupId]);
  return rows.map((d) => ({
    id: d.id,
    orgId: d.orgId,
    siteId: d.siteId,
    hostname: d.hostname,
    displayName: d.displayName,
    osType: d.osType,
    osVersion: d.osVersion,
    agentVersion: d.agentVersion,
    deviceGroupIds: (groups.get(d.id) ?? []).sort(),
    enrolledAt: d.enrolledAt.toISOString(),
    lastSeenAt: d.lastSeenAt?.toISOString() ?? null,
    createdAt: d.createdAt.toISOString(),
    updatedAt: d.updatedAt.toISOString(),
  }));
}

const cursor = z.object({ h: z.string(), id: z.uuid() });

export async function listDevices(
  db: Executor,
  p: Principal,
  scope: Scope,
  q: { orgId?: string; siteId?: string; deviceGroupId?: string; limit: number; cursor?: string; search?: string },
) {
  if (q.orgId) await accessibleOrg(db, p, q.orgId);
  const after = decodeCursor(q.cursor, cursor);
  const rows = await listDeviceRows(db, scope, {
    orgId: q.orgId,
    siteId: q.siteId,
    deviceGroupId: q.deviceGroupId,
    search: q.search,
    after,
    limit: q.limit,
  });
  const page = pageOf(rows, q.limit, (d) => ({ h: d.hostname.toLowerCase(), id: d.id }));
  return { data: await toJson(db, page.data), nextCursor: page.nextCursor };
}

export async function findDevice(db: Executor, p: Principal, id: string): Promise<DeviceRow> {
  return (await findInScope(db, p, DEVICE, id)).row;
}

export async function getDevice(db: Executor, p: Principal, id: string) {
  const device = await findDevice(db, p, id);
  const [json] = await toJson(db, [device]);
  const inv = await inventoryOf(db, id);
  return {
    ...json!,
    inventory: inv
      ? {
          hardware: inv.hardware as Record<string, unknown>,
          software: inv.software as unknown[],
          patches: inv.patches as unknown[],
          reportedAt: inv.reportedAt.toISOString(),
        }
      : null,
  };
}

async function checkGroups(db: Executor, p: Principal, orgId: string, ids: string[]) {
  for (const id of new Set(ids)) {
    const g = await findGroup(db, p, id).catch(() => null);
    if (!g || g.orgId !== orgId)
      throw new AppError('validation_failed', 'A device group is not of this organization.', {
        details: { fieldErrors: { deviceGroupIds: ['Not a device group of this organization'] }, formErrors: [] },
      });
  }
}

export async function updateDevice(
  deps: Deps,
  p: Principal,
  id: string,
  patch: { name?: string | null; siteId?: string; deviceGroupIds?: string[] },
  meta: AuditRequestMeta,
) {
  await deps.db.transaction(async (tx) => {
    const device = await findDevice(tx, p, id);
    await checkSiteOfOrg(tx, p, device.orgId, patch.siteId);
    if (patch.deviceGroupIds) await checkGroups(tx, p, device.orgId, patch.deviceGroupIds);
    await updateDeviceRow(tx, id, {
      ...(patch.name !== undefined ? { displayName: patch.name } : {}),
      ...(patch.siteId ? { siteId: patch.siteId } : {}),
      updatedAt: deps.clock.now(),
    });
    if (patch.deviceGroupIds) await setVisibleGroups(tx, scopeOf(p), [id], [...new Set(patch.deviceGroupIds)]);
    await deps.audit.record(
      tx,
      {
        action: 'device.update',
        actor: actor(p),
        partnerId: p.partnerId,
        orgId: device.orgId,
        resourceType: 'device',
        resourceId: id,
        details: { changed: Object.keys(patch).sort() },
      },
      meta,
    );
  });
  return getDevice(deps.db, p, id);
}

export async function deleteDevice(deps: Deps, p: Principal, id: string, meta: AuditRequestMeta) {
  await deps.db.transaction(async (tx) => {
    const device = await findDevice(tx, p, id);
    await deleteDeviceRow(tx, id);
    await deps.audit.record(
      tx,
      {
        action: 'device.delete',
        actor: actor(p),
        partnerId: p.partnerId,
        orgId: device.orgId,
        resourceType: 'device',
        resourceId: id,
        details: { hostname: device.hostname },
      },
      meta,
    );
  });
}

export async function addDevicesToGroup(
  deps: Deps,
  p: Principal,
  groupId: string,
  deviceIds: string[],
  meta: AuditRequestMeta,
) {
  await deps.db.transaction(async (tx) => {
    const group = await findGroup(tx, p, groupId);
    const unique = [...new Set(deviceIds)];
    if ((await countVisibleInOrg(tx, scopeOf(p), group.orgId, unique)) !== unique.length)
      throw new AppError('validation_failed', 'Some devices are not of this organization.', {
        details: { fieldErrors: { deviceIds: ['Unknown device'] }, formErrors: [] },
      });
    await addGroupMembers(tx, groupId, unique);
    await deps.audit.record(
      tx,
      {
        action: 'device_group.devices.add',
        actor: actor(p),
        partnerId: p.partnerId,
        orgId: group.orgId,
        resourceType: 'device_group',
        resourceId: groupId,
        details: { deviceIds: unique },
      },
      meta,
    );
  });
}

const unknownDevices = () =>
  new AppError('validation_failed', 'Some devices are not of this organization.', {
    details: { fieldErrors: { deviceIds: ['Unknown device'] }, formErrors: [] },
  });

/**
 * Moves devices, in one step, to a site, a device group (replacing the groups the caller can see), or both. Every
 * device and the target are resolved within the caller's scope and must be of one organisation; any other id
 * refuses the whole move, so nothing is half-moved.
 */
export async function moveDevices(
  deps: Deps,
  p: Principal,
  input: { deviceIds: string[]; siteId?: string; deviceGroupId?: string | null },
  meta: AuditRequestMeta,
) {
  const ids = [...new Set(input.deviceIds)];
  return deps.db.transaction(async (tx) => {
    const site = input.siteId ? await findSite(tx, p, input.siteId).catch(() => null) : null;
    if (input.siteId && !site)
      throw new AppError('validation_failed', 'The site was not found.', {
        details: { fieldErrors: { siteId: ['Unknown site'] }, formErrors: [] },
      });
    const group = input.deviceGroupId ? await findGroup(tx, p, input.deviceGroupId).catch(() => null) : null;
    if (input.deviceGroupId && !group)
      throw new AppError('validation_failed', 'The device group was not found.', {
        details: { fieldErrors: { deviceGroupId: ['Unknown device group'] }, formErrors: [] },
      });
    const orgId = site?.orgId ?? group?.orgId ?? (await findDevice(tx, p, ids[0]!).catch(() => null))?.orgId;
    if (!orgId) throw unknownDevices();
    if (site && group && group.orgId !== site.orgId)
      throw new AppError('validation_failed', 'The device group is not of the site\u2019s organization.', {
        details: { fieldErrors: { deviceGroupId: ['Not a device group of this organization'] }, formErrors: [] },
      });
    if ((await countVisibleInOrg(tx, scopeOf(p), orgId, ids)) !== ids.length) throw unknownDevices();
    // A group that belongs to a site holds only that site's devices.
    if (group?.siteId && group.siteId !== (site?.id ?? (await onlySiteOf(tx, scopeOf(p), ids))))
      throw new AppError('validation_failed', 'The device group belongs to another site.', {
        details: { fieldErrors: { deviceGroupId: ['Belongs to another site than the devices'] }, formErrors: [] },
      });
    const now = deps.clock.now();
    if (site) await moveDevicesToSite(tx, ids, site.id, now);
    if (input.deviceGroupId !== undefined) await setVisibleGroups(tx, scopeOf(p), ids, group ? [group.id] : []);
    await deps.audit.record(
      tx,
      {
        action: 'device.move',
        actor: actor(p),
        partnerId: p.partnerId,
        orgId,
        resourceType: 'device',
        resourceId: ids.length === 1 ? ids[0]! : null,
        details: { deviceIds: ids, siteId: site?.id, deviceGroupId: input.deviceGroupId },
      },
      meta,
    );
    return { moved: ids.length };
  });
}

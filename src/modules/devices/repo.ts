// Devices: the SQL. Every query of devices a caller names is limited by the caller's Reach.
import { and, asc, eq, ilike, inArray, sql } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { deviceGroupMembers, deviceGroups, deviceInventory, devices } from '../../db/schema/index.js';
import { deviceGroupVisible, deviceVisible, type Reach } from '../../db/tenant-filter.js';
import { likePrefix } from '../../db/order.js';

export type DeviceRow = typeof devices.$inferSelect;
type NewDevice = typeof devices.$inferInsert;

/** Group memberships of the devices. */
export const membershipsOf = (db: Executor, deviceIds: string[]) =>
  db.select().from(deviceGroupMembers).where(inArray(deviceGroupMembers.deviceId, deviceIds));

/** One page (plus one row) of the devices the scope can see, by lower-cased hostname then id. */
export function listDeviceRows(
  db: Executor,
  scope: Reach,
  q: {
    orgId?: string;
    siteId?: string;
    deviceGroupId?: string;
    search?: string;
    after: { h: string; id: string } | null;
    limit: number;
  },
) {
  const after = q.after;
  return db
    .select()
    .from(devices)
    .where(
      and(
        deviceVisible(scope),
        q.orgId ? eq(devices.orgId, q.orgId) : undefined,
        q.siteId ? eq(devices.siteId, q.siteId) : undefined,
        q.deviceGroupId
          ? sql`exists (select 1 from device_group_members m where m.device_id = ${devices.id} and m.group_id = ${q.deviceGroupId})`
          : undefined,
        q.search ? ilike(devices.hostname, likePrefix(q.search)) : undefined,
        after ? sql`(lower(${devices.hostname}), ${devices.id}) > (${after.h}, ${after.id})` : undefined,
      ),
    )
    .orderBy(asc(sql`lower(${devices.hostname})`), asc(devices.id))
    .limit(q.limit + 1);
}

export async function inventoryOf(db: Executor, deviceId: string) {
  const [inv] = await db.select().from(deviceInventory).where(eq(deviceInventory.deviceId, deviceId));
  return inv;
}

export async function updateDeviceRow(db: Executor, id: string, set: Partial<NewDevice>): Promise<void> {
  await db.update(devices).set(set).where(eq(devices.id, id));
}

/**
 * Sets the groups the scope can see, for each device; memberships in groups outside a restriction are not the
 * caller's to change.
 */
export async function setVisibleGroups(
  db: Executor,
  scope: Reach,
  deviceIds: string[],
  groupIds: string[],
): Promise<void> {
  const visibleGroups = db.select({ id: deviceGroups.id }).from(deviceGroups).where(deviceGroupVisible(scope));
  await db
    .delete(deviceGroupMembers)
    .where(and(inArray(deviceGroupMembers.deviceId, deviceIds), inArray(deviceGroupMembers.groupId, visibleGroups)));
  if (groupIds.length)
    await db
      .insert(deviceGroupMembers)
      .values(deviceIds.flatMap((deviceId) => groupIds.map((groupId) => ({ deviceId, groupId }))))
      .onConflictDoNothing();
}

export async function moveDevicesToSite(db: Executor, deviceIds: string[], siteId: string, now: Date): Promise<void> {
  await db.update(devices).set({ siteId, updatedAt: now }).where(inArray(devices.id, deviceIds));
}

export async function deleteDeviceRow(db: Executor, id: string): Promise<void> {
  await db.delete(devices).where(eq(devices.id, id));
}

/** How many of the devices are of the organisation and visible to the scope. */
export async function countVisibleInOrg(
  db: Executor,
  scope: Reach,
  orgId: string,
  deviceIds: string[],
): Promise<number> {
  const visible = await db
    .select({ id: devices.id })
    .from(devices)
    .where(and(inArray(devices.id, deviceIds), eq(devices.orgId, orgId), deviceVisible(scope)));
  return visible.length;
}

export async function addGroupMembers(db: Executor, groupId: string, deviceIds: string[]): Promise<void> {
  await db
    .insert(deviceGroupMembers)
    .values(deviceIds.map((deviceId) => ({ deviceId, groupId })))
    .onConflictDoNothing();
}

/** The one site all the devices are in; undefined when they are in several. */
export async function onlySiteOf(db: Executor, scope: Reach, deviceIds: string[]): Promise<string | undefined> {
  const rows = await db
    .selectDistinct({ siteId: devices.siteId })
    .from(devices)
    .where(and(inArray(devices.id, deviceIds), deviceVisible(scope)));
  return rows.length === 1 ? rows[0]!.siteId : undefined;
}

// Enrollment keys and the agent side: the SQL. Callers resolve the caller's scope and check the organisation first.
import { and, desc, eq, gt, isNull, lt, or, sql } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import {
  deviceGroupMembers,
  deviceGroups,
  deviceInventory,
  devices,
  enrollmentKeys,
  sites,
} from '../../db/schema/index.js';
import { orgCondition, siteCondition, type Reach } from '../../db/tenant-filter.js';
import { rowsOf } from '../../db/rows.js';

export type KeyRow = typeof enrollmentKeys.$inferSelect;
type NewKey = typeof enrollmentKeys.$inferInsert;
type NewDevice = typeof devices.$inferInsert;

export async function insertKey(db: Executor, values: NewKey): Promise<KeyRow> {
  const [row] = await db.insert(enrollmentKeys).values(values).returning();
  return row!;
}

const keyVisible = (s: Reach) => and(orgCondition(s, enrollmentKeys.orgId), siteCondition(s, enrollmentKeys.siteId));

/** One page (plus one row) of the keys the scope can see, newest first. */
export function listKeyRows(
  db: Executor,
  scope: Reach,
  q: { orgId?: string; after: { c: string; id: string } | null; limit: number },
) {
  const after = q.after;
  return db
    .select()
    .from(enrollmentKeys)
    .where(
      and(
        keyVisible(scope),
        q.orgId ? eq(enrollmentKeys.orgId, q.orgId) : undefined,
        after
          ? sql`(${enrollmentKeys.createdAt}, ${enrollmentKeys.id}) < (${new Date(after.c)}, ${after.id})`
          : undefined,
      ),
    )
    .orderBy(desc(enrollmentKeys.createdAt), desc(enrollmentKeys.id))
    .limit(q.limit + 1);
}

export async function deleteKeyRow(db: Executor, id: string): Promise<void> {
  await db.delete(enrollmentKeys).where(eq(enrollmentKeys.id, id));
}

/**
 * One statement decides: only a live key below its limit is counted, so N concurrent enrolments against maxUsage M
 * count exactly min(N, M) uses. Undefined when the key is unknown, expired or used up.
 */
export async function countKeyUse(db: Executor, hash: string, now: Date): Promise<KeyRow | undefined> {
  const [key] = await db
    .update(enrollmentKeys)
    .set({ usageCount: sql`${enrollmentKeys.usageCount} + 1` })
    .where(
      and(
        eq(enrollmentKeys.keyHash, hash),
        gt(enrollmentKeys.expiresAt, now),
        lt(enrollmentKeys.usageCount, enrollmentKeys.maxUsage),
      ),
    )
    .returning();
  return key;
}

export async function keyByHash(db: Executor, hash: string): Promise<KeyRow | undefined> {
  const [known] = await db.select().from(enrollmentKeys).where(eq(enrollmentKeys.keyHash, hash));
  return known;
}

/** The site's id when it is a site of the organisation. */
export async function siteOfOrg(db: Executor, siteId: string, orgId: string): Promise<string | undefined> {
  const [site] = await db
    .select({ id: sites.id })
    .from(sites)
    .where(and(eq(sites.id, siteId), eq(sites.orgId, orgId)));
  return site?.id;
}

export async function insertDevice(db: Executor, values: NewDevice) {
  const [device] = await db.insert(devices).values(values).returning();
  return device!;
}

/**
 * The new device joins the key's device group when the group still exists in the key's organisation and holds the
 * device's site (a group of no site holds any). The group's id, or null when the device joins none.
 */
export async function joinKeyGroup(
  db: Executor,
  key: KeyRow,
  deviceId: string,
  siteId: string,
): Promise<string | null> {
  if (!key.deviceGroupId) return null;
  const [group] = await db
    .select({ id: deviceGroups.id })
    .from(deviceGroups)
    .where(
      and(
        eq(deviceGroups.id, key.deviceGroupId),
        eq(deviceGroups.orgId, key.orgId),
        or(isNull(deviceGroups.siteId), eq(deviceGroups.siteId, siteId)),
      ),
    );
  if (!group) return null;
  await db.insert(deviceGroupMembers).values({ deviceId, groupId: group.id });
  return group.id;
}

export async function partnerOfOrg(db: Executor, orgId: string): Promise<string | null> {
  const [org] = await db
    .execute(sql`select partner_id from organizations where id = ${orgId}`)
    .then((r) => rowsOf<{ partner_id: string }>(r));
  return org?.partner_id ?? null;
}

export async function deviceIdByAgentToken(db: Executor, tokenHash: string): Promise<string | undefined> {
  const [device] = await db.select({ id: devices.id }).from(devices).where(eq(devices.agentTokenHash, tokenHash));
  return device?.id;
}

/** The report replaces the device's previous inventory and patch state; the device was seen now. */
export async function replaceInventory(
  db: Executor,
  deviceId: string,
  body: { hardware: Record<string, unknown>; software: unknown[]; patches: unknown[] },
  now: Date,
): Promise<void> {
  await db
    .insert(deviceInventory)
    .values({ deviceId, hardware: body.hardware, software: body.software, patches: body.patches, reportedAt: now })
    .onConflictDoUpdate({
      target: deviceInventory.deviceId,
      set: { hardware: body.hardware, software: body.software, patches: body.patches, reportedAt: now },
    });
  await db.update(devices).set({ lastSeenAt: now }).where(eq(devices.id, deviceId));
}

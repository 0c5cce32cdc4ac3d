// Custom fields: the SQL of definitions, values and the entities an import matches. Callers resolve the target and
// the caller's scope, and check ownership, first.
import { and, asc, eq, gt, ilike, inArray, isNull, or, sql } from 'drizzle-orm';
import type { Executor, Tx } from '../../db/connect.js';
import {
  contacts,
  customFieldDefinitions as defs,
  customFieldValues as vals,
  devices,
  sites,
} from '../../db/schema/index.js';
import { deviceVisible, effectiveFor, type Target, type Reach } from '../../db/tenant-filter.js';
import { likePrefix } from '../../db/order.js';
import type { EntityType } from './schemas.js';

export type DefinitionRow = typeof defs.$inferSelect;
type NewDefinition = typeof defs.$inferInsert;
const cols = { partnerId: defs.partnerId, orgId: defs.orgId };

/** One page (plus one row) of the definitions in force at the target, by key then id. */
export async function listDefinitionRows(
  db: Executor,
  target: Target,
  q: { entityType?: EntityType; search?: string; after: { k: string; id: string } | null; limit: number },
) {
  const after = q.after;
  return db
    .select()
    .from(defs)
    .where(
      and(
        effectiveFor(target, cols),
        q.entityType ? eq(defs.entityType, q.entityType) : undefined,
        q.search ? or(ilike(defs.key, likePrefix(q.search)), ilike(defs.name, likePrefix(q.search))) : undefined,
        after ? or(gt(defs.key, after.k), and(eq(defs.key, after.k), gt(defs.id, after.id))) : undefined,
      ),
    )
    .orderBy(asc(defs.key), asc(defs.id))
    .limit(q.limit + 1);
}

/** Definitions in force for an entity of an organisation, by key. */
export function applicableDefinitionRows(db: Executor, partnerId: string, orgId: string, entityType: EntityType) {
  return db
    .select({ id: defs.id, key: defs.key, type: defs.type, options: defs.options })
    .from(defs)
    .where(
      and(
        eq(defs.partnerId, partnerId),
        eq(defs.entityType, entityType),
        or(isNull(defs.orgId), eq(defs.orgId, orgId)),
      ),
    )
    .orderBy(asc(defs.key));
}

/** Definitions of one partner and entity type take turns (until the transaction ends). */
export async function lockDefinitions(tx: Tx, partnerId: string, entityType: EntityType): Promise<void> {
  await tx.execute(
    sql`select pg_advisory_xact_lock(hashtextextended(${`custom-fields:${partnerId}:${entityType}`}, 0))`,
  );
}

/** Whether a definition with this key is in force at the owner (an organisation owner: its own or partner-wide). */
export async function keyInUse(tx: Tx, owner: Target, entityType: EntityType, key: string): Promise<boolean> {
  const [clash] = await tx
    .select({ id: defs.id })
    .from(defs)
    .where(
      and(
        eq(defs.partnerId, owner.partnerId),
        eq(defs.entityType, entityType),
        eq(defs.key, key),
        owner.orgId ? or(isNull(defs.orgId), eq(defs.orgId, owner.orgId)) : undefined,
      ),
    )
    .limit(1);
  return clash !== undefined;
}

export async function insertDefinition(tx: Tx, values: NewDefinition): Promise<DefinitionRow> {
  const [row] = await tx.insert(defs).values(values).returning();
  return row!;
}

export async function updateDefinitionRow(tx: Tx, id: string, set: Partial<NewDefinition>): Promise<DefinitionRow> {
  const [row] = await tx.update(defs).set(set).where(eq(defs.id, id)).returning();
  return row!;
}

/** Its values go with it (ON DELETE CASCADE). */
export async function deleteDefinitionRow(tx: Tx, id: string): Promise<void> {
  await tx.delete(defs).where(eq(defs.id, id));
}

/** The distinct values (as text) stored for a definition. */
export async function usedValues(tx: Tx, definitionId: string): Promise<string[]> {
  const used = await tx
    .selectDistinct({ v: sql<string>`${vals.value} #>> '{}'` })
    .from(vals)
    .where(eq(vals.definitionId, definitionId));
  return used.map((u) => u.v);
}

/** The values of one entity under the definitions in force for it, by key. */
export function valueRows(db: Executor, partnerId: string, type: EntityType, entity: { id: string; orgId: string }) {
  return db
    .select({ key: defs.key, value: vals.value })
    .from(vals)
    .innerJoin(defs, eq(defs.id, vals.definitionId))
    .where(
      and(
        eq(vals.entityId, entity.id),
        eq(defs.partnerId, partnerId),
        eq(defs.entityType, type),
        or(isNull(defs.orgId), eq(defs.orgId, entity.orgId)),
      ),
    )
    .orderBy(asc(defs.key));
}

export async function deleteValues(tx: Tx, entityId: string, definitionIds: string[]): Promise<void> {
  await tx.delete(vals).where(and(eq(vals.entityId, entityId), inArray(vals.definitionId, definitionIds)));
}

/** Insert or overwrite values (one statement). */
export async function upsertValues(
  tx: Tx,
  rows: { definitionId: string; entityId: string; value: unknown }[],
  now: Date,
): Promise<void> {
  await tx
    .insert(vals)
    .values(rows.map((r) => ({ ...r, updatedAt: now })))
    .onConflictDoUpdate({
      target: [vals.definitionId, vals.entityId],
      set: { value: sql`excluded.value`, updatedAt: now },
    });
}

/** Imports into one organisation take turns (until the transaction ends). */
export async function lockImport(tx: Tx, orgId: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`custom-fields-import:${orgId}`}, 0))`);
}

/** The devices of an organisation the scope can see. */
export const visibleDeviceHosts = (db: Executor, orgId: string, scope: Reach) =>
  db
    .select({ id: devices.id, hostname: devices.hostname })
    .from(devices)
    .where(and(eq(devices.orgId, orgId), deviceVisible(scope)));

/** The sites of an organisation (only `allowed` ones when set). */
export const siteNames = (db: Executor, orgId: string, allowed: string[] | null | undefined) =>
  db
    .select({ id: sites.id, name: sites.name })
    .from(sites)
    .where(and(eq(sites.orgId, orgId), allowed ? inArray(sites.id, allowed) : undefined));

export const contactKeys = (db: Executor, orgId: string) =>
  db
    .select({ id: contacts.id, externalId: contacts.externalId, email: contacts.email })
    .from(contacts)
    .where(eq(contacts.orgId, orgId));

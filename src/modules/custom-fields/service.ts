// Custom-field definitions (settings:read|write): partner-wide (org_id null, in force in every organisation of the
// partner; changed only with orgAccess `all`) or one organisation's. A key is unique per entity type among the
// definitions in force for an organisation: an organisation cannot shadow a partner-wide key, nor the reverse, so a
// value is always named by exactly one definition.
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import type { Executor, Tx } from '../../db/connect.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import { assertMayChange, listTarget, ownerForCreate, sourceOf } from '../config-items/index.js';
import { isUniqueViolation } from '../../db/unique-violation.js';
import type { CreateDefinition, EntityType, UpdateDefinition } from './schemas.js';
import type { FieldDef } from './values.js';
import { CUSTOM_FIELD, findInScope } from '../tenants/index.js';
import {
  applicableDefinitionRows,
  deleteDefinitionRow,
  insertDefinition,
  keyInUse,
  listDefinitionRows,
  lockDefinitions,
  updateDefinitionRow,
  usedValues,
  type DefinitionRow,
} from './repo.js';

type Row = DefinitionRow;
const cursor = z.object({ k: z.string(), id: z.uuid() });

export const definitionToJson = (d: Row) => ({
  id: d.id,
  partnerId: d.partnerId,
  orgId: d.orgId,
  key: d.key,
  name: d.name,
  type: d.type,
  options: (d.options as string[] | null) ?? null,
  entityType: d.entityType,
  source: sourceOf(d),
  createdAt: d.createdAt.toISOString(),
  updatedAt: d.updatedAt.toISOString(),
});

export async function findDefinition(db: Executor, p: Principal, id: string): Promise<Row> {
  return (await findInScope(db, p, CUSTOM_FIELD, id)).row;
}

export async function listDefinitions(
  db: Executor,
  p: Principal,
  q: { orgId?: string; entityType?: EntityType; limit: number; cursor?: string; search?: string },
) {
  const target = await listTarget(db, p, q.orgId);
  const after = decodeCursor(q.cursor, cursor);
  const rows = await listDefinitionRows(db, target, {
    entityType: q.entityType,
    search: q.search,
    after,
    limit: q.limit,
  });
  const page = pageOf(rows, q.limit, (d) => ({ k: d.key, id: d.id }));
  return { data: page.data.map(definitionToJson), nextCursor: page.nextCursor };
}

/** Definitions in force for an entity of an organisation. */
export async function applicableDefinitions(
  db: Executor,
  partnerId: string,
  orgId: string,
  entityType: EntityType,
): Promise<FieldDef[]> {
  const rows = await applicableDefinitionRows(db, partnerId, orgId, entityType);
  return rows.map((r) => ({ ...r, options: (r.options as string[] | null) ?? null }));
}

const keyTaken = () =>
  new AppError(
    'conflict',
    'A custom field with this key already exists for this entity type (partner-wide or in the organization).',
  );

export async function createDefinition(deps: Deps, p: Principal, input: CreateDefinition, meta: AuditRequestMeta) {
  const owner = await ownerForCreate(deps.db, p, input.orgId);
  try {
    return await deps.db.transaction(async (tx) => {
      // Definitions of one partner and entity type take turns, so the cross-level check below cannot race.
      await lockDefinitions(tx, owner.partnerId, input.entityType);
      if (await keyInUse(tx, owner, input.entityType, input.key)) throw keyTaken();
      const row = await insertDefinition(tx, {
        partnerId: owner.partnerId,
        orgId: owner.orgId,
        key: input.key,
        name: input.name,
        type: input.type,
        options: input.type === 'select' ? input.options! : null,
        entityType: input.entityType,
      });
      await deps.audit.record(
        tx,
        {
          action: 'custom_field.create',
          actor: actorOf(p),
          partnerId: owner.partnerId,
          orgId: owner.orgId,
          resourceType: 'custom_field',
          resourceId: row.id,
          details: { field: input.key, type: input.type, entityType: input.entityType },
        },
        meta,
      );
      return definitionToJson(row);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw keyTaken();
    throw err;
  }
}

async function optionsInUse(tx: Tx, definitionId: string, removed: string[]): Promise<string[]> {
  if (!removed.length) return [];
  const usedSet = new Set(await usedValues(tx, definitionId));
  return removed.filter((o) => usedSet.has(o));
}

export async function updateDefinition(
  deps: Deps,
  p: Principal,
  id: string,
  patch: UpdateDefinition,
  meta: AuditRequestMeta,
) {
  return deps.db.transaction(async (tx) => {
    const current = await findDefinition(tx, p, id);
    assertMayChange(p, current);
    if (patch.options !== undefined) {
      if (current.type !== 'select')
        throw new AppError('validation_failed', 'Only a select field has options.', {
          details: { fieldErrors: { options: ['only a select field has options'] }, formErrors: [] },
        });
      const removed = ((current.options as string[] | null) ?? []).filter((o) => !patch.options!.includes(o));
      const inUse = await optionsInUse(tx, id, removed);
      if (inUse.length)
        throw new AppError(
          'resource_in_use',
          'Some removed options are still used by values; change those values first.',
          { options: inUse },
        );
    }
    const row = await updateDefinitionRow(tx, id, {
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.options !== undefined ? { options: patch.options } : {}),
      updatedAt: deps.clock.now(),
    });
    await deps.audit.record(
      tx,
      {
        action: 'custom_field.update',
        actor: actorOf(p),
        partnerId: current.partnerId,
        orgId: current.orgId,
        resourceType: 'custom_field',
        resourceId: id,
        details: { field: current.key, changed: Object.keys(patch).sort() },
      },
      meta,
    );
    return definitionToJson(row);
  });
}

export async function deleteDefinition(deps: Deps, p: Principal, id: string, meta: AuditRequestMeta) {
  await deps.db.transaction(async (tx) => {
    const current = await findDefinition(tx, p, id);
    assertMayChange(p, current);
    // Its values go with it (ON DELETE CASCADE).
    await deleteDefinitionRow(tx, id);
    await deps.audit.record(
      tx,
      {
        action: 'custom_field.delete',
        actor: actorOf(p),
        partnerId: current.partnerId,
        orgId: current.orgId,
        resourceType: 'custom_field',
        resourceId: id,
        details: { field: current.key, entityType: current.entityType },
      },
      meta,
    );
  });
}

// Custom-field values of one entity: read with the entity's read permission, written with its write permission,
// on entities the caller can see. Each value is checked against its definition's type; null clears it.
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import { resolveEntity, type EntityRef } from './entities.js';
import type { EntityType } from './schemas.js';
import { deleteValues, upsertValues, valueRows } from './repo.js';
import { applicableDefinitions } from './service.js';
import { checkValue, type FieldValue } from './values.js';

async function readValues(db: Executor, partnerId: string, type: EntityType, entity: EntityRef) {
  const rows = await valueRows(db, partnerId, type, entity);
  return { data: rows.map((r) => ({ key: r.key, value: r.value })) };
}

export async function getValues(db: Executor, p: Principal, q: { entityType: EntityType; entityId: string }) {
  const entity = await resolveEntity(db, p, q.entityType, q.entityId);
  return readValues(db, p.partnerId!, q.entityType, entity);
}

export async function putValues(
  deps: Deps,
  p: Principal,
  input: { entityType: EntityType; entityId: string; values: Record<string, unknown> },
  meta: AuditRequestMeta,
) {
  return deps.db.transaction(async (tx) => {
    const entity = await resolveEntity(tx, p, input.entityType, input.entityId);
    const byKey = new Map(
      (await applicableDefinitions(tx, p.partnerId!, entity.orgId, input.entityType)).map((d) => [d.key, d]),
    );
    const fieldErrors: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
    const set: { definitionId: string; value: FieldValue }[] = [];
    const cleared: string[] = [];
    for (const [key, raw] of Object.entries(input.values)) {
      const def = byKey.get(key);
      if (!def) {
        fieldErrors[`values.${key}`] = [`no ${input.entityType} field with this key`];
        continue;
      }
      if (raw === null) {
        cleared.push(def.id);
        continue;
      }
      const checked = checkValue(def, raw);
      if (checked.ok) set.push({ definitionId: def.id, value: checked.value });
      else fieldErrors[`values.${key}`] = [checked.message];
    }
    if (Object.keys(fieldErrors).length)
      throw new AppError('validation_failed', 'Some values do not fit their fields.', {
        details: { fieldErrors, formErrors: [] },
      });
    const now = deps.clock.now();
    if (cleared.length) await deleteValues(tx, entity.id, cleared);
    if (set.length)
      await upsertValues(
        tx,
        set.map((s) => ({ definitionId: s.definitionId, entityId: entity.id, value: s.value })),
        now,
      );
    const keys = Object.keys(input.values).sort();
    await deps.audit.record(
      tx,
      {
        action: 'custom_field.values.update',
        actor: actorOf(p),
        partnerId: p.partnerId,
        orgId: entity.orgId,
        resourceType: input.entityType,
        resourceId: entity.id,
        details: {
          fields: keys.filter((k) => input.values[k] !== null),
          cleared: keys.filter((k) => input.values[k] === null),
        },
      },
      meta,
    );
    return readValues(tx, p.partnerId!, input.entityType, entity);
  });
}

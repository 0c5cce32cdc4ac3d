// Configuration items: partner-owned ones are in force in every organisation of the partner, next to the
// organisation's own. automations:read|write|delete; partner-owned items need orgAccess `all` to change.
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import { assertMayChange, listTarget, nameCursor, ownerForCreate, sourceOf } from './ownership.js';
import {
  deleteConfigItemRow,
  insertConfigItem,
  listConfigItemRows,
  updateConfigItemRow,
  type ConfigItemRow,
} from './repo.js';
import { BODY_SCHEMAS, type ConfigKind, type CreateConfigItem, type UpdateConfigItem } from './schemas.js';
import { CONFIG_ITEM, findInScope } from '../tenants/index.js';

type Row = ConfigItemRow;

export const configItemToJson = (r: Row) => ({
  id: r.id,
  partnerId: r.partnerId,
  orgId: r.orgId,
  kind: r.kind,
  name: r.name,
  description: r.description,
  body: r.body as Record<string, unknown>,
  source: sourceOf(r),
  createdAt: r.createdAt.toISOString(),
  updatedAt: r.updatedAt.toISOString(),
});

export async function findConfigItem(db: Executor, p: Principal, id: string): Promise<Row> {
  return (await findInScope(db, p, CONFIG_ITEM, id)).row;
}

export async function listConfigItems(
  db: Executor,
  p: Principal,
  q: { orgId?: string; kind?: ConfigKind; limit: number; cursor?: string; search?: string },
) {
  const target = await listTarget(db, p, q.orgId);
  const after = decodeCursor(q.cursor, nameCursor);
  const rows = await listConfigItemRows(db, target, { kind: q.kind, search: q.search, after, limit: q.limit });
  const page = pageOf(rows, q.limit, (r) => ({ n: r.n, id: r.item.id }));
  return { data: page.data.map((r) => configItemToJson(r.item)), nextCursor: page.nextCursor };
}

export async function createConfigItem(deps: Deps, p: Principal, input: CreateConfigItem, meta: AuditRequestMeta) {
  const owner = await ownerForCreate(deps.db, p, input.orgId);
  return deps.db.transaction(async (tx) => {
    const row = await insertConfigItem(tx, {
      partnerId: owner.partnerId,
      orgId: owner.orgId,
      kind: input.kind,
      name: input.name,
      description: input.description ?? null,
      body: input.body,
    });
    await deps.audit.record(
      tx,
      {
        action: 'config_item.create',
        actor: actorOf(p),
        partnerId: owner.partnerId,
        orgId: owner.orgId,
        resourceType: 'config_item',
        resourceId: row.id,
        details: { kind: input.kind, name: input.name },
      },
      meta,
    );
    return configItemToJson(row);
  });
}

/** The body of a PATCH must fit the kind of the item it changes. */
function bodyForKind(kind: ConfigKind, body: unknown): Record<string, unknown> {
  const parsed = BODY_SCHEMAS[kind].safeParse(body);
  if (parsed.success) return parsed.data as Record<string, unknown>;
  const fieldErrors: Record<string, string[]> = {};
  for (const issue of parsed.error.issues)
    (fieldErrors[['body', ...issue.path.map(String)].join('.')] ??= []).push(issue.message);
  throw new AppError('validation_failed', `The body does not fit a ${kind} item.`, {
    details: { fieldErrors, formErrors: [] },
  });
}

export async function updateConfigItem(
  deps: Deps,
  p: Principal,
  id: string,
  patch: UpdateConfigItem,
  meta: AuditRequestMeta,
) {
  return deps.db.transaction(async (tx) => {
    const current = await findConfigItem(tx, p, id);
    assertMayChange(p, current);
    const body = patch.body !== undefined ? bodyForKind(current.kind, patch.body) : undefined;
    const row = await updateConfigItemRow(tx, id, {
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.description !== undefined ? { description: patch.description } : {}),
      ...(body !== undefined ? { body } : {}),
      updatedAt: deps.clock.now(),
    });
    await deps.audit.record(
      tx,
      {
        action: 'config_item.update',
        actor: actorOf(p),
        partnerId: current.partnerId,
        orgId: current.orgId,
        resourceType: 'config_item',
        resourceId: id,
        details: { kind: current.kind, changed: Object.keys(patch).sort() },
      },
      meta,
    );
    return configItemToJson(row);
  });
}

export async function deleteConfigItem(deps: Deps, p: Principal, id: string, meta: AuditRequestMeta) {
  await deps.db.transaction(async (tx) => {
    const current = await findConfigItem(tx, p, id);
    assertMayChange(p, current);
    await deleteConfigItemRow(tx, id);
    await deps.audit.record(
      tx,
      {
        action: 'config_item.delete',
        actor: actorOf(p),
        partnerId: current.partnerId,
        orgId: current.orgId,
        resourceType: 'config_item',
        resourceId: id,
        details: { kind: current.kind, name: current.name },
      },
      meta,
    );
  });
}

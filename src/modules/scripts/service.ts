// Script library: the partner's scripts (availability partner) are visible in every organisation of
// the partner and changed only by partner users with orgAccess `all`; organisation scripts belong to one organisation.
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import { personIdOf, type Principal } from '../../http/context.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import {
  assertMayChange,
  assertPartnerWide,
  listTarget,
  nameCursor,
  ownerForCreate,
  sourceOf,
} from '../config-items/index.js';
import type { CreateScript, ScriptParameter, UpdateScript } from './schemas.js';
import { SCRIPT, findInScope } from '../tenants/index.js';
import { deleteScriptRow, insertScript, listScriptRows, updateScriptRow, type ScriptRow } from './repo.js';

type Row = ScriptRow;

export const scriptSummaryToJson = (s: Omit<Row, 'content'>) => ({
  id: s.id,
  partnerId: s.partnerId,
  orgId: s.orgId,
  name: s.name,
  description: s.description,
  language: s.language,
  availability: s.availability,
  parameters: s.parameters as ScriptParameter[],
  exitCodeSeverityMapping: s.exitCodeSeverityMapping as Record<string, 'info' | 'warning' | 'error' | 'critical'>,
  source: sourceOf(s),
  createdBy: s.createdBy,
  createdAt: s.createdAt.toISOString(),
  updatedAt: s.updatedAt.toISOString(),
});
export const scriptToJson = (s: Row) => ({ ...scriptSummaryToJson(s), content: s.content });

export async function findScript(db: Executor, p: Principal, id: string): Promise<Row> {
  return (await findInScope(db, p, SCRIPT, id)).row;
}

export async function listScripts(
  db: Executor,
  p: Principal,
  q: { orgId?: string; language?: Row['language']; limit: number; cursor?: string; search?: string },
) {
  const target = await listTarget(db, p, q.orgId);
  const after = decodeCursor(q.cursor, nameCursor);
  const rows = await listScriptRows(db, target, { language: q.language, search: q.search, after, limit: q.limit });
  const page = pageOf(rows, q.limit, (r) => ({ n: r.n, id: r.id }));
  return { data: page.data.map(scriptSummaryToJson), nextCursor: page.nextCursor };
}

export async function createScript(deps: Deps, p: Principal, input: CreateScript, meta: AuditRequestMeta) {
  if (input.availability === 'partner') assertPartnerWide(p);
  const owner = await ownerForCreate(deps.db, p, input.orgId);
  return deps.db.transaction(async (tx) => {
    const row = await insertScript(tx, {
      partnerId: owner.partnerId,
      orgId: owner.orgId,
      name: input.name,
      description: input.description ?? null,
      language: input.language,
      content: input.content,
      parameters: input.parameters ?? [],
      availability: input.availability,
      exitCodeSeverityMapping: input.exitCodeSeverityMapping ?? {},
      createdBy: personIdOf(p),
    });
    await deps.audit.record(
      tx,
      {
        action: 'script.create',
        actor: actorOf(p),
        partnerId: owner.partnerId,
        orgId: owner.orgId,
        resourceType: 'script',
        resourceId: row.id,
        details: { name: input.name, language: input.language, availability: input.availability },
      },
      meta,
    );
    return scriptToJson(row);
  });
}

export async function updateScript(deps: Deps, p: Principal, id: string, patch: UpdateScript, meta: AuditRequestMeta) {
  return deps.db.transaction(async (tx) => {
    const current = await findScript(tx, p, id);
    assertMayChange(p, current);
    const row = await updateScriptRow(tx, id, { ...patch, updatedAt: deps.clock.now() });
    await deps.audit.record(
      tx,
      {
        action: 'script.update',
        actor: actorOf(p),
        partnerId: current.partnerId,
        orgId: current.orgId,
        resourceType: 'script',
        resourceId: id,
        details: { changed: Object.keys(patch).sort() },
      },
      meta,
    );
    return scriptToJson(row);
  });
}

export async function deleteScript(deps: Deps, p: Principal, id: string, meta: AuditRequestMeta) {
  await deps.db.transaction(async (tx) => {
    const current = await findScript(tx, p, id);
    assertMayChange(p, current);
    await deleteScriptRow(tx, id);
    await deps.audit.record(
      tx,
      {
        action: 'script.delete',
        actor: actorOf(p),
        partnerId: current.partnerId,
        orgId: current.orgId,
        resourceType: 'script',
        resourceId: id,
        details: { name: current.name },
      },
      meta,
    );
  });
}

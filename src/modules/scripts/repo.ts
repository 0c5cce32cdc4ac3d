// Scripts: the SQL of the script library. Callers resolve the target and check ownership first.
import { and, asc, eq, getTableColumns, gt, ilike, or } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { lowerOf, likePrefix } from '../../db/order.js';
import { scripts } from '../../db/schema/index.js';
import { effectiveFor, type Target } from '../../db/tenant-filter.js';

export type ScriptRow = typeof scripts.$inferSelect;
export type NewScript = typeof scripts.$inferInsert;
const cols = { partnerId: scripts.partnerId, orgId: scripts.orgId };

/** One page (plus one row) of the scripts in force at the target, by lower-cased name then id, without content. */
export async function listScriptRows(
  db: Executor,
  target: Target,
  q: { language?: ScriptRow['language']; search?: string; after?: { n: string; id: string } | null; limit: number },
) {
  const after = q.after;
  const sortKey = lowerOf(scripts.name);
  // Content stays out of the list: up to 1 MiB per script.
  const { content: _content, ...summaryCols } = getTableColumns(scripts);
  return db
    .select({ ...summaryCols, n: sortKey })
    .from(scripts)
    .where(
      and(
        effectiveFor(target, cols),
        q.language ? eq(scripts.language, q.language) : undefined,
        q.search ? ilike(scripts.name, likePrefix(q.search)) : undefined,
        after ? or(gt(sortKey, after.n), and(eq(sortKey, after.n), gt(scripts.id, after.id))) : undefined,
      ),
    )
    .orderBy(asc(sortKey), asc(scripts.id))
    .limit(q.limit + 1);
}

export async function insertScript(db: Executor, values: NewScript): Promise<ScriptRow> {
  const [row] = await db.insert(scripts).values(values).returning();
  return row!;
}

export async function updateScriptRow(db: Executor, id: string, set: Partial<NewScript>): Promise<ScriptRow> {
  const [row] = await db.update(scripts).set(set).where(eq(scripts.id, id)).returning();
  return row!;
}

export async function deleteScriptRow(db: Executor, id: string): Promise<void> {
  await db.delete(scripts).where(eq(scripts.id, id));
}

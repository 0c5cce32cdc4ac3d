// Configuration items: the SQL. Callers resolve the target and check ownership first.
import { and, asc, eq, gt, ilike, or } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import { lowerOf, likePrefix } from '../../db/order.js';
import { configItems } from '../../db/schema/index.js';
import { effectiveFor, type Target } from '../../db/tenant-filter.js';

export type ConfigItemRow = typeof configItems.$inferSelect;
type NewConfigItem = typeof configItems.$inferInsert;
const cols = { partnerId: configItems.partnerId, orgId: configItems.orgId };

/** One page (plus one row) of the items in force at the target, by lower-cased name then id. */
export function listConfigItemRows(
  db: Executor,
  target: Target,
  q: { kind?: ConfigItemRow['kind']; search?: string; after: { n: string; id: string } | null; limit: number },
) {
  const after = q.after;
  const sortKey = lowerOf(configItems.name);
  return db
    .select({ item: configItems, n: sortKey })
    .from(configItems)
    .where(
      and(
        effectiveFor(target, cols),
        q.kind ? eq(configItems.kind, q.kind) : undefined,
        q.search ? ilike(configItems.name, likePrefix(q.search)) : undefined,
        after ? or(gt(sortKey, after.n), and(eq(sortKey, after.n), gt(configItems.id, after.id))) : undefined,
      ),
    )
    .orderBy(asc(sortKey), asc(configItems.id))
    .limit(q.limit + 1);
}

export async function insertConfigItem(db: Executor, values: NewConfigItem): Promise<ConfigItemRow> {
  const [row] = await db.insert(configItems).values(values).returning();
  return row!;
}

export async function updateConfigItemRow(
  db: Executor,
  id: string,
  set: Partial<NewConfigItem>,
): Promise<ConfigItemRow> {
  const [row] = await db.update(configItems).set(set).where(eq(configItems.id, id)).returning();
  return row!;
}

export async function deleteConfigItemRow(db: Executor, id: string): Promise<void> {
  await db.delete(configItems).where(eq(configItems.id, id));
}

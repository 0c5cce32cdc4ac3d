// SQL of the audit trail: the writer's append (and the chain lock it takes), and the reads. The database refuses
// every other change.
import { and, asc, desc, eq, gt, gte, isNull, like, lt, sql, type SQL } from 'drizzle-orm';
import type { Executor, Tx } from '../../db/connect.js';
import { auditVisible, type AuditVisibility } from '../../db/tenant-filter.js';
import { auditLogs, organizations } from '../../db/schema/index.js';
import type { AuditFilters } from './schemas.js';

export type AuditRow = typeof auditLogs.$inferSelect;

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

function filterConditions(f: AuditFilters): SQL[] {
  const c: SQL[] = [];
  if (f.action !== undefined) {
    c.push(
      f.action.endsWith('.*')
        ? like(auditLogs.action, `${escapeLike(f.action.slice(0, -1))}%`)
        : eq(auditLogs.action, f.action),
    );
  }
  if (f.actorUserId !== undefined) c.push(eq(auditLogs.actorUserId, f.actorUserId));
  if (f.resourceType !== undefined) c.push(eq(auditLogs.resourceType, f.resourceType));
  if (f.resourceId !== undefined) c.push(eq(auditLogs.resourceId, f.resourceId));
  if (f.result !== undefined) c.push(eq(auditLogs.result, f.result));
  if (f.orgId !== undefined) c.push(eq(auditLogs.orgId, f.orgId));
  if (f.from !== undefined) c.push(gte(auditLogs.at, new Date(f.from)));
  if (f.to !== undefined) c.push(lt(auditLogs.at, new Date(f.to)));
  return c;
}

/**
 * Keyset reads walk the (partner_id | org_id, seq) indexes in order. Without table statistics (PGlite runs no
 * autovacuum, so it never has any) the planner instead bitmap-scans every remaining record of the partner and sorts
 * them for each page: 45 ms for a page 15,000 records deep, growing with depth. Turning bitmap scans off for the one
 * statement keeps every page's cost constant, with or without statistics.
 */
function inIndexOrder<T>(db: Executor, read: (tx: Tx) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`set local enable_bitmapscan = off`);
    return read(tx);
  });
}

/** Newest first by seq, strictly before `beforeSeq` when given: one keyset page (or export batch). */
export function newestFirst(
  db: Executor,
  v: AuditVisibility,
  f: AuditFilters,
  opts: { beforeSeq: number | null; limit: number },
): Promise<AuditRow[]> {
  const where = [auditVisible(v), ...filterConditions(f)];
  if (opts.beforeSeq !== null) where.push(lt(auditLogs.seq, opts.beforeSeq));
  return inIndexOrder(db, (tx) =>
    tx
      .select()
      .from(auditLogs)
      .where(and(...where))
      .orderBy(desc(auditLogs.seq))
      .limit(opts.limit),
  );
}

/** One chain (a partner's, or the global one for null) in append order, after `afterSeq`. */
export function chainBatch(
  db: Executor,
  partnerId: string | null,
  afterSeq: number,
  limit: number,
): Promise<AuditRow[]> {
  return inIndexOrder(db, (tx) =>
    tx
      .select()
      .from(auditLogs)
      .where(
        and(partnerId ? eq(auditLogs.partnerId, partnerId) : isNull(auditLogs.partnerId), gt(auditLogs.seq, afterSeq)),
      )
      .orderBy(asc(auditLogs.seq))
      .limit(limit),
  );
}

/** Every chain that holds at least one record; null is the global chain. */
export async function chainIds(db: Executor): Promise<(string | null)[]> {
  const rows = await db.selectDistinct({ partnerId: auditLogs.partnerId }).from(auditLogs);
  return rows.map((r) => r.partnerId).sort((a, b) => (a === null ? -1 : b === null ? 1 : a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Whether the organisation is the partner's: a live row, or (once deleted) records of the partner's trail that
 * name it, so the history of a deleted organisation stays reachable to the partner's auditors.
 */
export async function orgBelongsToPartner(db: Executor, partnerId: string, orgId: string): Promise<boolean> {
  const [live] = await db
    .select({ id: organizations.id })
    .from(organizations)
    .where(and(eq(organizations.id, orgId), eq(organizations.partnerId, partnerId)))
    .limit(1);
  if (live) return true;
  const [past] = await db
    .select({ seq: auditLogs.seq })
    .from(auditLogs)
    .where(and(eq(auditLogs.orgId, orgId), eq(auditLogs.partnerId, partnerId)))
    .limit(1);
  return Boolean(past);
}

// ---- The writer's append

/** Serialises the partner's chain (or the partnerless one) until the transaction ends. */
export async function lockChain(tx: Executor, lockKey: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${lockKey}, 0))`);
}

/** The hash of the chain's last record (null: the chain is empty). */
export async function lastHash(tx: Executor, partnerId: string | null): Promise<string | null> {
  const [prev] = await tx
    .select({ hash: auditLogs.hash })
    .from(auditLogs)
    .where(partnerId ? eq(auditLogs.partnerId, partnerId) : isNull(auditLogs.partnerId))
    .orderBy(desc(auditLogs.seq))
    .limit(1);
  return prev?.hash ?? null;
}

export async function appendRecord(
  tx: Executor,
  values: typeof auditLogs.$inferInsert,
  flags: { byPartner: boolean },
): Promise<void> {
  // Hidden from the partner when the organisation has suspended its partner's access as the record is written.
  const partnerHidden = values.orgId
    ? sql`coalesce((select o.settings->>'mspAccess' = 'suspended' from organizations o where o.id = ${values.orgId}), false)`
    : false;
  await tx.insert(auditLogs).values({ ...values, byPartner: flags.byPartner, partnerHidden });
}

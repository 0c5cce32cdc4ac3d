// Bulk data setup for the audit tests and the export benchmark: many records appended to a chain in multi-row
// INSERTs, hashed exactly as the writer hashes them (same chain.ts, same lock), so the chain still verifies.
import { randomUUID } from 'node:crypto';
import { desc, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from '../../src/db/connect.js';
import { auditLogs } from '../../src/db/schema/index.js';
import { chainLockKey, recordHash, type AuditContent } from '../../src/modules/audit/chain.js';

export type SeedEvent = Partial<Omit<AuditContent, 'id' | 'partnerId'>> & { action: string };

/** Appends `count` records to the chain of `partnerId` (null: global); `make(i)` describes record i. Returns the ids in order. */
export async function appendRecords(
  db: Db,
  partnerId: string | null,
  count: number,
  make: (i: number) => SeedEvent,
  batchSize = 1000,
): Promise<string[]> {
  const ids: string[] = [];
  await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${chainLockKey(partnerId)}, 0))`);
    const [last] = await tx
      .select({ hash: auditLogs.hash })
      .from(auditLogs)
      .where(partnerId ? eq(auditLogs.partnerId, partnerId) : isNull(auditLogs.partnerId))
      .orderBy(desc(auditLogs.seq))
      .limit(1);
    let prevHash: string | null = last?.hash ?? null;
    for (let start = 0; start < count; start += batchSize) {
      const rows = [];
      for (let i = start; i < Math.min(count, start + batchSize); i++) {
        const e = make(i);
        const content: AuditContent = {
          id: randomUUID(),
          at: e.at ?? new Date(),
          action: e.action,
          result: e.result ?? 'success',
          actorUserId: e.actorUserId ?? null,
          actorEmail: e.actorEmail ?? null,
          partnerId,
          orgId: e.orgId ?? null,
          resourceType: e.resourceType ?? null,
          resourceId: e.resourceId ?? null,
          ip: e.ip ?? null,
          userAgent: e.userAgent ?? null,
          details: e.details ?? {},
        };
        const hash = recordHash(content, prevHash);
        rows.push({ ...content, at: content.at.toISOString(), prevHash, hash });
        ids.push(content.id);
        prevHash = hash;
      }
      // One statement and one parameter per batch (7x faster than a multi-row VALUES on PGlite); the rows take
      // their seq in array order, which is the chain order.
      await tx.execute(sql`
        insert into audit_logs (id, at, action, result, actor_user_id, actor_email, partner_id, org_id, resource_type, resource_id, ip, user_agent, details, prev_hash, hash)
        select (e->>'id')::uuid, (e->>'at')::timestamptz, e->>'action', (e->>'result')::audit_result, (e->>'actorUserId')::uuid, e->>'actorEmail',
               (e->>'partnerId')::uuid, (e->>'orgId')::uuid, e->>'resourceType', e->>'resourceId', e->>'ip', e->>'userAgent', e->'details',
               e->>'prevHash', e->>'hash'
        from jsonb_array_elements(${JSON.stringify(rows)}::jsonb) with ordinality as batch(e, n)
        order by n`);
    }
  });
  return ids;
}

/**
 * Runs statements as the attacker with database access the chain exists to catch: the append-only triggers are
 * switched off inside one transaction (the table owner may), so nobody else ever sees them off.
 */
export async function asTamperer(
  db: Db,
  run: (tx: Parameters<Parameters<Db['transaction']>[0]>[0]) => Promise<unknown>,
): Promise<void> {
  await db.transaction(async (tx) => {
    // The owner, not the application's role (which may not alter the table): for this transaction only.
    await tx.execute(sql`select set_config('role', 'none', true)`);
    await tx.execute(sql`alter table audit_logs disable trigger audit_logs_no_update`);
    await tx.execute(sql`alter table audit_logs disable trigger audit_logs_no_delete`);
    await run(tx);
    await tx.execute(sql`alter table audit_logs enable trigger audit_logs_no_update`);
    await tx.execute(sql`alter table audit_logs enable trigger audit_logs_no_delete`);
  });
}

// The webhook outbox write, in the transaction of the audit record (AuditWriter's in-transaction hook): one statement
// numbers the record in every matching subscription and queues one delivery each. With no subscription in the
// partner it is an index lookup that matches nothing, so audited requests stay cheap (bench/webhooks.ts measures it).
import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import type { AuditContent } from '../audit/chain.js';

/** A delivery is retried with backoff for this long after it was queued (or queued again), then dead-lettered. */
export const RETRY_WINDOW_MS = 24 * 3_600_000;

/**
 * Which subscriptions get a record: active ones of the record's partner that are partner-wide or of the record's
 * organisation, with an event prefix the action starts with ("*" = all). Records without a partner go nowhere.
 */
export async function queueDeliveries(tx: Executor, record: AuditContent, now: Date): Promise<void> {
  if (!record.partnerId) return;
  const at = now.toISOString();
  const deadline = new Date(now.getTime() + RETRY_WINDOW_MS).toISOString();
  await tx.execute(sql`
    with matched as (
      update webhooks set last_sequence = last_sequence + 1
      where partner_id = ${record.partnerId} and active
        and (org_id is null or org_id = ${record.orgId})
        and exists (select 1 from unnest(events) as p(prefix) where p.prefix = '*' or starts_with(${record.action}, p.prefix))
      returning id, last_sequence)
    insert into webhook_deliveries (webhook_id, sequence, audit_id, action, not_before, deadline, created_at)
    select id, last_sequence, ${record.id}, ${record.action}, ${at}::timestamptz, ${deadline}::timestamptz, ${at}::timestamptz from matched`);
}

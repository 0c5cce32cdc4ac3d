// The webhook outbox write, in the transaction of the audit record (AuditWriter's in-transaction hook): one statement
// numbers the record in every matching subscription and queues one delivery each. With no subscription in the
// partner it is an index lookup that matches nothing, so audited requests stay cheap (bench/webhooks.ts measures it).
import type { Executor } from '../../db/connect.js';
import { queueDeliveryRows } from './repo.js';

/** A delivery is retried with backoff for this long after it was queued (or queued again), then dead-lettered. */
export const RETRY_WINDOW_MS = 24 * 3_600_000;

/** What a delivery is queued for: the audit record's id, tenant and action (an AuditContent fits). */
export interface DeliveredRecord {
  id: string;
  partnerId: string | null;
  orgId: string | null;
  action: string;
}

/**
 * Which subscriptions get a record: active ones of the record's partner that are partner-wide or of the record's
 * organisation, with an event prefix the action starts with ("*" = all). Records without a partner go nowhere.
 */
export async function queueDeliveries(tx: Executor, record: DeliveredRecord, now: Date): Promise<void> {
  if (!record.partnerId) return;
  const at = now.toISOString();
  const deadline = new Date(now.getTime() + RETRY_WINDOW_MS).toISOString();
  await queueDeliveryRows(
    tx,
    { id: record.id, partnerId: record.partnerId, orgId: record.orgId, action: record.action },
    at,
    deadline,
  );
}

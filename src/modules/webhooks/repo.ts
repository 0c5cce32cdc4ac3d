// Webhook subscriptions, the outbox of deliveries and the worker's claims: the SQL. Subscriptions are read through
// the target that owns them (ownedBy).
import { and, asc, desc, eq, exists, gt, lt, notExists, sql, type SQL } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { Db, Executor } from '../../db/connect.js';
import { auditLogs, webhookDeliveries, webhooks } from '../../db/schema/index.js';
import { ownedBy, type Target } from '../../db/tenant-filter.js';
import { claimDue } from '../../db/leased-queue-sql.js';

export type WebhookRow = typeof webhooks.$inferSelect;
type NewWebhook = typeof webhooks.$inferInsert;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
export type AuditRecordRow = typeof auditLogs.$inferSelect;

// ---- The outbox write (in the audit record's transaction)

/**
 * One statement numbers the record in every matching subscription and queues one delivery each: active ones of the
 * record's partner that are partner-wide or of the record's organisation, with an event prefix the action starts with.
 */
export async function queueDeliveryRows(
  tx: Executor,
  record: { id: string; partnerId: string; orgId: string | null; action: string },
  at: string,
  deadline: string,
): Promise<void> {
  await tx.execute(sql`
    with matched as (
      update webhooks set last_sequence = last_sequence + 1
      where partner_id = ${record.partnerId} and active
        and (org_id is null or org_id = ${record.orgId})
        -- A record the organisation wrote while it suspended its partner's access goes to none of the partner's.
        and (not made_by_partner or not exists (select 1 from audit_logs a where a.id = ${record.id} and a.partner_hidden))
        and exists (select 1 from unnest(events) as p(prefix) where p.prefix = '*' or starts_with(${record.action}, p.prefix))
      returning id, last_sequence)
    insert into webhook_deliveries (webhook_id, sequence, audit_id, action, not_before, deadline, created_at)
    select id, last_sequence, ${record.id}, ${record.action}, ${at}::timestamptz, ${deadline}::timestamptz, ${at}::timestamptz from matched`);
}

// ---- Subscriptions

export async function findWebhookRow(db: Executor, t: Target, id: string): Promise<WebhookRow | undefined> {
  const [row] = await db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.id, id), ownedBy(t, webhooks)))
    .limit(1);
  return row;
}

export async function insertWebhook(db: Executor, values: NewWebhook): Promise<WebhookRow> {
  const [created] = await db.insert(webhooks).values(values).returning();
  return created!;
}

/** One page (plus one row) of the target's subscriptions, by id. */
export function listWebhookRows(db: Executor, t: Target, q: { after: { id: string } | null; limit: number }) {
  const after = q.after;
  return db
    .select()
    .from(webhooks)
    .where(and(ownedBy(t, webhooks), after ? gt(webhooks.id, after.id) : undefined))
    .orderBy(asc(webhooks.id))
    .limit(q.limit + 1);
}

export async function updateWebhookRow(db: Executor, id: string, set: Partial<NewWebhook>): Promise<WebhookRow> {
  const [updated] = await db.update(webhooks).set(set).where(eq(webhooks.id, id)).returning();
  return updated!;
}

/** Its deliveries go with it. */
export async function deleteWebhookRow(db: Executor, id: string): Promise<void> {
  await db.delete(webhooks).where(eq(webhooks.id, id));
}

// ---- Deliveries

/** The delivery log of a subscription, newest event first (keyset on the sequence). */
export function listDeliveryRows(
  db: Executor,
  webhookId: string,
  q: { status?: 'pending' | 'delivered' | 'failed'; before: { s: number } | null; limit: number },
) {
  const d = webhookDeliveries;
  const before = q.before;
  return db
    .select()
    .from(d)
    .where(
      and(
        eq(d.webhookId, webhookId),
        q.status ? eq(d.status, q.status) : undefined,
        before ? lt(d.sequence, before.s) : undefined,
      ),
    )
    .orderBy(desc(d.sequence))
    .limit(q.limit + 1);
}

/** Queues one delivery (any status) or every failed one of the subscription again, until `deadline`; their ids. */
export function requeueDeliveries(
  db: Executor,
  webhookId: string,
  deliveryId: string | undefined,
  now: Date,
  deadline: Date,
) {
  const d = webhookDeliveries;
  const which = deliveryId
    ? and(eq(d.webhookId, webhookId), eq(d.id, deliveryId))
    : and(eq(d.webhookId, webhookId), eq(d.status, 'failed'));
  return db
    .update(d)
    .set({
      status: 'pending',
      attempts: 0,
      notBefore: now,
      deadline,
      leasedUntil: null,
      failedAt: null,
      deliveredAt: null,
    })
    .where(which)
    .returning({ id: d.id });
}

// ---- The worker

/**
 * Claims due deliveries: pending, of an active subscription, and the earliest pending one of that subscription
 * (so each claimed row is the head of another subscription).
 */
export function claimDeliveries(db: Db, o: { now: Date; leaseMs: number; limit: number }): Promise<DeliveryRow[]> {
  const earlier = alias(webhookDeliveries, 'earlier');
  const d = webhookDeliveries;
  return claimDue(db, d, {
    ...o,
    where: and(
      eq(d.status, 'pending'),
      exists(
        db
          .select({ one: sql`1` })
          .from(webhooks)
          .where(and(eq(webhooks.id, d.webhookId), eq(webhooks.active, true))),
      ),
      notExists(
        db
          .select({ one: sql`1` })
          .from(earlier)
          .where(
            and(eq(earlier.webhookId, d.webhookId), eq(earlier.status, 'pending'), lt(earlier.sequence, d.sequence)),
          ),
      ),
    ),
    orderBy: asc(d.notBefore),
  });
}

export async function hookForDelivery(db: Executor, webhookId: string) {
  const [hook] = await db
    .select({ id: webhooks.id, url: webhooks.url, secretSealed: webhooks.secretSealed })
    .from(webhooks)
    .where(eq(webhooks.id, webhookId))
    .limit(1);
  return hook;
}

export async function auditRecordOf(db: Executor, auditId: string): Promise<AuditRecordRow | undefined> {
  const [record] = await db.select().from(auditLogs).where(eq(auditLogs.id, auditId)).limit(1);
  return record;
}

/** Settles a claimed delivery; only the lease holder's claim (same attempt, still pending) is changed. */
export async function settleDelivery(db: Executor, row: DeliveryRow, set: Partial<DeliveryRow>): Promise<void> {
  const d = webhookDeliveries;
  const mine: SQL | undefined = and(eq(d.id, row.id), eq(d.attempts, row.attempts), eq(d.status, 'pending'));
  await db.update(d).set(set).where(mine);
}

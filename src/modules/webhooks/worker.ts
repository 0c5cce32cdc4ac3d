// Delivers queued audit events to their subscribers: in sequence order per subscription (only the earliest pending
// delivery of a subscription is claimable), at least once (a delivery is marked delivered only after a 2xx, and a
// crashed instance's lease runs out), with exponential backoff and jitter until the retry window closes, then
// dead-lettered (status failed) so the next event of the subscription can go.
import type { Logger } from 'pino';
import type { Db } from '../../db/connect.js';
import type { Clock } from '../../platform/clock.js';
import { backoffMs, LeasedQueue } from '../../platform/leased-queue.js';
import type { Metrics } from '../../platform/metrics.js';
import type { SecretBox } from '../../platform/secret-box.js';
import type { OutboundReach } from '../../platform/outbound.js';
import {
  auditRecordOf,
  claimDeliveries,
  hookForDelivery,
  settleDelivery,
  type AuditRecordRow,
  type DeliveryRow,
} from './repo.js';
import { openSecret, sendSigned } from './sender.js';

type Delivery = DeliveryRow;

/** After a failed attempt: 10 s, 20 s, 40 s ... capped at two hours, each drawn from its upper half (jitter). */
export const RETRY = { baseMs: 10_000, capMs: 7_200_000, jitter: true } as const;
export const retryDelayMs = (attempts: number, random?: () => number) => backoffMs(attempts, RETRY, random);

/** The message a subscriber receives for one audit record. */
export function auditPayload(webhookId: string, sequence: number, r: AuditRecordRow) {
  return {
    type: 'audit.record',
    timestamp: r.at.toISOString(),
    data: {
      webhookId,
      sequence,
      record: {
        id: r.id,
        at: r.at.toISOString(),
        action: r.action,
        result: r.result,
        actorUserId: r.actorUserId,
        actorEmail: r.actorEmail,
        partnerId: r.partnerId,
        orgId: r.orgId,
        resourceType: r.resourceType,
        resourceId: r.resourceId,
        ip: r.ip,
        userAgent: r.userAgent,
        details: r.details,
      },
      chain: { seq: r.seq, prevHash: r.prevHash, hash: r.hash },
    },
  };
}

export interface WebhookWorkerOptions {
  leaseMs: number;
  reach: OutboundReach;
}

export class WebhookWorker {
  private readonly queue: LeasedQueue<Delivery>;
  /** An audit record queued deliveries since the last kick (set in the transaction, kicked after the response). */
  private queued = false;

  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly logger: Logger,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
    private readonly o: WebhookWorkerOptions,
  ) {
    this.queue = new LeasedQueue<Delivery>({
      name: 'webhook deliveries',
      logger,
      batch: 20,
      pollMs: 1_000,
      // Each claimed row is the head of another subscription: they go out side by side.
      parallel: true,
      claim: (limit) => claimDeliveries(db, { now: clock.now(), leaseMs: o.leaseMs, limit }),
      handle: (row) => this.deliver(row),
    });
  }

  /** Called by the audit writer's hook inside the transaction: a kick follows the response (kickIfQueued). */
  noteQueued(): void {
    this.queued = true;
  }

  kickIfQueued(): void {
    if (!this.queued) return;
    this.queued = false;
    this.queue.kick();
  }

  kick(): void {
    this.queue.kick();
  }

  start(): void {
    this.queue.start();
  }

  stop(): Promise<void> {
    return this.queue.stop();
  }

  private async deliver(row: Delivery): Promise<void> {
    const hook = await hookForDelivery(this.db, row.webhookId);
    const record = await auditRecordOf(this.db, row.auditId);
    if (!hook) return; // deleted meanwhile: its deliveries went with it
    let secret: string;
    try {
      secret = openSecret(this.box, hook.id, hook.secretSealed);
    } catch {
      return this.settle(
        row,
        { ok: false, status: null, error: 'the signing secret cannot be opened (encryption key missing)' },
        true,
      );
    }
    if (!record) return this.settle(row, { ok: false, status: null, error: 'the audit record no longer exists' }, true);
    const body = JSON.stringify(auditPayload(hook.id, row.sequence, record));
    const result = await sendSigned({
      url: hook.url,
      secret,
      messageId: row.id,
      body,
      reach: this.o.reach,
    });
    await this.settle(row, result, false);
  }

  /** Delivered; or retried after a backoff; or, past the window (or never deliverable), dead-lettered. */
  private async settle(
    row: Delivery,
    r: { ok: boolean; status: number | null; error: string | null },
    hopeless: boolean,
  ): Promise<void> {
    const now = this.clock.now();
    const attempt = {
      lastAttemptAt: now,
      lastStatus: r.status,
      lastError: r.error?.slice(0, 300) ?? null,
      leasedUntil: null,
    };
    // Only the lease holder settles: a row whose lease ran out and was claimed again belongs to the new claim.
    if (r.ok) {
      await settleDelivery(this.db, row, { ...attempt, status: 'delivered', deliveredAt: now });
      this.metrics.webhookDeliveries.inc({ result: 'delivered' });
      return;
    }
    const next = new Date(now.getTime() + retryDelayMs(row.attempts));
    if (hopeless || next.getTime() > row.deadline.getTime()) {
      await settleDelivery(this.db, row, { ...attempt, status: 'failed', failedAt: now });
      this.logger.warn(
        {
          webhookId: row.webhookId,
          deliveryId: row.id,
          sequence: row.sequence,
          attempts: row.attempts,
          error: r.error,
        },
        'webhook delivery dead-lettered',
      );
      this.metrics.webhookDeliveries.inc({ result: 'dead_lettered' });
      return;
    }
    await settleDelivery(this.db, row, { ...attempt, notBefore: next });
    this.logger.info(
      { webhookId: row.webhookId, deliveryId: row.id, attempt: row.attempts, status: r.status, error: r.error },
      'webhook delivery failed; will retry',
    );
    this.metrics.webhookDeliveries.inc({ result: 'retry' });
  }
}

// The mechanics every durable queue in the database shares (the mail outbox, webhook deliveries): due rows are
// claimed for a lease with FOR UPDATE SKIP LOCKED, so several instances never take the same row and a crashed
// instance's rows come back once its lease runs out; a drain runs on kick() and on a poll; stop() waits briefly.
// The claim statement itself is SQL and lives in src/db/leased-queue-sql.ts (claimDue); this file keeps the mechanics.
import type { Logger } from 'pino';
import { classifyOutage, driverReason } from './outage-cause.js';
import { asSystem } from '../db/row-security.js';

/**
 * Exponential backoff: `baseMs`, doubled per attempt, capped at `capMs`. With `jitter` the delay is drawn from its
 * upper half (equal jitter), so receivers that failed together do not retry together.
 */
export function backoffMs(
  attempts: number,
  o: { baseMs: number; capMs: number; jitter?: boolean },
  random: () => number = Math.random,
): number {
  const full = Math.min(o.baseMs * 2 ** Math.max(0, attempts - 1), o.capMs);
  return o.jitter ? Math.round(full / 2 + random() * (full / 2)) : full;
}

export interface LeasedQueueOptions<R> {
  /** For log lines: "mail outbox". */
  name: string;
  logger: Logger;
  /** Rows claimed per query. */
  batch: number;
  /** Due rows are looked for this often even when nobody kicked (a retry, or another instance's crash). */
  pollMs: number;
  /** How long stop() waits for work in flight before it gives up on it (the lease makes another instance retry). */
  stopGraceMs?: number;
  /** Handle the rows of one batch side by side (they are independent), or one after the other. */
  parallel?: boolean;
  /** Claims up to `limit` due rows (claimDue, src/db/leased-queue-sql.ts). */
  claim(limit: number): Promise<R[]>;
  /** Does the work of one claimed row and settles it (deleted, rescheduled or given up). */
  handle(row: R): Promise<void>;
}

export class LeasedQueue<R> {
  private timer: NodeJS.Timeout | null = null;
  private draining: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  /** The store was unreachable at the last try: logged once until it answers again. */
  private storeDown = false;

  constructor(private readonly o: LeasedQueueOptions<R>) {}

  /** Works off what is due, soon; calls made while a drain runs coalesce into one more pass. */
  kick(): void {
    if (this.stopped) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    // Whoever kicked (a request, after its response), the drain serves no caller: the system context `process`.
    this.draining = asSystem('process', () => this.drain()).finally(() => {
      this.draining = null;
      if (this.again && !this.stopped) {
        this.again = false;
        this.kick();
      }
    });
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.timer = setInterval(() => this.kick(), this.o.pollMs);
    this.timer.unref();
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const inFlight = this.draining;
    if (inFlight)
      await Promise.race([inFlight, new Promise((r) => setTimeout(r, this.o.stopGraceMs ?? 2_000).unref())]);
  }

  /** Claims and handles batches until nothing is due (a handled row may make the next one due). */
  private async drain(): Promise<void> {
    try {
      for (;;) {
        if (this.stopped) return;
        const batch = await this.o.claim(this.o.batch);
        if (this.storeDown) this.o.logger.info(`${this.o.name}: the database answers again; working`);
        this.storeDown = false;
        if (batch.length === 0) return;
        if (this.o.parallel) await Promise.all(batch.map((row) => this.o.handle(row)));
        else
          for (const row of batch) {
            if (this.stopped) return;
            await this.o.handle(row);
          }
      }
    } catch (err) {
      // One line per outage with the driver's reason (never the statement's parameters, never a stack); anything
      // else is a bug and is logged by name and message, and the next poll tries again.
      const outage = classifyOutage(err);
      if (outage) {
        if (!this.storeDown)
          this.o.logger.error(
            { cause: outage.cause },
            `${this.o.name}: the database is unreachable; work waits until it answers`,
          );
        this.storeDown = true;
      } else {
        this.o.logger.error(
          { error: err instanceof Error ? err.name : typeof err, cause: driverReason(err) },
          `${this.o.name}: a pass failed; the next poll tries again`,
        );
      }
    }
  }
}

// Transactional outbox for mail: a message is stored in the transaction that calls for it and sent after commit.
// A crash (kill -9) between the commit and the SMTP server's acceptance loses nothing: the row stays, and any
// instance sends it once its lease has run out. Delivery is at least once; a mail is deleted once accepted.
import { and, asc, eq, inArray, isNull, lte, or, sql } from 'drizzle-orm';
import type { Logger } from 'pino';
import type { Db, Tx } from '../db/connect.js';
import { mailOutbox } from '../db/schema/index.js';
import type { Clock } from './clock.js';
import type { Mailer, MailMessage } from './mail.js';
import type { Metrics } from './metrics.js';
import type { SecretBox } from './secret-box.js';

const AAD = 'mail_outbox';
const BATCH = 10;
const MAX_ATTEMPTS = 8;
/** Due mail is looked for this often even when nobody kicked (a retry, or another instance's crash). */
const POLL_MS = 2_000;
/** How long stop() waits for a send in flight before it gives up on it (the lease makes another instance retry). */
const STOP_GRACE_MS = 2_000;

/** Backoff after a failed attempt: 5 s, 10 s, 20 s ... capped at one hour. */
export const retryDelayMs = (attempts: number) => Math.min(5_000 * 2 ** Math.max(0, attempts - 1), 3_600_000);

export class MailOutbox {
  private timer: NodeJS.Timeout | null = null;
  private draining: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  /** The store was unreachable at the last try: logged once until it answers again. */
  private storeDown = false;

  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly mailer: Mailer,
    private readonly logger: Logger,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
    private readonly leaseMs: number,
  ) {}

  /** Stores the message in the caller's transaction. Call kick() after the commit for a prompt send. */
  async enqueue(tx: Tx | Db, msg: MailMessage): Promise<void> {
    const now = this.clock.now();
    await tx.insert(mailOutbox).values({ template: msg.template, sealed: this.box.seal(JSON.stringify(msg), AAD), notBefore: now, createdAt: now });
  }

  /** Sends what is due, soon; calls made while a drain runs coalesce into one more pass. */
  kick(): void {
    if (this.stopped) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = this.drain().finally(() => {
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
    this.timer = setInterval(() => this.kick(), POLL_MS);
    this.timer.unref();
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const inFlight = this.draining;
    if (inFlight) await Promise.race([inFlight, new Promise((r) => setTimeout(r, STOP_GRACE_MS).unref())]);
  }

  private async drain(): Promise<void> {
    try {
      for (;;) {
        if (this.stopped) return;
        const batch = await this.claim();
        if (this.storeDown) this.logger.info('mail outbox: the database answers again; sending');
        this.storeDown = false;
        for (const row of batch) {
          if (this.stopped) return;
          await this.deliver(row);
        }
        if (batch.length < BATCH) return;
      }
    } catch (err) {
      if (!this.storeDown) this.logger.error({ err }, 'mail outbox: the database is unreachable; mail waits until it answers');
      this.storeDown = true;
    }
  }

  /** Takes up to BATCH due rows for this instance for one lease (rows another instance holds are skipped). */
  private async claim() {
    const now = this.clock.now();
    const due = this.db
      .select({ id: mailOutbox.id })
      .from(mailOutbox)
      .where(and(isNull(mailOutbox.failedAt), lte(mailOutbox.notBefore, now), or(isNull(mailOutbox.leasedUntil), lte(mailOutbox.leasedUntil, now))))
      .orderBy(asc(mailOutbox.notBefore))
      .limit(BATCH)
      .for('update', { skipLocked: true });
    return this.db
      .update(mailOutbox)
      .set({ leasedUntil: new Date(now.getTime() + this.leaseMs), attempts: sql`${mailOutbox.attempts} + 1` })
      .where(inArray(mailOutbox.id, due))
      .returning({ id: mailOutbox.id, template: mailOutbox.template, sealed: mailOutbox.sealed, attempts: mailOutbox.attempts });
  }

  private async deliver(row: { id: string; template: string; sealed: string; attempts: number }): Promise<void> {
    let msg: MailMessage;
    try {
      msg = JSON.parse(this.box.open(row.sealed, AAD)) as MailMessage;
    } catch (err) {
      // Sealed with a key that is no longer configured: it can never be sent.
      this.logger.error({ err, template: row.template, outboxId: row.id }, 'mail outbox: message cannot be opened; given up');
      await this.db.update(mailOutbox).set({ failedAt: this.clock.now(), leasedUntil: null, lastError: 'cannot open the sealed message' }).where(eq(mailOutbox.id, row.id));
      this.metrics.mails.inc({ result: 'failed', template: row.template });
      return;
    }
    try {
      await this.mailer.send(msg);
    } catch (err) {
      const last = row.attempts >= MAX_ATTEMPTS;
      const now = this.clock.now();
      const reason = err instanceof Error ? err.message.slice(0, 300) : 'send failed';
      this.logger.error({ err, template: row.template, outboxId: row.id, attempt: row.attempts }, last ? 'mail delivery failed; given up' : 'mail delivery failed; will retry');
      await this.db
        .update(mailOutbox)
        .set(last ? { failedAt: now, leasedUntil: null, lastError: reason } : { notBefore: new Date(now.getTime() + retryDelayMs(row.attempts)), leasedUntil: null, lastError: reason })
        .where(eq(mailOutbox.id, row.id));
      this.metrics.mails.inc({ result: last ? 'failed' : 'retry', template: row.template });
      return;
    }
    await this.db.delete(mailOutbox).where(eq(mailOutbox.id, row.id));
    this.metrics.mails.inc({ result: 'sent', template: row.template });
  }
}

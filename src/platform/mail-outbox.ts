// Transactional outbox for mail: a message is stored in the transaction that calls for it and sent after commit.
// A crash (kill -9) between the commit and the SMTP server's acceptance loses nothing: the row stays, and any
// instance sends it once its lease has run out. Delivery is at least once; a mail is deleted once accepted.
// The claim, lease, poll and kick mechanics are the shared leased queue (src/platform/leased-queue.ts); the statements
// are src/db/mail-outbox.ts.
import type { Logger } from 'pino';
import type { Db, Tx } from '../db/connect.js';
import {
  claimDueMails,
  deleteMail,
  giveUpMail,
  insertOutboxMail,
  type MailOutboxRow,
  rescheduleMail,
} from '../db/mail-outbox.js';
import { openAs, sealAs } from '../db/sealed-catalogue.js';
import type { Clock } from './clock.js';
import { backoffMs, LeasedQueue } from './leased-queue.js';
import type { Mailer, MailMessage } from './mail.js';
import type { Metrics } from './metrics.js';
import type { SecretBox } from './secret-box.js';

const MAX_ATTEMPTS = 8;

/** Backoff after a failed attempt: 5 s, 10 s, 20 s ... capped at one hour. */
export const retryDelayMs = (attempts: number) => backoffMs(attempts, { baseMs: 5_000, capMs: 3_600_000 });

type Row = MailOutboxRow;

export class MailOutbox {
  private readonly queue: LeasedQueue<Row>;

  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly mailer: Mailer,
    private readonly logger: Logger,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
    leaseMs: number,
  ) {
    this.queue = new LeasedQueue<Row>({
      name: 'mail outbox',
      logger,
      batch: 10,
      pollMs: 2_000,
      claim: (limit) => claimDueMails(db, clock.now(), leaseMs, limit),
      handle: (row) => this.deliver(row),
    });
  }

  /** Stores the message in the caller's transaction. Call kick() after the commit for a prompt send. */
  async enqueue(tx: Tx | Db, msg: MailMessage): Promise<void> {
    const now = this.clock.now();
    await insertOutboxMail(tx, {
      template: msg.template,
      sealed: sealAs(this.box, 'queuedMail', JSON.stringify(msg)),
      now,
    });
  }

  /** Sends what is due, soon. */
  kick(): void {
    this.queue.kick();
  }

  start(): void {
    this.queue.start();
  }

  stop(): Promise<void> {
    return this.queue.stop();
  }

  private async deliver(row: Row): Promise<void> {
    let msg: MailMessage;
    try {
      msg = JSON.parse(openAs(this.box, 'queuedMail', row.sealed)) as MailMessage;
    } catch (err) {
      // Sealed with a key that is no longer configured: it can never be sent.
      this.logger.error(
        { err, template: row.template, outboxId: row.id },
        'mail outbox: message cannot be opened; given up',
      );
      await giveUpMail(this.db, row.id, this.clock.now(), 'cannot open the sealed message');
      this.metrics.mails.inc({ result: 'failed', template: row.template });
      return;
    }
    try {
      await this.mailer.send(msg);
    } catch (err) {
      const last = row.attempts >= MAX_ATTEMPTS;
      const now = this.clock.now();
      const reason = err instanceof Error ? err.message.slice(0, 300) : 'send failed';
      this.logger.error(
        { err, template: row.template, outboxId: row.id, attempt: row.attempts },
        last ? 'mail delivery failed; given up' : 'mail delivery failed; will retry',
      );
      if (last) await giveUpMail(this.db, row.id, now, reason);
      else await rescheduleMail(this.db, row.id, new Date(now.getTime() + retryDelayMs(row.attempts)), reason);
      this.metrics.mails.inc({ result: last ? 'failed' : 'retry', template: row.template });
      return;
    }
    await deleteMail(this.db, row.id);
    this.metrics.mails.inc({ result: 'sent', template: row.template });
  }
}

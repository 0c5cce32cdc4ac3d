// Expiry that people notice: both sides' admins are mailed 30, 7 and 1 days before a relationship ends and when it
// has ended, once each (noticed_days keeps the smallest notice sent for the current end). The same sweep records what
// the clock already decides: a relationship past its end is marked expired (relationship.expire), one set to extend
// moves on by 180 days (relationship.extend), and a request unanswered after 90 days lapses. Access never waits for
// the sweep: the decision compares the end with the clock on every request.
//
// Several instances: every row is claimed FOR UPDATE SKIP LOCKED in the transaction that changes it, so each notice
// goes out once. The sweep runs on a poll and on sweep() (tests).
import type { Logger } from 'pino';
import type { Db } from '../../db/connect.js';
import { adminsOfBothSides } from '../../access/repo.js';
import { currentEnd } from '../../access/relationships.js';
import type { Clock } from '../../platform/clock.js';
import type { MailOutbox } from '../../platform/mail-outbox.js';
import type { AuditWriter } from '../audit/index.js';
import { relationshipMails } from './mails.js';
import { claimDueRelationships, type RelationshipRow, updateRelationship } from './repo.js';
import { PeriodicJob } from '../../platform/periodic.js';

const DAY_MS = 86_400_000;
const BATCH = 100;
/** Days before the end at which both sides are told; 0: it has ended. */
export const NOTICE_DAYS = [30, 7, 1, 0] as const;

export interface RelationshipNoticesDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  audit: AuditWriter;
  outbox: MailOutbox;
  appUrl: string;
}

export interface NoticeSweepResult {
  noticed: number;
  expired: number;
  extended: number;
}

/** The smallest notice due for an end at `now` (days before it; 0 once it has passed), or null when none is. */
export function noticeDue(endsAt: Date, now: number): number | null {
  const left = endsAt.getTime() - now;
  const due = NOTICE_DAYS.filter((d) => left <= d * DAY_MS);
  return due.length ? due[due.length - 1]! : null;
}

export class RelationshipNotices {
  private readonly job: PeriodicJob<NoticeSweepResult>;

  constructor(
    private readonly d: RelationshipNoticesDeps,
    pollMs = 15 * 60_000,
  ) {
    this.job = new PeriodicJob(() => this.pass(), pollMs);
  }

  start(): void {
    this.job.start();
  }

  stop(): Promise<void> {
    return this.job.stop();
  }

  /** One pass; a call while a pass runs waits for it and runs another. */
  sweep(): Promise<NoticeSweepResult> {
    return this.job.run();
  }

  private async pass(): Promise<NoticeSweepResult> {
    const out: NoticeSweepResult = { noticed: 0, expired: 0, extended: 0 };
    try {
      for (;;) {
        const changed = await this.d.db.transaction(async (tx) => {
          const now = this.d.clock.now();
          const rows = await claimDueRelationships(tx, now, BATCH);
          let done = 0;
          for (const r of rows) if (await this.handle(tx, r, now, out)) done++;
          return { claimed: rows.length, done };
        });
        if (changed.done) this.d.outbox.kick();
        if (changed.claimed < BATCH || changed.done === 0) break;
      }
    } catch (err) {
      this.d.logger.error(
        { error: err instanceof Error ? err.message : String(err) },
        'relationship notices: a pass failed; the next poll tries again',
      );
      throw err;
    }
    return out;
  }

  /** One claimed relationship: lapse, extend, expire and notify as the clock says; false when nothing was due. */
  private async handle(tx: Db, r: RelationshipRow, now: Date, out: NoticeSweepResult): Promise<boolean> {
    const t = now.getTime();
    if (r.status === 'approval_pending') {
      await updateRelationship(tx, r.id, { status: 'expired', updatedAt: now });
      await this.record(tx, 'relationship.expire', r, { requestExpiresAt: r.requestExpiresAt?.toISOString() });
      out.expired++;
      return true;
    }
    if (!r.endsAt) return false;
    if (r.autoExtend) {
      if (r.endsAt.getTime() > t) return false;
      const endsAt = currentEnd(r.endsAt, true, t);
      await updateRelationship(tx, r.id, { endsAt, noticedDays: null, updatedAt: now });
      await this.record(tx, 'relationship.extend', r, { from: r.endsAt.toISOString(), to: endsAt.toISOString() });
      out.extended++;
      return true;
    }
    const due = noticeDue(r.endsAt, t);
    if (due === null || (r.noticedDays !== null && r.noticedDays <= due)) return false;
    await updateRelationship(tx, r.id, {
      noticedDays: due,
      ...(due === 0 ? { status: 'expired' as const } : {}),
      updatedAt: now,
    });
    if (due === 0) {
      await this.record(tx, 'relationship.expire', r, { endsAt: r.endsAt.toISOString() });
      out.expired++;
    }
    const side = await adminsOfBothSides(tx, r.partnerId, r.orgId);
    for (const email of side.emails)
      await this.d.outbox.enqueue(
        tx,
        relationshipMails.ending(email, {
          orgName: side.orgName,
          partnerName: side.partnerName,
          name: r.name,
          endsAt: r.endsAt.toISOString().slice(0, 10),
          days: due,
          url: `${this.d.appUrl}/relationships/${r.id}`,
        }),
      );
    out.noticed++;
    return true;
  }

  private async record(tx: Db, action: string, r: RelationshipRow, details: Record<string, unknown>) {
    await this.d.audit.record(
      tx,
      {
        action,
        actor: null,
        partnerId: r.partnerId,
        orgId: r.orgId,
        resourceType: 'relationship',
        resourceId: r.id,
        details: { name: r.name, ...details },
      },
      null,
    );
  }
}

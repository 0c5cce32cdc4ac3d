// The statements of the mail outbox (the mechanics, sealing and delivery are src/platform/mail-outbox.ts): the insert
// in the caller's transaction, the claim of due mails (the leased queue's claimDue), and how a mail is settled.
import { asc, eq, isNull } from 'drizzle-orm';
import type { Db, Tx } from './connect.js';
import { claimDue } from './leased-queue-sql.js';
import { mailOutbox } from './schema/index.js';

export type MailOutboxRow = typeof mailOutbox.$inferSelect;

/** Stores a sealed mail, due now, in the caller's transaction. */
export async function insertOutboxMail(tx: Tx | Db, v: { template: string; sealed: string; now: Date }): Promise<void> {
  await tx.insert(mailOutbox).values({ template: v.template, sealed: v.sealed, notBefore: v.now, createdAt: v.now });
}

/** Takes up to `limit` due mails not given up, oldest due first, for one lease. */
export function claimDueMails(db: Db, now: Date, leaseMs: number, limit: number): Promise<MailOutboxRow[]> {
  return claimDue(db, mailOutbox, {
    now,
    leaseMs,
    limit,
    where: isNull(mailOutbox.failedAt),
    orderBy: asc(mailOutbox.notBefore),
  });
}

/** Gives a mail up: it is kept, with the reason, and never tried again. */
export async function giveUpMail(db: Db, id: string, at: Date, lastError: string): Promise<void> {
  await db.update(mailOutbox).set({ failedAt: at, leasedUntil: null, lastError }).where(eq(mailOutbox.id, id));
}

/** Puts a mail back in the queue, due at `notBefore`. */
export async function rescheduleMail(db: Db, id: string, notBefore: Date, lastError: string): Promise<void> {
  await db.update(mailOutbox).set({ notBefore, leasedUntil: null, lastError }).where(eq(mailOutbox.id, id));
}

/** Deletes a mail the server has accepted. */
export async function deleteMail(db: Db, id: string): Promise<void> {
  await db.delete(mailOutbox).where(eq(mailOutbox.id, id));
}

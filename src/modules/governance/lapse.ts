// Standing access that goes unused lapses: a partner sets settings.security.standingAccessLapseDays
// (7..365; absent or null = never). A partner member's standing access (orgAccess all or selected) counts as used when
// the membership acts: sign-in, context switch and token refresh record partner_users.last_used_at
// (markMembershipUsed); a membership never used counts from its creation. Partner Admins are exempt: they approve
// just-in-time requests and would otherwise lapse themselves out of the partner.
//
// Warning: `lead` = 7 days, or half the period when that is shorter, before the lapse the member and the partner's
// Partner Admins are mailed once per idle period (lapse_warned_at; a use after it starts a new period).
// Lapse: at the end of the period, and never sooner than `lead` after the warning (so switching the setting on for
// long-idle members warns them first), orgAccess becomes `eligible`: `selected` keeps its orgIds, `all` becomes
// eligible for every organisation the partner has at that moment. Audited `access.lapse`.
//
// Several instances: every row is claimed FOR UPDATE SKIP LOCKED and re-checked by the UPDATE that changes it, so one
// instance warns or lapses a member, once. The sweep runs on a poll and on sweep() (tests, and after a settings change).
import type { Logger } from 'pino';
import type { Db } from '../../db/connect.js';
import type { Clock } from '../../platform/clock.js';
import type { MailOutbox } from '../../platform/mail-outbox.js';
import { classifyOutage, driverReason } from '../../platform/outage-cause.js';
import type { AuditWriter } from '../audit/index.js';
import { standingAccessLapseDaysOf } from '../../access/settings.js';
import { accessMails } from '../../access/mails.js';
import { lapseStandingAccess, markLapseWarnings, partnerAdminEmails, partnersWithLapse } from './repo.js';
import { PeriodicJob } from '../../platform/periodic.js';

const DAY_MS = 86_400_000;
const BATCH = 200;
/** Members listed by name in the admins' mail; the rest are counted. */
const LISTED = 50;

/** How long before the lapse the warning goes out: 7 days, or half the period when that is shorter. */
export const lapseWarningLeadMs = (days: number) => Math.min(7, days / 2) * DAY_MS;

const day = (d: Date) => d.toISOString().slice(0, 10);

export interface LapseSweepResult {
  warned: number;
  lapsed: number;
}

export interface StandingAccessLapseDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  audit: AuditWriter;
  outbox: MailOutbox;
  appUrl: string;
}

export class StandingAccessLapse {
  private storeDown = false;
  private readonly job: PeriodicJob<LapseSweepResult>;

  constructor(
    private readonly d: StandingAccessLapseDeps,
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

  /** One pass over every partner with the setting on; a call while a pass runs waits for it and runs another. */
  sweep(): Promise<LapseSweepResult> {
    return this.job.run();
  }

  private async pass(): Promise<LapseSweepResult> {
    const out: LapseSweepResult = { warned: 0, lapsed: 0 };
    try {
      const partners = await partnersWithLapse(this.d.db);
      for (const p of partners) {
        const days = standingAccessLapseDaysOf(p.settings);
        if (!days) continue;
        out.warned += await this.warn(p, days);
        out.lapsed += await this.lapse(p.id, days);
      }
      if (this.storeDown) this.d.logger.info('standing-access lapse: the database answers again');
      this.storeDown = false;
    } catch (err) {
      const outage = classifyOutage(err);
      if (outage) {
        if (!this.storeDown)
          this.d.logger.error(
            { cause: outage.cause },
            'standing-access lapse: the database is unreachable; the next poll tries again',
          );
        this.storeDown = true;
      } else {
        this.d.logger.error(
          { error: err instanceof Error ? err.name : typeof err, cause: driverReason(err) },
          'standing-access lapse: a pass failed; the next poll tries again',
        );
      }
      throw err;
    }
    return out;
  }

  /** Members whose standing access lapses within the lead and who were not yet warned this idle period: marked and mailed. */
  private async warn(p: { id: string; name: string }, days: number): Promise<number> {
    let total = 0;
    for (;;) {
      const now = this.d.clock.now();
      const lead = lapseWarningLeadMs(days);
      const idleBefore = new Date(now.getTime() - (days * DAY_MS - lead));
      const warned = await this.d.db.transaction(async (tx) => {
        const rows = await markLapseWarnings(tx, p.id, idleBefore, now, BATCH);
        if (rows.length === 0) return 0;
        const url = `${this.d.appUrl}/login`;
        const listed: { email: string; lapsesOn: string }[] = [];
        for (const r of rows) {
          const lapsesOn = day(
            new Date(Math.max(new Date(r.idle_since).getTime() + days * DAY_MS, now.getTime() + lead)),
          );
          if (listed.length < LISTED) listed.push({ email: r.email, lapsesOn });
          if (r.status === 'active')
            await this.d.outbox.enqueue(
              tx,
              accessMails.standingAccessLapsing(r.email, {
                memberName: r.name,
                partnerName: p.name,
                lapsesOn,
                days,
                url,
              }),
            );
        }
        for (const admin of await partnerAdminEmails(tx, p.id))
          await this.d.outbox.enqueue(
            tx,
            accessMails.standingAccessLapsingAdmins(admin, {
              partnerName: p.name,
              members: listed,
              more: rows.length - listed.length,
              days,
              url: `${this.d.appUrl}/users`,
            }),
          );
        return rows.length;
      });
      if (warned) this.d.outbox.kick();
      total += warned;
      if (warned < BATCH) return total;
    }
  }

  /** Members idle for the whole period and warned at least `lead` ago: standing access becomes eligible, audited. */
  private async lapse(partnerId: string, days: number): Promise<number> {
    let total = 0;
    for (;;) {
      const now = this.d.clock.now();
      const lead = lapseWarningLeadMs(days);
      const idleBefore = new Date(now.getTime() - days * DAY_MS);
      const warnedBefore = new Date(now.getTime() - lead);
      const lapsed = await this.d.db.transaction(async (tx) => {
        const rows = await lapseStandingAccess(tx, partnerId, idleBefore, warnedBefore, now, BATCH);
        for (const r of rows)
          await this.d.audit.record(
            tx,
            {
              action: 'access.lapse',
              actor: null,
              partnerId,
              orgId: null,
              resourceType: 'user',
              resourceId: r.user_id,
              details: {
                userId: r.user_id,
                from: r.was,
                to: 'eligible',
                orgIds: uuids(r.org_ids),
                previousOrgIds: uuids(r.was_org_ids),
                unusedSince: new Date(r.idle_since).toISOString(),
                lapseDays: days,
              },
            },
            null,
          );
        return rows.length;
      });
      total += lapsed;
      if (lapsed < BATCH) return total;
    }
  }
}

/** A uuid[] as the driver returns it: an array (node-postgres) or its text form (`{a,b}`). */
function uuids(v: string[] | string | null): string[] {
  if (Array.isArray(v)) return v;
  if (!v || v === '{}') return [];
  return v.replace(/^\{|\}$/g, '').split(',');
}

// Standing access that goes unused lapses (issue 18 §1): a partner sets settings.security.standingAccessLapseDays
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
import { sql } from 'drizzle-orm';
import type { Logger } from 'pino';
import type { Db, Executor } from '../../db/connect.js';
import type { Clock } from '../../platform/clock.js';
import type { MailOutbox } from '../../platform/mail-outbox.js';
import { classifyOutage, driverReason } from '../../platform/outage-cause.js';
import type { AuditWriter } from '../audit/index.js';
import { PARTNER_ADMIN_ROLE_ID } from '../../access/catalog.js';
import { standingAccessLapseDaysOf } from '../tenants/index.js';
import { accessMails } from './mail-templates.js';

const DAY_MS = 86_400_000;
const BATCH = 200;
/** Members listed by name in the admins' mail; the rest are counted. */
const LISTED = 50;

/** How long before the lapse the warning goes out: 7 days, or half the period when that is shorter. */
export const lapseWarningLeadMs = (days: number) => Math.min(7, days / 2) * DAY_MS;

type Rows<T> = { rows: T[] };
const rowsOf = <T>(res: unknown) => (res as Rows<T>).rows;
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
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<LapseSweepResult> | null = null;
  private storeDown = false;

  constructor(
    private readonly d: StandingAccessLapseDeps,
    private readonly pollMs = 15 * 60_000,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.sweep().catch(() => undefined), this.pollMs);
    this.timer.unref();
    void this.sweep().catch(() => undefined);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.running) await this.running.catch(() => undefined);
  }

  /** One pass over every partner with the setting on; a call while a pass runs waits for it and runs another. */
  async sweep(): Promise<LapseSweepResult> {
    while (this.running) await this.running.catch(() => undefined);
    this.running = this.pass().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async pass(): Promise<LapseSweepResult> {
    const out: LapseSweepResult = { warned: 0, lapsed: 0 };
    try {
      const partners = rowsOf<{ id: string; name: string; settings: unknown }>(
        await this.d.db.execute(
          sql`select id, name, settings from partners where settings->'security'->'standingAccessLapseDays' is not null and jsonb_typeof(settings->'security'->'standingAccessLapseDays') = 'number'`,
        ),
      );
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
        const rows = rowsOf<{
          user_id: string;
          email: string;
          name: string;
          status: string;
          idle_since: Date | string;
        }>(
          await tx.execute(sql`
            with due as (
              select pu.id from partner_users pu
              where pu.partner_id = ${p.id} and pu.org_access in ('all', 'selected') and pu.role_id <> ${PARTNER_ADMIN_ROLE_ID}
                and coalesce(pu.last_used_at, pu.created_at) <= ${idleBefore}
                and (pu.lapse_warned_at is null or pu.lapse_warned_at < coalesce(pu.last_used_at, pu.created_at))
              order by pu.id limit ${BATCH} for update skip locked)
            update partner_users pu set lapse_warned_at = ${now}
              from due, users u
              where pu.id = due.id and u.id = pu.user_id
              returning pu.user_id, u.email, u.name, u.status, coalesce(pu.last_used_at, pu.created_at) as idle_since`),
        );
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
        const rows = rowsOf<{
          id: string;
          user_id: string;
          was: 'all' | 'selected';
          was_org_ids: string[] | string;
          org_ids: string[] | string;
          idle_since: Date | string;
        }>(
          await tx.execute(sql`
            with due as (
              select pu.id, pu.org_access, pu.org_ids from partner_users pu
              where pu.partner_id = ${partnerId} and pu.org_access in ('all', 'selected') and pu.role_id <> ${PARTNER_ADMIN_ROLE_ID}
                and coalesce(pu.last_used_at, pu.created_at) <= ${idleBefore}
                and pu.lapse_warned_at >= coalesce(pu.last_used_at, pu.created_at) and pu.lapse_warned_at <= ${warnedBefore}
              order by pu.id limit ${BATCH} for update skip locked)
            update partner_users pu set org_access = 'eligible', updated_at = ${now},
                org_ids = case when due.org_access = 'all'
                  then coalesce((select array_agg(o.id order by o.id) from organizations o where o.partner_id = pu.partner_id), '{}'::uuid[])
                  else pu.org_ids end
              from due
              where pu.id = due.id
              returning pu.id, pu.user_id, due.org_access as was, due.org_ids as was_org_ids, pu.org_ids, coalesce(pu.last_used_at, pu.created_at) as idle_since`),
        );
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

async function partnerAdminEmails(tx: Executor, partnerId: string): Promise<string[]> {
  const res = await tx.execute(sql`select u.email from partner_users pu join users u on u.id = pu.user_id
    where pu.partner_id = ${partnerId} and pu.role_id = ${PARTNER_ADMIN_ROLE_ID} and u.status = 'active' order by 1 limit 500`);
  return rowsOf<{ email: string }>(res).map((r) => r.email);
}

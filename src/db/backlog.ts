// Totals for the operator's gauges (src/platform/metrics.ts): live sessions, the mail outbox, audit webhook deliveries.
// Counted over every tenant in the system context `metrics`; only the numbers leave the database, no tenant's rows.
import { sql } from 'drizzle-orm';
import type { BacklogStats } from '../platform/metrics.js';
import type { Executor } from './connect.js';
import { asSystem } from './row-security.js';

export function readBacklog(db: Executor): Promise<BacklogStats> {
  return asSystem('metrics', async () => {
    const r = (await db.execute(sql`
      select
        (select count(*) from sessions
          where revoked_at is null and expires_at > now() and absolute_expires_at > now())::int as sessions,
        (select count(*) from mail_outbox where failed_at is null)::int as outbox,
        (select count(*) from webhook_deliveries where status = 'pending')::int as webhooks,
        coalesce((select extract(epoch from now() - min(created_at)) from webhook_deliveries
          where status = 'pending'), 0)::float8 as lag`)) as unknown as
      | { rows: Record<string, unknown>[] }
      | Record<string, unknown>[];
    const row = (Array.isArray(r) ? r : r.rows)[0] ?? {};
    return {
      activeSessions: Number(row.sessions ?? 0),
      outboxBacklog: Number(row.outbox ?? 0),
      webhookBacklog: Number(row.webhooks ?? 0),
      webhookLagSeconds: Math.max(0, Number(row.lag ?? 0)),
    };
  });
}

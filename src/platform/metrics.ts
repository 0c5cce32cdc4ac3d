// Prometheus metrics: one registry per service container (tests build many in one process).
// Security events are counted from the audit records as they are written: one place sees every sign-in, MFA
// verification, SSO login, lockout and refresh reuse, whichever module produced it.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { SharedStore } from './kv.js';

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

export interface BacklogStats {
  /** Sessions neither revoked nor expired. */
  activeSessions: number;
  /** Mails waiting in the outbox (not given up). */
  outboxBacklog: number;
  /** Audit webhook deliveries waiting, and the age in seconds of the oldest (0 when none waits). */
  webhookBacklog: number;
  webhookLagSeconds: number;
}

export interface Metrics {
  registry: Registry;
  requests: Counter<'method' | 'route' | 'status'>;
  /** Error answers by catalogue code (the reason) and status. */
  errors: Counter<'code' | 'status'>;
  duration: Histogram<'method' | 'route'>;
  signIns: Counter<'result' | 'method'>;
  mfaVerifications: Counter<'result' | 'method'>;
  ssoLogins: Counter<'result'>;
  lockouts: Counter<'reason'>;
  refreshReuse: Counter;
  rateLimited: Counter<'limit'>;
  auditWrites: Counter<'result'>;
  mails: Counter<'result' | 'template'>;
  webhookDeliveries: Counter<'result'>;
  storeLatency: Histogram<'op' | 'store'>;
  /** Feeds the database pool gauges at scrape time (PostgreSQL; PGlite has no pool). */
  watchPool(stats: () => PoolStats | null): void;
  /** Feeds the backlog gauges at scrape time: totals over every tenant, never per tenant. */
  watchBacklog(read: () => Promise<BacklogStats>): void;
  /** Counts what an audit record says happened. */
  observeAudit(record: { action: string; result: string; details: unknown }): void;
}

const METHODS = new Set(['password', 'sso', 'passkey', 'totp', 'sms', 'recovery_code', 'registration', 'setup']);
const method = (v: unknown) => (typeof v === 'string' && METHODS.has(v) ? v : 'other');

export function createMetrics(): Metrics {
  const registry = new Registry();
  // Includes nodejs_eventloop_lag_seconds and the lag percentiles (nodejs_eventloop_lag_p99_seconds, ...).
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });
  const registers = [registry];
  let poolStats: () => PoolStats | null = () => null;
  new Gauge({
    name: 'gatehouse_db_pool_connections',
    help: 'PostgreSQL pool connections by state (in_use, idle, waiting = callers queued for a connection)',
    labelNames: ['state'],
    registers,
    collect() {
      const s = poolStats();
      if (!s) return;
      this.set({ state: 'in_use' }, s.total - s.idle);
      this.set({ state: 'idle' }, s.idle);
      this.set({ state: 'waiting' }, s.waiting);
    },
  });
  let backlog: (() => Promise<BacklogStats>) | null = null;
  // One read per scrape, shared by the four gauges.
  let pending: Promise<BacklogStats | null> | null = null;
  const readBacklog = () => {
    pending ??= (backlog?.() ?? Promise.resolve(null))
      .catch(() => null)
      .finally(() => {
        setTimeout(() => {
          pending = null;
        }, 0);
      });
    return pending;
  };
  const backlogGauge = (name: string, help: string, pick: (s: BacklogStats) => number) =>
    new Gauge({
      name,
      help,
      registers,
      async collect() {
        const s = await readBacklog();
        if (s) this.set(pick(s));
      },
    });
  backlogGauge(
    'gatehouse_sessions_active',
    'Sessions neither revoked nor expired, over every tenant',
    (s) => s.activeSessions,
  );
  backlogGauge('gatehouse_mail_outbox_backlog', 'Mails waiting in the outbox (not given up)', (s) => s.outboxBacklog);
  backlogGauge('gatehouse_webhook_backlog', 'Audit webhook deliveries waiting to be sent', (s) => s.webhookBacklog);
  backlogGauge(
    'gatehouse_webhook_lag_seconds',
    'Age of the oldest audit webhook delivery still waiting (0 when none waits)',
    (s) => s.webhookLagSeconds,
  );
  const m: Metrics = {
    registry,
    errors: new Counter({
      name: 'gatehouse_http_errors_total',
      help: 'Error answers by catalogue code (the reason, e.g. invalid_credentials, permission_denied) and status',
      labelNames: ['code', 'status'],
      registers,
    }),
    requests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by route and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    }),
    duration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by route',
      labelNames: ['method', 'route'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    signIns: new Counter({
      name: 'gatehouse_sign_ins_total',
      help: 'Sign-ins by result (success, failure) and first-factor method',
      labelNames: ['result', 'method'],
      registers,
    }),
    mfaVerifications: new Counter({
      name: 'gatehouse_mfa_verifications_total',
      help: 'Second-factor verifications at sign-in by result and method',
      labelNames: ['result', 'method'],
      registers,
    }),
    ssoLogins: new Counter({
      name: 'gatehouse_sso_logins_total',
      help: 'Single sign-on logins by result',
      labelNames: ['result'],
      registers,
    }),
    lockouts: new Counter({
      name: 'gatehouse_lockouts_total',
      help: 'Sign-ins held for an account under attack, by reason (distributed_guess: wrong passwords from many addresses)',
      labelNames: ['reason'],
      registers,
    }),
    refreshReuse: new Counter({
      name: 'gatehouse_refresh_reuse_detected_total',
      help: 'Rotated refresh tokens presented again (the session is revoked)',
      registers,
    }),
    rateLimited: new Counter({
      name: 'gatehouse_rate_limit_refusals_total',
      help: 'Requests refused by a rate limit, by limit',
      labelNames: ['limit'],
      registers,
    }),
    mails: new Counter({
      name: 'gatehouse_mails_total',
      help: 'Mail delivery attempts from the outbox by result (sent, retry, failed) and template',
      labelNames: ['result', 'template'],
      registers,
    }),
    webhookDeliveries: new Counter({
      name: 'gatehouse_webhook_deliveries_total',
      help: 'Audit webhook delivery attempts by result (delivered, retry, dead_lettered)',
      labelNames: ['result'],
      registers,
    }),
    auditWrites: new Counter({
      name: 'gatehouse_audit_chain_writes_total',
      help: 'Audit records appended to a hash chain, by result',
      labelNames: ['result'],
      registers,
    }),
    storeLatency: new Histogram({
      name: 'gatehouse_store_operation_seconds',
      help: 'Shared store (Redis or database) operation latency',
      labelNames: ['op', 'store'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    }),
    watchPool: (stats) => void (poolStats = stats),
    watchBacklog: (read) => void (backlog = read),
    observeAudit({ action, result, details }) {
      m.auditWrites.inc({ result });
      const d = (details ?? {}) as { method?: unknown; step?: unknown; reason?: unknown; mfa?: unknown };
      if (action === 'user.login') {
        const [first, second] = String(d.method ?? '').split('+');
        m.signIns.inc({ result: 'success', method: method(first) });
        if (second) m.mfaVerifications.inc({ result: 'success', method: method(second) });
        if (first === 'sso') m.ssoLogins.inc({ result: 'success' });
      } else if (action === 'auth.login.failed') {
        if (d.step === 'second_factor') m.mfaVerifications.inc({ result: 'failure', method: method(d.method) });
        else m.signIns.inc({ result: 'failure', method: method(d.method ?? 'password') });
        if (d.method === 'sso') m.ssoLogins.inc({ result: 'failure' });
      } else if (action === 'auth.mfa.setup.failed') {
        m.mfaVerifications.inc({ result: 'failure', method: method(d.method) });
      } else if (action === 'auth.login.guessing_detected') {
        m.lockouts.inc({ reason: String(d.reason) });
      } else if (action === 'auth.refresh.reuse_detected') {
        m.refreshReuse.inc();
      }
    },
  };
  return m;
}

/** The shared store with each operation's latency observed. */
export function timedStore<S extends SharedStore>(store: S, metrics: Metrics): SharedStore {
  const time = async <T>(op: string, work: () => Promise<T>): Promise<T> => {
    const end = metrics.storeLatency.startTimer({ op, store: store.kind });
    try {
      return await work();
    } finally {
      end();
    }
  };
  return {
    kind: store.kind,
    hit: (...a) => time('hit', () => store.hit(...a)),
    count: (...a) => time('count', () => store.count(...a)),
    reset: (...a) => time('reset', () => store.reset(...a)),
    claim: (...a) => time('claim', () => store.claim(...a)),
    ping: () => time('ping', () => store.ping()),
    close: () => store.close(),
  };
}

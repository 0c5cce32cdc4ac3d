// A database or shared-store outage, recognised in one place: every route answers 503 service_unavailable with
// Retry-After while it lasts, and the log says so once when it starts (with the cause) and once when it ends.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';

export type Dependency = 'database' | 'store';

/** Seconds a client should wait before trying again; also how often the monitor probes for recovery. */
export const OUTAGE_RETRY_AFTER_SECONDS = 2;

/** Socket-level failures: the server is not there (refused, reset, unreachable, timed out). */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ECONNABORTED']);
/**
 * PostgreSQL SQLSTATEs that mean "the server cannot serve now", not "this statement is wrong": class 08
 * (connection exception), 57P01-57P03 (shutting down, crashed, starting up), 53300 (too many connections).
 */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[123]|53300)$/;
/** node-postgres and ioredis say it in words only. */
const UNAVAILABLE_MESSAGE =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Connection is closed|Reached the max retries per request|Stream isn't writeable|the database system is (starting up|shutting down|in recovery mode)/i;

interface Outage {
  dependency: Dependency;
  cause: string;
}

function chain(err: unknown): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) out.push(e as Record<string, unknown>);
  return out;
}

/** The outage an error reveals, or null when it is any other error (a bug stays a 500). */
export function classifyOutage(err: unknown): Outage | null {
  const links = chain(err);
  const hit = links.find((e) => {
    const code = typeof e.code === 'string' ? e.code : '';
    return NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code) || e.name === 'MaxRetriesPerRequestError' || (typeof e.message === 'string' && UNAVAILABLE_MESSAGE.test(e.message));
  });
  if (!hit) return null;
  const redis = links.some((e) => e.name === 'MaxRetriesPerRequestError' || 'command' in e || /redis|Connection is closed|Stream isn't writeable|max retries per request/i.test(String(e.message ?? '')));
  // The driver's reason only: a DrizzleQueryError's own message carries the statement's parameters.
  return { dependency: redis ? 'store' : 'database', cause: `${typeof hit.code === 'string' ? `${hit.code}: ` : ''}${String(hit.message ?? hit.name ?? 'unavailable')}`.slice(0, 300) };
}

/**
 * Outage state per dependency. The first failure logs one error line with the cause and starts a probe every
 * OUTAGE_RETRY_AFTER_SECONDS; the first successful probe logs one line with the duration and how many requests were
 * answered 503. Requests meanwhile log nothing more than their access line.
 */
export class OutageMonitor {
  private readonly down = new Map<Dependency, { since: number; refused: number; timer: NodeJS.Timeout }>();

  constructor(
    private readonly logger: FastifyBaseLogger,
    private readonly probes: Record<Dependency, () => Promise<void>>,
    private readonly now: () => number = Date.now,
  ) {}

  report(outage: Outage): void {
    const current = this.down.get(outage.dependency);
    if (current) {
      current.refused++;
      return;
    }
    this.logger.error({ dependency: outage.dependency, cause: outage.cause }, `${outage.dependency} unavailable: answering 503 service_unavailable until it is back`);
    const timer = setInterval(() => void this.probe(outage.dependency), OUTAGE_RETRY_AFTER_SECONDS * 1000);
    timer.unref();
    this.down.set(outage.dependency, { since: this.now(), refused: 1, timer });
  }

  isDown(dependency: Dependency): boolean {
    return this.down.has(dependency);
  }

  private async probe(dependency: Dependency): Promise<void> {
    const state = this.down.get(dependency);
    if (!state) return;
    try {
      await this.probes[dependency]();
    } catch {
      return; // still down: said once already
    }
    if (this.down.get(dependency) !== state) return;
    clearInterval(state.timer);
    this.down.delete(dependency);
    this.logger.warn({ dependency, downForMs: this.now() - state.since, refused: state.refused }, `${dependency} is back: serving again`);
  }

  stop(): void {
    for (const s of this.down.values()) clearInterval(s.timer);
    this.down.clear();
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    outages: OutageMonitor;
  }
}

/** Install before the routes; the error handler (src/http/error-handler.ts) reports to it. */
export function installOutageMonitor(app: FastifyInstance, probes: Record<Dependency, () => Promise<void>>): void {
  const monitor = new OutageMonitor(app.log, probes);
  app.decorate('outages', monitor);
  app.addHook('onClose', async () => monitor.stop());
}

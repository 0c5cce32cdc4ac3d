// A database or shared-store outage, recognised in one place: every route answers 503 service_unavailable with
// Retry-After while it lasts, and the log says so once when it starts (with the cause) and once when it ends.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';

import { classifyOutage, type Dependency, type Outage } from '../platform/outage-cause.js';

export { classifyOutage, type Dependency };

/** Seconds a client should wait before trying again; also how often the monitor probes for recovery. */
export const OUTAGE_RETRY_AFTER_SECONDS = 2;

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
    this.logger.error(
      { dependency: outage.dependency, cause: outage.cause },
      `${outage.dependency} unavailable: answering 503 service_unavailable until it is back`,
    );
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
    this.logger.warn(
      { dependency, downForMs: this.now() - state.since, refused: state.refused },
      `${dependency} is back: serving again`,
    );
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

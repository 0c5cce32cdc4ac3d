// Operational endpoints outside /api/v1: liveness, readiness, Prometheus metrics.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { errorEnvelope } from '../../http/schemas.js';
import type { Metrics } from '../../platform/metrics.js';
import { classifyOutage } from '../../http/outage.js';

export function opsRoutes(deps: Deps, metrics: Metrics) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    r.get('/healthz', { schema: { tags: ['operations'], response: { 200: z.object({ status: z.literal('ok') }) } } }, async () => ({ status: 'ok' as const }));

    r.get(
      '/readyz',
      { schema: { tags: ['operations'], response: { 200: z.object({ status: z.literal('ready'), database: z.string(), store: z.string() }), 503: errorEnvelope } } },
      async () => {
        try {
          await deps.database.ping();
          await deps.store.ping();
        } catch (err) {
          // An outage is logged once by the monitor (src/http/outage.ts), not on every probe of the orchestrator.
          const outage = classifyOutage(err);
          if (outage) app.outages?.report(outage);
          else app.log.warn({ err }, 'readiness check failed');
          throw new AppError('service_unavailable');
        }
        return { status: 'ready' as const, database: deps.database.kind, store: deps.store.kind };
      },
    );

    r.get('/metrics', { schema: { tags: ['operations'], response: { 200: z.string().describe('Prometheus text exposition') } } }, async (_req, reply) => {
      reply.header('content-type', metrics.registry.contentType);
      return metrics.registry.metrics();
    });
  };
}

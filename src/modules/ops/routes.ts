// Operational endpoints outside /api/v1: liveness, readiness, Prometheus metrics.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { errorEnvelope } from '../../http/schemas.js';
import type { Metrics } from '../../platform/metrics.js';
import { classifyOutage } from '../../http/outage.js';
import { bearerToken } from '../../http/authenticate.js';

/** Compares in constant time (the token is a secret). */
function sameSecret(given: string | null, expected: string): boolean {
  const a = createHash('sha256')
    .update(given ?? '')
    .digest();
  const b = createHash('sha256').update(expected).digest();
  return given !== null && timingSafeEqual(a, b);
}

export function opsRoutes(deps: Deps, metrics: Metrics) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const tags = ['operations'];
    r.get(
      '/healthz',
      {
        schema: {
          tags,
          operationId: 'getHealth',
          summary: 'Liveness probe',
          description: 'Answers while the process runs; touches neither the database nor the store.',
          security: [],
          response: { 200: z.object({ status: z.literal('ok') }) },
        },
      },
      async () => ({ status: 'ok' as const }),
    );

    r.get(
      '/readyz',
      {
        schema: {
          tags,
          operationId: 'getReadiness',
          summary: 'Readiness probe',
          description:
            'Ready when the database and the shared store (Redis or the database) answer; else 503 `service_unavailable`. `devMode` says whether development mode is on (single sign-on and webhooks may reach loopback).',
          security: [],
          response: {
            200: z.object({
              status: z.literal('ready'),
              database: z.enum(['pglite', 'postgres']).describe('The database kind'),
              store: z.string().describe('The shared store: redis or the database'),
              devMode: z
                .boolean()
                .describe('Development mode: SSO and webhooks may reach loopback; never true in production'),
            }),
            503: errorEnvelope,
          },
        },
      },
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
        return {
          status: 'ready' as const,
          database: deps.database.kind,
          store: deps.store.kind,
          devMode: deps.config.devMode,
        };
      },
    );

    const metricsText = {
      description: 'Prometheus text exposition format 0.0.4.',
      content: {
        'text/plain': {
          schema: z
            .string()
            .meta({ examples: ['# HELP http_requests_total Requests\n# TYPE http_requests_total counter\n'] }),
        },
      },
    };
    r.get(
      '/metrics',
      {
        schema: {
          tags,
          operationId: 'getMetrics',
          summary: 'Prometheus metrics',
          description:
            'For the scraper. With METRICS_TOKEN set, only a request carrying it as a bearer token is answered (else 401 `unauthenticated`); without it, public like the probes, so bind it to a private network or filter it at the proxy. Counts are totals over every tenant, never per tenant.',
          security: [{ metricsToken: [] }, {}],
          produces: ['text/plain'],
          response: { 200: metricsText, 401: errorEnvelope },
        },
      },
      async (req, reply) => {
        if (deps.config.metricsToken && !sameSecret(bearerToken(req), deps.config.metricsToken))
          throw new AppError('unauthenticated');
        reply.header('content-type', metrics.registry.contentType);
        return metrics.registry.metrics();
      },
    );
  };
}

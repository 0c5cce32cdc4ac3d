// Builds the HTTP app: plugins, error handling, one line per module mounted.
import { randomUUID } from 'node:crypto';
import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject, validatorCompiler } from 'fastify-type-provider-zod';
import type { Deps } from './deps.js';
import { installAfterAnswer } from './http/after-answer.js';
import { installErrorHandling, onFrameworkError } from './http/error-handler.js';
import { installOutageMonitor } from './http/outage.js';
import { installRowContext } from './http/row-context.js';
import { serializerCompiler } from './http/serializer.js';
import { installJsonDepthLimit, onClientError, refuseLongUrl } from './http/input-limits.js';
import { refuseNulBytes, refuseUnexpectedBody } from './http/input-guards.js';
import { finishDocument, installOpenApiRules } from './http/openapi.js';
import { assertStepUpRoutes, carriesStepUp } from './http/step-up.js';
import { installScope } from './http/context.js';
import { auditRoutes } from './modules/audit/routes.js';
import { installDeniedAudit } from './modules/audit/denied.js';
import { authAccountRoutes } from './modules/auth/routes.js';
import { invitationRoutes } from './modules/invitations/routes.js';
import { authPublicRoutes } from './modules/auth/routes-public.js';
import { authSecurityRoutes } from './modules/auth/routes-security.js';
import { mfaRoutes } from './modules/mfa/routes.js';
import { passkeyRoutes } from './modules/passkeys/routes.js';
import { ssoRoutes } from './modules/sso/routes.js';
import { tenantRoutes } from './modules/tenants/routes.js';
import { installByIdScope } from './modules/tenants/by-id.js';
import { deviceRoutes } from './modules/devices/routes.js';
import { contactRoutes } from './modules/contacts/routes.js';
import { customFieldRoutes } from './modules/custom-fields/routes.js';
import { scriptRoutes } from './modules/scripts/routes.js';
import { domainRoutes } from './modules/domains/routes.js';
import { relationshipRoutes } from './modules/relationships/routes.js';
import { accessGroupRoutes } from './modules/access-groups/routes.js';
import { governorRoutes, installGovernorAudit } from './modules/governor/index.js';
import { configItemRoutes } from './modules/config-items/routes.js';
import { opsRoutes } from './modules/ops/routes.js';
import { roleRoutes } from './modules/roles/routes.js';
import { userAccountRoutes } from './modules/users/routes.js';
import { userAdminRoutes } from './modules/users/routes-admin.js';
import { userSessionRoutes } from './modules/users/routes-sessions.js';
import { RequestLogger, scrubUrl } from './platform/logger.js';
import type { Logger } from 'pino';
import { setupRoutes } from './modules/setup/routes.js';
import { consoleRoutes } from './modules/console/routes.js';
import { oauthRoutes } from './modules/service-accounts/routes-oauth.js';
import { serviceAccountRoutes } from './modules/service-accounts/routes.js';
import { webhookRoutes } from './modules/webhooks/routes.js';
import { accessRoutes } from './modules/governance/routes.js';
import { authzenRoutes } from './modules/governance/authzen-routes.js';
import { installBreakGlassAlerts } from './modules/governance/break-glass.js';
import { scimRoutes, SCIM_PREFIX } from './modules/scim/routes.js';
import { scimTokenRoutes } from './modules/scim/token-routes.js';

export const API_PREFIX = '/api/v1';

declare module 'fastify' {
  interface FastifyInstance {
    registeredRoutes: { method: string; url: string; stepUp?: boolean }[];
  }
}
const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
/** A console file served as it is (not a page, not the API): logged at debug. */
const isStaticAsset = (method: string, route: string, url: string, status: number) =>
  (method === 'GET' || method === 'HEAD') &&
  status < 400 &&
  (route === '/assets/*' || (route === '/*' && /\.[a-z0-9]{1,8}$/i.test(url.split('?')[0]!)));
/** Probes and scrapes: polled every few seconds, never logged. */
const QUIET_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

export async function createApp(deps: Deps): Promise<FastifyInstance> {
  const { config } = deps;
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    trustProxy: config.trustProxy,
    bodyLimit: config.bodyLimit,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    forceCloseConnections: 'idle',
    frameworkErrors: onFrameworkError,
    clientErrorHandler: onClientError,
    // One line per request, written in onResponse below (Fastify's own are two, probes included).
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: (logger, bindings, options) => new RequestLogger(logger as Logger, bindings, options),
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.decorateRequest('auth', null);
  app.decorateRequest('errorCode', null);
  // Row-level security: each request's statements run as its caller's Scope or a named public flow (first hook).
  installRowContext(app);
  installScope(app);
  app.removeContentTypeParser('text/plain');
  installErrorHandling(app);
  installOutageMonitor(app, { database: () => deps.database.ping(), store: () => deps.store.ping() });
  installJsonDepthLimit(app);
  // Liveness rows cached per session, dropped by the database's change channel (src/access/liveness-cache.ts).
  app.addHook('onReady', async () => deps.authContext.liveness?.start(deps.db));
  app.addHook('onClose', async () => deps.authContext.liveness?.stop());
  // Mail waiting in the outbox (also what a crashed instance left) is sent while the app runs.
  app.addHook('onReady', async () => deps.outbox.start());
  app.addHook('onClose', async () => deps.outbox.stop());
  // Unused standing access lapses: swept on every instance, each member claimed by one.
  app.addHook('onReady', async () => deps.lapse.start());
  app.addHook('onClose', async () => deps.lapse.stop());
  // Relationship expiry notices: swept on every instance, each relationship claimed by one.
  app.addHook('onReady', async () => deps.relationshipNotices.start());
  app.addHook('onClose', async () => deps.relationshipNotices.stop());
  // Audit webhook deliveries likewise; a request whose audit records queued some kicks the worker once it answered.
  app.addHook('onReady', async () => deps.webhooks.start());
  app.addHook('onClose', async () => deps.webhooks.stop());
  app.addHook('onResponse', (_req, _reply, done) => {
    deps.webhooks.kickIfQueued();
    done();
  });
  // What a sign-in leaves for after its answer (the new-device mail, closing a single-use link): only on a 2xx.
  installAfterAnswer(app);
  app.addHook('onRequest', refuseLongUrl);
  app.addHook('preValidation', refuseNulBytes);
  app.addHook('preValidation', refuseUnexpectedBody);

  installOpenApiRules(app);
  // Every route as registered, for the OpenAPI completeness test and the fuzz test.
  const registered: { method: string; url: string; stepUp?: boolean }[] = [];
  app.decorate('registeredRoutes', registered);
  app.addHook('onRoute', (r) => {
    const stepUp = carriesStepUp(r.onRequest) || carriesStepUp(r.preHandler);
    for (const method of [r.method].flat()) if (method !== 'HEAD') registered.push({ method, url: r.url, stepUp });
  });

  const { metrics } = deps;
  // Callback hooks, not async ones: every request runs them, and a promise each costs on the hot path.
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });
  app.addHook('onSend', (req, reply, _payload, done) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    if (req.url.startsWith(API_PREFIX) && !reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    if (!req.url.startsWith('/docs')) {
      reply.header('x-frame-options', 'DENY');
      // The console's pages set their own (src/modules/console/routes.ts); everything else is JSON.
      if (!reply.hasHeader('content-security-policy'))
        reply.header('content-security-policy', "default-src 'none'; frame-ancestors 'none'");
    }
    done();
  });
  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched';
    metrics.requests.inc({ method: req.method, route, status: String(reply.statusCode) });
    metrics.duration.observe({ method: req.method, route }, reply.elapsedTime / 1000);
    if (req.errorCode) metrics.errors.inc({ code: req.errorCode, status: String(reply.statusCode) });
    if (!QUIET_ROUTES.has(route)) {
      const line = {
        reqId: req.id,
        method: req.method,
        url: scrubUrl(req.url),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        // Who and which tenant (ids only, never a name or an address), and the catalogue code of a refusal.
        ...(req.auth
          ? { userId: req.auth.userId, partnerId: req.auth.partnerId, orgId: req.auth.orgId ?? undefined }
          : {}),
        ...(req.errorCode ? { code: req.errorCode } : {}),
      };
      // The console's files (scripts, styles, fonts) are many per page load and say nothing an operator needs.
      if (isStaticAsset(req.method, route, req.url, reply.statusCode)) deps.logger.debug(line, 'request');
      else deps.logger.info(line, 'request');
    }
    done();
  });

  await app.register(cookie);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Gatehouse API',
        version: '1.0.0',
        description:
          'Identity, access and onboarding service. All API paths live under /api/v1. Every non-2xx answer is the `Error` envelope.',
        license: { name: 'Proprietary', identifier: 'LicenseRef-Gatehouse-Proprietary' },
      },
      servers: [{ url: config.publicUrl, description: 'This instance (PUBLIC_URL)' }],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description:
              "Access token from sign-in, refresh, SSO exchange or POST /api/v1/oauth/token (15 minutes); or a service account's API key `gh_<environment>_<id prefix>_<secret>` as is.",
          },
          metricsToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'The METRICS_TOKEN setting, for the Prometheus scraper (only when the operator sets one).',
          },
          agentToken: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'ghat_…',
            description:
              'Agent token a device received at enrolment (POST /api/v1/agents/enroll); not a user access token.',
          },
          scimBearer: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'ghscim_…',
            description:
              'SCIM token of a tenant (POST /api/v1/scim-tokens), for /scim/v2 only; not a user access token.',
          },
        },
      },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
    transformObject: (d) => finishDocument(jsonSchemaTransformObject(d)),
  });
  // Swagger UI's default CSP ends in upgrade-insecure-requests: over plain http on any host but localhost the
  // browser then fetches the assets over https and the page stays blank.
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    transformStaticCSP: (h) => h.replace(/\s*upgrade-insecure-requests;?/g, ''),
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  await app.register(opsRoutes(deps, metrics));
  await app.register(consoleRoutes());
  await app.register(
    async (api) => {
      installDeniedAudit(api, deps);
      installBreakGlassAlerts(api, deps);
      installGovernorAudit(api, deps);
      installByIdScope(api, deps.db, API_PREFIX);
      await api.register(authPublicRoutes(deps));
      await api.register(setupRoutes(deps));
      await api.register(authAccountRoutes(deps));
      await api.register(invitationRoutes(deps));
      await api.register(mfaRoutes(deps));
      await api.register(passkeyRoutes(deps));
      await api.register(authSecurityRoutes(deps));
      await api.register(ssoRoutes(deps));
      await api.register(tenantRoutes(deps));
      await api.register(deviceRoutes(deps));
      await api.register(contactRoutes(deps));
      await api.register(customFieldRoutes(deps));
      await api.register(scriptRoutes(deps));
      await api.register(configItemRoutes(deps));
      await api.register(userAccountRoutes(deps));
      await api.register(userAdminRoutes(deps));
      await api.register(userSessionRoutes(deps));
      await api.register(roleRoutes(deps));
      await api.register(auditRoutes(deps));
      await api.register(serviceAccountRoutes(deps));
      await api.register(oauthRoutes(deps));
      await api.register(webhookRoutes(deps));
      await api.register(accessRoutes(deps));
      await api.register(scimTokenRoutes(deps));
      await api.register(domainRoutes(deps));
      await api.register(relationshipRoutes(deps));
      await api.register(accessGroupRoutes(deps));
      await api.register(governorRoutes(deps));
    },
    { prefix: API_PREFIX },
  );
  await app.register(scimRoutes(deps), { prefix: SCIM_PREFIX });
  // The authorization API (AuthZEN) at the standard's own paths, beside /api/v1.
  await app.register(authzenRoutes(deps));
  assertStepUpRoutes(registered);
  return app;
}

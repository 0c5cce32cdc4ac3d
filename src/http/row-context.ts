// What a request's statements run as under row-level security (src/db/row-security.ts): the public flows below in
// their named system context, every other route as its caller's reach (rowReachOf, src/access/scope.ts) once the
// authentication guard has put the caller on the request (before that, only the guard's own lookups run, in the system
// context `authenticate`).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type RowReach, runWithRowHolder, type RowHolder, type SystemContextName } from '../db/row-security.js';
import { rowReachOf } from '../access/scope.js';

/**
 * The routes that run in a named system context, whole: the public flows (no caller yet; a public route not listed
 * sees no tenant row), the agent's report, and the one authenticated route that acts beyond its caller's Scope by
 * design (a just-in-time access request, for an organisation the member cannot reach yet; a switch to another of the
 * person's own memberships, in another tenant).
 */
export const ROUTE_CONTEXTS: Readonly<Record<string, SystemContextName>> = {
  'POST /api/v1/agents/inventory': 'agent',
  'POST /api/v1/access/requests': 'access-request',
  'POST /api/v1/auth/switch-context': 'switch-context',
  'GET /api/v1/auth/invitations': 'invitations',
  'POST /api/v1/auth/invitations/:id/accept': 'invitations',
  'POST /api/v1/auth/invitations/:id/decline': 'invitations',
  'POST /api/v1/auth/invitations/accept-link': 'invitations',
  'GET /api/v1/.well-known/jwks.json': 'jwks',
  'POST /api/v1/agents/enroll': 'enrolment',
  'POST /api/v1/auth/accept-invite': 'sign-up',
  'POST /api/v1/auth/forgot-password': 'sign-up',
  'POST /api/v1/auth/invite/preview': 'sign-up',
  'POST /api/v1/auth/register': 'sign-up',
  'POST /api/v1/auth/register-partner': 'sign-up',
  'POST /api/v1/auth/reset-password': 'sign-up',
  'POST /api/v1/auth/login': 'login',
  'POST /api/v1/auth/mfa/passkey/options': 'login',
  'POST /api/v1/auth/mfa/passkey/verify': 'login',
  'POST /api/v1/auth/mfa/sms/send': 'login',
  'POST /api/v1/auth/mfa/verify': 'login',
  'POST /api/v1/auth/passkey/login/options': 'login',
  'POST /api/v1/auth/passkey/login/verify': 'login',
  'POST /api/v1/auth/sso-discovery': 'login',
  'POST /api/v1/auth/refresh': 'refresh',
  'POST /api/v1/auth/sessions/report': 'session-report',
  'POST /api/v1/oauth/token': 'oauth-token',
  'POST /api/v1/setup': 'setup',
  'GET /api/v1/setup/status': 'setup',
  'GET /api/v1/sso/callback': 'sso',
  'GET /api/v1/sso/check/:orgId': 'sso',
  'POST /api/v1/sso/exchange': 'sso',
  'POST /api/v1/sso/link': 'sso',
  'POST /api/v1/sso/link/preview': 'sso',
  'GET /api/v1/sso/login/:orgId': 'sso',
  'POST /api/v1/sso/saml/acs': 'sso',
  'GET /api/v1/sso/saml/return': 'sso',
  'GET /api/v1/sso/saml/:providerId/metadata': 'sso',
  'GET /healthz': 'process',
  'GET /readyz': 'process',
  'GET /metrics': 'process',
};

declare module 'fastify' {
  interface FastifyRequest {
    /** A caller other than a principal (a SCIM token) puts its row reach here; a principal's is derived from the principal. */
    rowReach: RowReach | null;
  }
}

const reachOfRequest = (req: FastifyRequest): RowReach | null =>
  req.rowReach ?? (req.auth ? rowReachOf(req.auth) : null);

/**
 * The first hook of every request: a holder for this request's statements. It is entered again after the body is
 * read (the body arrives on the socket's events, outside the context the request started in).
 */
export function installRowContext(app: FastifyInstance): void {
  app.decorateRequest('rowReach', null);
  const holders = new WeakMap<FastifyRequest, RowHolder>();
  const holderOf = (req: FastifyRequest): RowHolder => {
    let h = holders.get(req);
    if (!h) {
      const system = ROUTE_CONTEXTS[`${req.method === 'HEAD' ? 'GET' : req.method} ${req.routeOptions.url}`] ?? null;
      h = {
        system,
        reach: () => reachOfRequest(req),
      };
      holders.set(req, h);
    }
    return h;
  };
  app.addHook('onRequest', (req, _reply, done) => runWithRowHolder(holderOf(req), done));
  app.addHook('preValidation', (req, _reply, done) => runWithRowHolder(holderOf(req), done));
}

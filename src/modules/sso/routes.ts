// SSO: provider administration (settings:read|write) and the public login flow.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { requireStepUp } from '../../http/step-up.js';
import { principalOf, requirePermission } from '../../http/guards.js';
import { metaOf } from '../../http/meta.js';
import { authErrors, errors, page, idParam } from '../../http/schemas.js';
import { respondWithTokens, tokenResponse } from '../identity/index.js';
import { PERMISSIONS as PERMS } from '../../access/catalog.js';
import { findInScope, resolveTarget, SSO_PROVIDER } from '../tenants/index.js';
import {
  BINDING_COOKIE,
  bindingCookieOptions,
  callbackUrl,
  checkOwner,
  completeLogin,
  discover,
  exchange,
  SsoFailure,
  SSO_SESSION_TTL_MS,
  startLogin,
} from './login-service.js';
import { landingUrl, ssoIdentityRoutes } from './routes-identities.js';
import { SSO_PRESETS } from './presets.js';
import { samlRoutes } from './routes-saml.js';
import { acsUrl, spMetadataUrl } from './saml.js';
import {
  createProvider,
  deleteProvider,
  findProvider,
  listProviders,
  providerWithDomains,
  testProvider,
  updateProvider,
} from './providers-service.js';
import {
  callbackQuery,
  checkResult,
  createProviderBody,
  discoveryBody,
  discoveryResult,
  exchangeBody,
  loginQuery,
  providerJson,
  providerListQuery,
  statusBody,
  testResult,
  updateProviderBody,
} from './schemas.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const preset = z.object({
  id: z.string(),
  name: z.string(),
  type: z.literal('oidc'),
  issuerTemplate: z.string(),
  scopes: z.string(),
  /** The redirect URI to register at the IdP (this instance's callback). */
  redirectUri: z.string(),
  emailClaim: z.string(),
  nameClaim: z.string(),
  notes: z.string(),
  /** Where the IdP also offers SAML 2.0 (create with type saml). */
  saml: z
    .object({
      /** null: the IdP offers its metadata only as a download (give it as metadataXml). */
      metadataUrlTemplate: z.string().nullable(),
      /** The assertion consumer service to register at the IdP. */
      acsUrl: z.string(),
      /** The SP entity id (audience) to register: our metadata URL, once the provider exists. */
      entityIdTemplate: z.string(),
      emailAttribute: z.string(),
      nameAttribute: z.string(),
      notes: z.string(),
    })
    .optional(),
});

export function ssoRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const auth = deps.authenticate();
    const stepUp = requireStepUp(deps);
    const tags = ['sso'];
    const target = (req: Parameters<typeof principalOf>[0], orgId: string | undefined) =>
      resolveTarget(deps.db, principalOf(req), orgId);
    // The provider's own tenant decides (the one by-id rule; ?orgId= is checked against it by installByIdScope).
    const byId = async (req: Parameters<typeof principalOf>[0] & { params: { id: string } }) =>
      (await findInScope(deps.db, principalOf(req), SSO_PROVIDER, req.params.id)).target;
    const cookieOpts = bindingCookieOptions(deps);
    const toLogin = (reply: FastifyReply, code: string) =>
      reply.redirect(`${deps.config.appUrl}/login?error=${encodeURIComponent(code)}`, 302);

    r.get(
      '/sso/presets',
      {
        onRequest: [auth],
        schema: {
          tags,
          summary: 'Presets of common identity providers',
          response: { 200: z.object({ data: z.array(preset) }), ...authErrors },
        },
      },
      async () => ({
        data: SSO_PRESETS.map(({ saml, ...p }) => ({
          ...p,
          redirectUri: callbackUrl(deps),
          ...(saml
            ? { saml: { ...saml, acsUrl: acsUrl(deps), entityIdTemplate: spMetadataUrl(deps, '{providerId}') } }
            : {}),
        })),
      }),
    );

    r.get(
      '/sso/providers',
      {
        onRequest: [auth, requirePermission(PERMS.SETTINGS_READ)],
        schema: {
          tags,
          summary: 'Providers of an organisation (?orgId=) or the partner-owned ones',
          querystring: providerListQuery,
          response: { 200: page(providerJson), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => listProviders(deps, await target(req, req.query.orgId)),
    );

    r.get(
      '/sso/providers/:id',
      {
        onRequest: [auth, requirePermission(PERMS.SETTINGS_READ)],
        schema: {
          tags,
          summary: 'A provider (the client secret is never returned)',
          params: idParam,
          response: { 200: providerJson, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => providerWithDomains(deps, await findProvider(deps.db, await byId(req), req.params.id)),
    );

    r.post(
      '/sso/providers',
      {
        onRequest: [auth, requirePermission(PERMS.SETTINGS_WRITE)],
        preHandler: [stepUp],
        schema: {
          tags,
          summary: "Create a provider (starts inactive): OpenID Connect, or SAML 2.0 from the IdP's metadata",
          body: createProviderBody,
          response: { 201: providerJson, ...errors(400, 404), ...authErrors },
        },
      },
      async (req, reply) => {
        const { orgId, ...input } = req.body;
        return reply
          .code(201)
          .send(await createProvider(deps, principalOf(req), await target(req, orgId), input, metaOf(req)));
      },
    );

    r.patch(
      '/sso/providers/:id',
      {
        onRequest: [auth, requirePermission(PERMS.SETTINGS_WRITE)],
        preHandler: [stepUp],
        schema: {
          tags,
          summary: 'Change a provider',
          params: idParam,
          body: updateProviderBody,
          response: { 200: providerJson, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => updateProvider(deps, principalOf(req), await byId(req), req.params.id, req.body, metaOf(req)),
    );

    r.delete(
      '/sso/providers/:id',
      {
        onRequest: [auth, requirePermission(PERMS.SETTINGS_WRITE)],
        preHandler: [stepUp],
        schema: {
          tags,
          summary: 'Delete a provider and its linked identities',
          params: idParam,
          response: { 200: z.object({ success: z.literal(true) }), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => {
        await deleteProvider(deps, principalOf(req), await byId(req), req.params.id, metaOf(req));
        return { success: true as const };
      },
    );

    r.post(
      '/sso/providers/:id/status',
      {
        onRequest: [auth, requirePermission(PERMS.SETTINGS_WRITE)],
        preHandler: [stepUp],
        schema: {
          tags,
          summary: 'Set active, inactive or testing',
          params: idParam,
          body: statusBody,
          response: { 200: providerJson, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req) =>
        updateProvider(
          deps,
          principalOf(req),
          await byId(req),
          req.params.id,
          { status: req.body.status },
          metaOf(req),
        ),
    );

    r.post(
      '/sso/providers/:id/test',
      {
        onRequest: [auth, requirePermission(PERMS.SETTINGS_WRITE)],
        schema: {
          tags,
          summary: "Try OpenID discovery, or (SAML) fetch and read the metadata and report the certificates' expiry",
          params: idParam,
          response: { 200: testResult, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => testProvider(deps, await byId(req), req.params.id),
    );

    await app.register(ssoIdentityRoutes(deps));
    await app.register(samlRoutes(deps));

    // Public flow.
    r.get(
      '/sso/login/:orgId',
      {
        schema: {
          tags,
          summary: 'Start SSO: 302 to the identity provider (orgId, or a partner id for its own provider)',
          security: [],
          params: z.object({ orgId: z.string().max(64) }),
          querystring: loginQuery,
          response: { 302: z.null().describe('Redirect to the identity provider, or to /login?error=') },
        },
      },
      async (req, reply) => {
        if (!UUID.test(req.params.orgId)) return toLogin(reply, 'provider_not_found');
        try {
          const { location, binding } = await startLogin(deps, req.params.orgId, req.query.redirect);
          reply.setCookie(BINDING_COOKIE, binding, { ...cookieOpts, maxAge: SSO_SESSION_TTL_MS / 1000 });
          return reply.redirect(location, 302);
        } catch (err) {
          if (err instanceof SsoFailure) return toLogin(reply, err.code);
          throw err;
        }
      },
    );

    r.get(
      '/sso/callback',
      {
        schema: {
          tags,
          summary: 'The identity provider returns here; 302 to the app with #ssoCode= or to /login?error=',
          security: [],
          querystring: callbackQuery,
          response: { 302: z.null().describe('Redirect to the app with #ssoCode=, or to /login?error=') },
        },
      },
      async (req, reply) => {
        reply.clearCookie(BINDING_COOKIE, cookieOpts);
        const rawQuery = req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '';
        try {
          const out = await completeLogin(deps, req.query, rawQuery, req.cookies[BINDING_COOKIE], metaOf(req));
          return reply.redirect(landingUrl(deps, out.outcome, out.redirectPath), 302);
        } catch (err) {
          if (err instanceof SsoFailure) return toLogin(reply, err.code);
          throw err;
        }
      },
    );

    r.post(
      '/sso/exchange',
      {
        schema: {
          tags,
          summary: 'Trade the one-time SSO code for tokens',
          description:
            "A provider of an organisation that its partner's staff set up signs nobody in while the organisation suspends its partner's access (the callback answers error=msp_access_denied; an exchange meanwhile, 403 msp_access_denied).",
          security: [],
          body: exchangeBody,
          response: { 200: tokenResponse, ...errors(400, 401, 403) },
        },
      },
      async (req, reply) => respondWithTokens(deps, reply, await exchange(deps, req.body.code, metaOf(req))),
    );

    r.get(
      '/sso/check/:orgId',
      {
        schema: {
          tags,
          summary: 'Whether SSO is on for an organisation',
          security: [],
          params: z.object({ orgId: z.uuid() }),
          response: { 200: checkResult, ...errors(400) },
        },
      },
      async (req) => checkOwner(deps, req.params.orgId),
    );

    r.post(
      '/auth/sso-discovery',
      {
        schema: {
          tags,
          summary: 'SSO for the login page, from the email domain only',
          security: [],
          body: discoveryBody,
          response: { 200: discoveryResult, ...errors(400) },
        },
      },
      async (req) => discover(deps, req.body.email),
    );
  };
}

// SAML 2.0 service provider surface: our SP metadata per provider, the assertion consumer service (the
// one route that takes a form), and the return hop where the browser binding is checked. All public: the IdP and
// the browser call them. Failures end as the OIDC callback's do, in `${APP_URL}/login?error=<code>`.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { metaOf } from '../../http/meta.js';
import { errors } from '../../http/schemas.js';
import { BINDING_COOKIE, bindingCookieOptions } from './login-service.js';
import { landingUrl } from './routes-identities.js';
import { completeSamlReturn, consumeSamlResponse, MAX_SAML_RESPONSE, samlProviderMetadata } from './saml-login.js';
import { SsoFailure } from './identity-service.js';
import { acsBody, samlReturnQuery } from './schemas.js';

const FORM = 'application/x-www-form-urlencoded';
const METADATA_TYPE = 'application/samlmetadata+xml';

export function samlRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const tags = ['sso'];
    const toLogin = (reply: FastifyReply, code: string) =>
      reply.redirect(`${deps.config.appUrl}/login?error=${encodeURIComponent(code)}`, 302);

    r.get(
      '/sso/saml/:providerId/metadata',
      {
        schema: {
          tags,
          summary:
            'Our SAML service provider metadata for a provider (entity id, ACS): give it, or its URL, to the IdP',
          security: [],
          params: z.strictObject({ providerId: z.uuid() }),
          response: {
            200: {
              description: 'SAML 2.0 SP metadata (EntityDescriptor).',
              content: { [METADATA_TYPE]: { schema: z.string() } },
            },
            ...errors(400, 404),
          },
        },
      },
      async (req, reply) => {
        const xml = await samlProviderMetadata(deps, req.params.providerId);
        reply.header('content-type', METADATA_TYPE);
        return xml;
      },
    );

    // The only form-encoded route of the API: the parser is registered in this scope alone.
    await app.register(async (acs) => {
      acs.addContentTypeParser(FORM, { parseAs: 'string', bodyLimit: MAX_SAML_RESPONSE * 2 }, (_req, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body as string)));
      });
      acs.withTypeProvider<ZodTypeProvider>().post(
        '/sso/saml/acs',
        {
          schema: {
            tags,
            summary:
              'Assertion consumer service: the IdP posts SAMLResponse (and RelayState); 303 to the return hop, or 302 to /login?error=',
            security: [],
            consumes: [FORM],
            body: acsBody,
            response: {
              302: z.null().describe('Refused: redirect to /login?error='),
              303: z.null().describe('Verified: on to GET /sso/saml/return in the same browser'),
            },
          },
        },
        async (req, reply) => {
          try {
            return reply.redirect(await consumeSamlResponse(deps, req.body.SAMLResponse, metaOf(req)), 303);
          } catch (err) {
            if (err instanceof SsoFailure) return toLogin(reply, err.code);
            throw err;
          }
        },
      );
    });

    r.get(
      '/sso/saml/return',
      {
        schema: {
          tags,
          summary:
            'The browser that started a SAML sign-in completes it; 302 to the app with #ssoCode=, or to /login?error=',
          security: [],
          querystring: samlReturnQuery,
          response: { 302: z.null().describe('Redirect to the app with #ssoCode=, the link page, or /login?error=') },
        },
      },
      async (req, reply) => {
        const cookieOpts = bindingCookieOptions(deps);
        reply.clearCookie(BINDING_COOKIE, cookieOpts);
        try {
          const out = await completeSamlReturn(deps, req.query.token, req.cookies[BINDING_COOKIE], metaOf(req));
          return reply.redirect(landingUrl(deps, out.outcome, out.redirectPath), 302);
        } catch (err) {
          if (err instanceof SsoFailure) return toLogin(reply, err.code);
          throw err;
        }
      },
    );
  };
}

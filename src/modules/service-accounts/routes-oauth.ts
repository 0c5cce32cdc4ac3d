// POST /oauth/token (RFC 6749 4.4, client credentials): a service account trades its clientId and one of its keys for
// a short-lived access token of the form a sign-in issues (sub = the service account, sid = the key, client_id). Both
// client authentication methods of RFC 6749 2.3.1: client_secret_basic and client_secret_post. Errors keep the
// envelope, with `error` = the OAuth code (invalid_request, invalid_client, unsupported_grant_type) and
// `error_description`, so OAuth libraries and clients of the envelope both read them.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../../deps.js';
import { AppError, ERROR_CATALOG, type ErrorCode } from '../../http/errors.js';
import { metaOf } from '../../http/meta.js';
import { errors } from '../../http/schemas.js';
import { authenticateApiKey } from './principal.js';
import { tokenRequestBody, tokenResponse } from './schemas.js';

const FORM = 'application/x-www-form-urlencoded';
const MAX_FORM_BYTES = 8 * 1024;

const oauthError = (
  code: Extract<ErrorCode, 'invalid_request' | 'invalid_client' | 'unsupported_grant_type'>,
  description?: string,
) => new AppError(code, description, { error_description: description ?? ERROR_CATALOG[code].message });

/** RFC 6749 2.3.1: the Basic credentials are each form-urlencoded before base64. */
function basicCredentials(header: string | undefined): { clientId: string; secret: string } | null | 'malformed' {
  if (!header) return null;
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!m) return /^Basic\b/i.test(header) ? 'malformed' : null;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  try {
    const unform = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { clientId: unform(decoded.slice(0, colon)), secret: unform(decoded.slice(colon + 1)) };
  } catch {
    return 'malformed';
  }
}

export function oauthRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    // The token endpoint takes form bodies only (RFC 6749 3.2): this scope parses them, and no JSON.
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser(FORM, { parseAs: 'string', bodyLimit: MAX_FORM_BYTES }, (_req, body, done) => {
      const params = new URLSearchParams(body as string);
      const seen = new Set<string>();
      for (const k of params.keys()) {
        if (seen.has(k))
          return done(oauthError('invalid_request', `The parameter ${k.slice(0, 40)} is repeated.`), undefined);
        seen.add(k);
      }
      done(null, Object.fromEntries(params));
    });

    app.withTypeProvider<ZodTypeProvider>().post(
      '/oauth/token',
      {
        attachValidation: true,
        schema: {
          tags: ['service-accounts'],
          operationId: 'issueServiceAccountToken',
          summary: 'Client credentials: a service account’s access token',
          description:
            'RFC 6749 4.4. Form body `grant_type=client_credentials`; the client authenticates with its clientId and one of its API keys as the secret, either in `Authorization: Basic base64(clientId:key)` (client_secret_basic) or as `client_id` and `client_secret` fields (client_secret_post), not both. The answer `{ access_token, token_type, expires_in }` is a JWT of the sign-in form with `sub` = the service account and `client_id`; it dies with the key (revoked, expired, account disabled or deleted) on its next use. Errors: 400 `invalid_request` or `unsupported_grant_type`, 401 `invalid_client`, each with `error_description`; the key’s rate limit applies (429).',
          security: [],
          consumes: [FORM],
          body: tokenRequestBody,
          response: { 200: tokenResponse, ...errors(400, 401, 429) },
        },
      },
      async (req: FastifyRequest, reply: FastifyReply) => {
        reply.header('pragma', 'no-cache');
        if (req.validationError) throw oauthError('invalid_request', 'The token request is not a valid form.');
        const body = req.body as { grant_type?: string; client_id?: string; client_secret?: string };
        if (!body.grant_type) throw oauthError('invalid_request', 'grant_type is required.');
        if (body.grant_type !== 'client_credentials') throw oauthError('unsupported_grant_type');
        const basic = basicCredentials(req.headers.authorization);
        if (basic) reply.header('www-authenticate', 'Basic realm="gatehouse", charset="UTF-8"');
        if (basic === 'malformed') throw oauthError('invalid_client', 'The Basic credentials are malformed.');
        if (basic && (body.client_id !== undefined || body.client_secret !== undefined)) {
          // RFC 6749 2.3: one authentication method per request (a client_id alone in the body is allowed if it agrees).
          if (body.client_secret !== undefined || body.client_id !== basic.clientId)
            throw oauthError('invalid_request', 'Use one client authentication method, not two.');
        }
        const clientId = basic ? basic.clientId : body.client_id;
        const secret = basic ? basic.secret : body.client_secret;
        if (!clientId || !secret)
          throw oauthError(
            'invalid_client',
            'Client authentication is required (Basic or client_id and client_secret).',
          );
        let principal: Awaited<ReturnType<typeof authenticateApiKey>>;
        try {
          principal = await authenticateApiKey(deps.authContext, secret, metaOf(req));
        } catch (err) {
          if (err instanceof AppError && err.code !== 'rate_limited') throw oauthError('invalid_client');
          throw err;
        }
        const account = principal.serviceAccount!;
        if (account.clientId !== clientId) throw oauthError('invalid_client');
        const accessToken = await deps.tokens.sign({
          sub: account.id,
          sid: account.keyId,
          scope: principal.tenantKind,
          partnerId: principal.partnerId,
          orgId: principal.orgId,
          roleId: principal.roleId,
          mfa: false,
          authTime: null,
          clientId: account.clientId,
        });
        return { access_token: accessToken, token_type: 'Bearer' as const, expires_in: deps.config.accessTokenTtl };
      },
    );
  };
}

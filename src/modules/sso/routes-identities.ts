// Linking federated identities to accounts: the console's link page, the caller's own links, and an
// administrator's view of a member's links.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { principalOf, requireFullOrgAccess, requirePermission } from '../../http/guards.js';
import { metaOf } from '../../http/meta.js';
import { authErrors, errors, idParam } from '../../http/schemas.js';
import { respondWithTokens, tokenResponse } from '../identity/index.js';
import { PERMISSIONS as PERMS } from '../../access/catalog.js';
import { resolveTarget } from '../tenants/index.js';
import { consented, findMember } from '../users/index.js';
import { identitiesOf, unlinkOwnIdentity } from './identities-service.js';
import { confirmLink, linkPreview, type SignInOutcome } from './identity-service.js';

const flowField = z.string().min(16).max(512);
const identityJson = z
  .object({
    id: z.uuid(),
    providerId: z.uuid(),
    providerName: z.string(),
    type: z.enum(['oidc', 'saml']),
    orgId: z.uuid().nullable(),
    partnerId: z.uuid(),
    email: z.string().nullable(),
    createdAt: z.string(),
    lastLoginAt: z.string().nullable(),
  })
  .meta({ id: 'SsoIdentity' });
const identityList = z.object({ data: z.array(identityJson) });

/** Where the callback sends the browser: the app with #ssoCode=, or the console's link page. */
export const landingUrl = (deps: Deps, outcome: SignInOutcome, redirectPath: string) =>
  outcome.kind === 'code'
    ? `${deps.config.appUrl}${redirectPath}#ssoCode=${encodeURIComponent(outcome.exchangeCode)}`
    : `${deps.config.appUrl}/sso/link?flow=${encodeURIComponent(outcome.flow)}`;

export function ssoIdentityRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const auth = deps.authenticate();
    const tags = ['sso'];

    r.post(
      '/sso/link/preview',
      {
        schema: {
          tags,
          summary: 'What the link page shows: the account and the provider waiting to be linked',
          security: [],
          body: z.strictObject({ flow: flowField }),
          response: {
            200: z.object({
              email: z.string(),
              providerName: z.string(),
              type: z.enum(['oidc', 'saml']),
              passwordRequired: z.literal(true),
              codeRequired: z.boolean(),
              expiresAt: z.string(),
            }),
            ...errors(400),
          },
        },
      },
      async (req) => linkPreview(deps, req.body.flow),
    );

    r.post(
      '/sso/link',
      {
        schema: {
          tags,
          summary:
            'Confirm linking an identity to an existing account (password, and the second factor when enrolled); signs in',
          description:
            // biome-ignore lint/suspicious/noTemplateCurlyInString: documentation names the setting literally
            'The callback sends an account that cannot be linked automatically to `${APP_URL}/sso/link?flow=`. The flow is single-use and lives 10 minutes; five wrong proofs end it.',
          security: [],
          body: z.strictObject({
            flow: flowField,
            password: z.string().min(1).max(1024),
            code: z.string().trim().min(6).max(64).optional(),
          }),
          response: { 200: tokenResponse, ...errors(400, 401, 409, 429) },
        },
      },
      async (req, reply) => respondWithTokens(deps, reply, await confirmLink(deps, req.body, metaOf(req))),
    );

    r.get(
      '/auth/identities',
      {
        onRequest: [auth],
        schema: {
          tags,
          summary: 'Your linked identity-provider accounts',
          response: { 200: identityList, ...authErrors },
        },
      },
      async (req) => identitiesOf(deps.db, principalOf(req).userId),
    );

    r.delete(
      '/auth/identities/:id',
      {
        onRequest: [auth],
        schema: {
          tags,
          summary: 'Unlink one of your identities (refused when it is your only way to sign in)',
          params: idParam,
          response: { 200: z.object({ success: z.literal(true) }), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => {
        await unlinkOwnIdentity(deps, principalOf(req), req.params.id, metaOf(req));
        return { success: true as const };
      },
    );

    // A member's links, by the rules of the /users routes: ?orgId= names an organisation's member.
    r.get(
      '/sso/identities',
      {
        onRequest: [auth, requireFullOrgAccess(), requirePermission(PERMS.USERS_READ)],
        schema: {
          tags,
          summary: "A member's linked identities (administrators)",
          querystring: z.strictObject({ userId: z.uuid(), orgId: z.uuid().optional() }),
          response: { 200: identityList, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => {
        const target = await resolveTarget(deps.db, principalOf(req), req.query.orgId);
        consented(await findMember(deps.db, target, req.query.userId));
        return identitiesOf(deps.db, req.query.userId);
      },
    );
  };
}

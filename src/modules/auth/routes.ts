// Account surface of /auth: the signed-in caller's own session, password and context.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { principalOf } from '../../http/guards.js';
import { metaOf } from '../../http/meta.js';
import { authErrors, errors } from '../../http/schemas.js';
import {
  clearSessionCookies,
  currentProfile,
  respondWithTokens,
  tokenResponse,
  userProfile,
} from '../identity/index.js';
import { emailStatus, sendVerification } from './email-proof.js';
import { switchContext } from './invites.js';
import { listOwnMemberships, membershipJson } from './membership-list.js';
import { changePassword } from './password-service.js';
import { logout } from './refresh-service.js';
import { changePasswordBody, emailStatusJson, success, switchContextBody, verificationSent } from './schemas.js';

const jwk = z.looseObject({
  kty: z.string(),
  kid: z.string(),
  alg: z.string(),
  crv: z.string(),
  x: z.string(),
  use: z.string(),
});

export function authAccountRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const authenticate = deps.authenticate();
    const pending = deps.authenticate({ allowPendingMfaEnrollment: true });

    r.get(
      '/.well-known/jwks.json',
      {
        schema: {
          tags: ['auth'],
          summary: 'Public keys that verify access tokens',
          security: [],
          response: { 200: z.object({ keys: z.array(jwk) }) },
        },
      },
      async (_req, reply) => {
        reply.header('cache-control', 'public, max-age=300');
        return deps.keys.jwks() as { keys: z.infer<typeof jwk>[] };
      },
    );

    r.get(
      '/auth/me',
      {
        onRequest: [pending],
        schema: {
          tags: ['auth'],
          summary: 'Current user, MFA and phone status',
          response: { 200: userProfile, ...authErrors },
        },
      },
      async (req) => currentProfile(deps.db, principalOf(req)),
    );

    r.post(
      '/auth/logout',
      {
        onRequest: [pending],
        schema: {
          tags: ['auth'],
          summary: 'Revoke every session of the user',
          response: { 200: success, ...authErrors },
        },
      },
      async (req, reply) => {
        await logout(deps, principalOf(req), metaOf(req));
        clearSessionCookies(reply, deps.config);
        return { success: true as const };
      },
    );

    r.post(
      '/auth/change-password',
      {
        onRequest: [authenticate],
        schema: {
          tags: ['auth'],
          summary: 'Change password; other sessions end',
          body: changePasswordBody,
          response: { 200: tokenResponse, ...errors(400, 429), ...authErrors },
        },
      },
      async (req, reply) =>
        respondWithTokens(deps, reply, await changePassword(deps, principalOf(req), req.body, metaOf(req))),
    );

    r.get(
      '/auth/memberships',
      {
        onRequest: [pending],
        schema: {
          tags: ['auth'],
          summary: 'Your memberships (partner and organisations), named, the current one marked',
          description: 'The places POST /auth/switch-context can move the session to.',
          response: { 200: z.object({ data: z.array(membershipJson) }), ...authErrors },
        },
      },
      async (req) => listOwnMemberships(deps.db, principalOf(req)),
    );

    r.post(
      '/auth/switch-context',
      {
        onRequest: [pending],
        schema: {
          tags: ['auth'],
          summary: 'Move the session to another of your memberships',
          body: switchContextBody,
          response: { 200: tokenResponse, ...errors(400, 404), ...authErrors },
        },
      },
      async (req, reply) =>
        respondWithTokens(deps, reply, await switchContext(deps, principalOf(req), req.body, metaOf(req))),
    );

    r.get(
      '/auth/verify-email',
      {
        onRequest: [pending],
        schema: {
          tags: ['auth'],
          summary: 'Whether your address is verified, and a change of address waiting for its link',
          response: { 200: emailStatusJson, ...authErrors },
        },
      },
      async (req) => emailStatus(deps, principalOf(req).userId),
    );

    r.post(
      '/auth/verify-email/send',
      {
        onRequest: [pending],
        schema: {
          tags: ['auth'],
          summary: 'Mail a link that proves your address (nothing sent when it is verified)',
          response: { 200: verificationSent, ...errors(429), ...authErrors },
        },
      },
      async (req) => ({ sent: await sendVerification(deps, principalOf(req).userId) }),
    );
  };
}

// Passkey routes: the passkey step of a sign-in and the caller's own passkeys. With
// ENABLE_2FA=false every one of them answers 404, as the other MFA routes do.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { principalOf } from '../../http/guards.js';
import { metaOf } from '../../http/meta.js';
import { authErrors, errors, idParam } from '../../http/schemas.js';
import { respondWithTokens, tokenResponse } from '../identity/index.js';
import { twoFactorOn } from '../mfa/index.js';
import {
  deletePasskeyBody,
  passkeyJsonSchema,
  passkeyVerifyBody,
  registerOptionsBody,
  registerVerifyBody,
  renameBody,
  tempTokenBody,
} from './schemas.js';
import {
  deletePasskey,
  listPasskeys,
  loginOptions,
  registrationOptions,
  renamePasskey,
  verifyLoginPasskey,
  verifyRegistration,
} from './service.js';

const options = z.object({ options: z.record(z.string(), z.unknown()) });

export function passkeyRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const enabled = twoFactorOn(deps);
    const pending = deps.authenticate({ allowPendingMfaEnrollment: true });
    const tags = ['passkeys'];

    r.post(
      '/auth/mfa/passkey/options',
      {
        onRequest: [enabled],
        schema: {
          tags: ['mfa'],
          summary: 'WebAuthn assertion options for a sign-in',
          security: [],
          body: tempTokenBody,
          response: { 200: options, ...errors(400, 401) },
        },
      },
      async (req) => (await loginOptions(deps, req.body.tempToken)) as unknown as { options: Record<string, unknown> },
    );

    r.post(
      '/auth/mfa/passkey/verify',
      {
        onRequest: [enabled],
        schema: {
          tags: ['mfa'],
          summary: 'Complete a sign-in with a passkey',
          security: [],
          body: passkeyVerifyBody,
          response: { 200: tokenResponse, ...errors(400, 401, 429) },
        },
      },
      async (req, reply) =>
        respondWithTokens(
          deps,
          reply,
          await verifyLoginPasskey(deps, req.body.tempToken, req.body.credential as never, metaOf(req)),
        ),
    );

    r.post(
      '/auth/passkeys/register/options',
      {
        onRequest: [enabled, pending],
        schema: {
          tags,
          summary: 'Begin passkey registration (re-checks the password)',
          body: registerOptionsBody,
          response: { 200: options, ...errors(400, 429), ...authErrors },
        },
      },
      async (req) =>
        (await registrationOptions(deps, principalOf(req), req.body)) as unknown as {
          options: Record<string, unknown>;
        },
    );

    r.post(
      '/auth/passkeys/register/verify',
      {
        onRequest: [enabled, pending],
        schema: {
          tags,
          summary: 'Store the passkey and turn MFA on',
          body: registerVerifyBody,
          response: { 201: z.object({ passkey: passkeyJsonSchema }), ...errors(400, 409), ...authErrors },
        },
      },
      async (req, reply) =>
        reply
          .code(201)
          .send(await verifyRegistration(deps, principalOf(req), req.body.credential as never, metaOf(req))),
    );

    r.get(
      '/auth/passkeys',
      {
        onRequest: [enabled, pending],
        schema: {
          tags,
          summary: 'Your passkeys',
          response: { 200: z.object({ data: z.array(passkeyJsonSchema) }), ...authErrors },
        },
      },
      async (req) => listPasskeys(deps, principalOf(req)),
    );

    r.patch(
      '/auth/passkeys/:id',
      {
        onRequest: [enabled, pending],
        schema: {
          tags,
          summary: 'Rename a passkey',
          params: idParam,
          body: renameBody,
          response: { 200: z.object({ passkey: passkeyJsonSchema }), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => renamePasskey(deps, principalOf(req), req.params.id, req.body.name),
    );

    r.delete(
      '/auth/passkeys/:id',
      {
        onRequest: [enabled, pending],
        schema: {
          tags,
          summary: 'Delete a passkey (current password)',
          params: idParam,
          body: deletePasskeyBody,
          response: { 200: z.object({ success: z.literal(true) }), ...errors(400, 404, 429), ...authErrors },
        },
      },
      async (req) => {
        await deletePasskey(deps, principalOf(req), req.params.id, req.body.currentPassword, metaOf(req));
        return { success: true as const };
      },
    );
  };
}

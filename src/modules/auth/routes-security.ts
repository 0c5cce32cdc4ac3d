// Account security: passkey-first sign-in, step-up, going passwordless, sessions you can see and end.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { principalOf } from '../../http/guards.js';
import { metaOf } from '../../http/meta.js';
import { authErrors, errors, idParam } from '../../http/schemas.js';
import { authenticationCredential, sendStepUpSms, sixDigits } from '../mfa/index.js';
import { assertionOptions, passwordlessOptions, passwordlessSignIn } from '../passkeys/index.js';
import { reportSession } from './device-report.js';
import { presentedPasswordField, respondWithTokens, tokenResponse } from '../identity/index.js';
import { endOtherSessions, endOwnSession, listOwnSessions, sessionJson } from './session-list.js';
import { removePassword, stepUp } from './step-up-service.js';
import { success } from './schemas.js';

const exactlyOne = (b: Record<string, unknown>) => Object.values(b).filter((v) => v !== undefined).length === 1;
const stepUpBody = z
  .strictObject({
    password: presentedPasswordField.optional(),
    code: sixDigits.optional(),
    credential: authenticationCredential.optional(),
  })
  .refine(exactlyOne, { message: 'Give exactly one of password, code or credential' })
  .meta({ minProperties: 1, maxProperties: 1 });
const removePasswordBody = z
  .strictObject({ code: sixDigits.optional(), credential: authenticationCredential.optional() })
  .refine(exactlyOne, { message: 'Give exactly one of code or credential' })
  .meta({ minProperties: 1, maxProperties: 1 });
const stepUpResponse = z.object({
  accessToken: z.string(),
  tokenType: z.literal('Bearer'),
  expiresIn: z.number().int(),
  authTime: z.string(),
});
const options = z.object({ options: z.record(z.string(), z.unknown()) });
const credentialBody = z.strictObject({ credential: authenticationCredential });
const reportBody = z.strictObject({ token: z.string().min(16).max(512) });

export function authSecurityRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const auth = deps.authenticate();
    const pending = deps.authenticate({ allowPendingMfaEnrollment: true });
    const passkeysOn = async () => {
      if (!deps.config.enable2fa) throw new AppError('not_found', 'Passkeys are turned off.');
    };
    const limitOptions = deps.limits.guard('login', (req) => `passkey-options:${req.ip}`);
    const limitSignIn = deps.limits.guard('login', (req) => `passkey:${req.ip}`);
    const tags = ['auth'];

    // Public: passkey-first sign-in.
    r.post(
      '/auth/passkey/login/options',
      {
        onRequest: [passkeysOn, limitOptions],
        schema: {
          tags,
          operationId: 'passkeyLoginOptions',
          summary: 'Begin a passkey sign-in (no e-mail)',
          description:
            'WebAuthn assertion options with an empty allowCredentials, for conditional mediation (autofill). The challenge is single-use and lives 5 minutes.',
          security: [],
          response: { 200: options, ...errors(404, 429) },
        },
      },
      async () => (await passwordlessOptions(deps)) as unknown as { options: Record<string, unknown> },
    );

    r.post(
      '/auth/passkey/login/verify',
      {
        onRequest: [passkeysOn, limitSignIn],
        schema: {
          tags,
          operationId: 'passkeyLoginVerify',
          summary: 'Complete a passkey sign-in',
          description:
            'Verifies a user-verified assertion of a discoverable passkey and answers the token response with mfa true.',
          security: [],
          body: credentialBody,
          response: { 200: tokenResponse, ...errors(400, 401, 404, 429) },
        },
      },
      async (req, reply) =>
        respondWithTokens(deps, reply, await passwordlessSignIn(deps, req.body.credential as never, metaOf(req))),
    );

    r.post(
      '/auth/sessions/report',
      {
        schema: {
          tags,
          operationId: 'reportSession',
          summary: '"This was not me": end the reported session and start a password reset',
          description:
            'Takes the single-use token of a new-device mail; ends that session and mails a password reset link.',
          security: [],
          body: reportBody,
          response: { 200: success, ...errors(400) },
        },
      },
      async (req) => {
        await reportSession(deps, req.body.token, metaOf(req));
        return { success: true as const };
      },
    );

    // Signed in: step-up and going passwordless.
    r.post(
      '/auth/step-up/options',
      {
        onRequest: [passkeysOn, auth],
        schema: {
          tags,
          operationId: 'stepUpOptions',
          summary: 'WebAuthn options to prove presence with one of your passkeys',
          description: 'For POST /auth/step-up and DELETE /auth/password with a credential.',
          response: { 200: options, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) =>
        (await assertionOptions(deps, 'webauthn_reauth', principalOf(req).userId)) as unknown as {
          options: Record<string, unknown>;
        },
    );

    r.post(
      '/auth/step-up/sms',
      {
        onRequest: [auth],
        schema: {
          tags,
          operationId: 'stepUpSms',
          summary: 'Send a code to your verified phone to prove presence',
          description:
            'For POST /auth/step-up with `code`, when a step_up_required answer lists `sms`. The code lives 5 minutes and works once; sends are limited per session and per phone number.',
          response: {
            200: z.object({ success: z.literal(true), phoneLast4: z.string() }),
            ...errors(400, 403, 404, 429),
            ...authErrors,
          },
        },
      },
      async (req) => sendStepUpSms(deps, principalOf(req)),
    );

    r.post(
      '/auth/step-up',
      {
        onRequest: [auth],
        schema: {
          tags,
          operationId: 'stepUp',
          summary: 'Prove presence again (password, TOTP or SMS code, or passkey)',
          description:
            'Renews the session auth_time used by risky routes (STEP_UP_MAX_AGE) and answers a fresh access token. The accepted methods are those a step_up_required answer lists.',
          body: stepUpBody,
          response: { 200: stepUpResponse, ...errors(400, 429), ...authErrors },
        },
      },
      async (req) => stepUp(deps, principalOf(req), req.body, metaOf(req)),
    );

    r.delete(
      '/auth/password',
      {
        onRequest: [passkeysOn, auth],
        schema: {
          tags,
          operationId: 'removePassword',
          summary: 'Go passwordless: remove your password',
          description:
            'Needs a TOTP code or a passkey assertion, and at least two passkeys or a passkey and another factor the policy allows; else 403 last_sign_in_method.',
          body: removePasswordBody,
          response: { 200: success, ...errors(400, 404, 409, 429), ...authErrors },
        },
      },
      async (req) => {
        await removePassword(deps, principalOf(req), req.body, metaOf(req));
        return { success: true as const };
      },
    );

    // Signed in: your sessions.
    r.get(
      '/auth/sessions',
      {
        onRequest: [pending],
        schema: {
          tags,
          operationId: 'listSessions',
          summary: 'Your live sessions',
          description:
            'Each sign-in with its address, browser and OS (parsed from the user agent), method, MFA and whether it is the calling one.',
          response: { 200: z.object({ data: z.array(sessionJson) }), ...authErrors },
        },
      },
      async (req) => listOwnSessions(deps, principalOf(req)),
    );

    r.delete(
      '/auth/sessions/:id',
      {
        onRequest: [pending],
        schema: {
          tags,
          operationId: 'endSession',
          summary: 'End one of your sessions',
          description: 'Its tokens fail on the next request on every instance.',
          params: idParam,
          response: { 200: success, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => {
        await endOwnSession(deps, principalOf(req), req.params.id, metaOf(req));
        return { success: true as const };
      },
    );

    r.delete(
      '/auth/sessions',
      {
        onRequest: [pending],
        schema: {
          tags,
          operationId: 'endOtherSessions',
          summary: 'End every session but the calling one',
          response: { 200: z.object({ success: z.literal(true), revoked: z.number().int() }), ...authErrors },
        },
      },
      async (req) => ({ success: true as const, ...(await endOtherSessions(deps, principalOf(req), metaOf(req))) }),
    );
  };
}

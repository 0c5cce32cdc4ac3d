// Public sign-in surface: nothing here runs with a caller's tenant context.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { metaOf } from '../../http/meta.js';
import { errors } from '../../http/schemas.js';
import { assertCsrf, REFRESH_COOKIE, respondWithTokens, tokenResponse } from '../identity/index.js';
import { confirmEmail } from './email-proof.js';
import { acceptInvite, previewInvite } from './invites.js';
import { login } from './login-service.js';
import { forgotPassword, resetPassword } from './password-service.js';
import { markRotationDelivered, refresh } from './refresh-service.js';
import { countRegistrationAttempt, register, registerPartner } from './registration-service.js';
import {
  acceptInviteBody,
  forgotPasswordBody,
  invitePreview,
  invitePreviewBody,
  loginBody,
  mfaChallenge,
  registerBody,
  registerPartnerBody,
  resetPasswordBody,
  success,
  verifyEmailBody,
  verifyEmailResult,
} from './schemas.js';

export function authPublicRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const { limits } = deps;
    const registrationOpen = async () => {
      if (!deps.config.enableRegistration)
        throw new AppError(
          'not_found',
          'Registration is not enabled: the operator sets ENABLE_REGISTRATION=true to open it (the first partner is created with the setup link or `npx gatehouse setup`).',
        );
    };

    r.post(
      '/auth/register',
      {
        onRequest: [registrationOpen],
        schema: {
          tags: ['auth'],
          summary: 'Register a standalone account',
          security: [],
          body: registerBody,
          response: { 201: tokenResponse, ...errors(400, 404, 409, 429) },
        },
      },
      async (req, reply) => {
        await countRegistrationAttempt(deps, 'register', req.ip, req.body);
        return reply.code(201).send(await respondWithTokens(deps, reply, await register(deps, req.body, metaOf(req))));
      },
    );

    r.post(
      '/auth/register-partner',
      {
        onRequest: [registrationOpen],
        schema: {
          tags: ['auth'],
          summary: 'Register a partner with its first administrator',
          security: [],
          body: registerPartnerBody,
          response: {
            201: tokenResponse.extend({ partner: z.object({ id: z.uuid(), name: z.string(), slug: z.string() }) }),
            ...errors(400, 404, 409, 429),
          },
        },
      },
      async (req, reply) => {
        await countRegistrationAttempt(deps, 'registerPartner', req.ip, req.body);
        const { issued, partner } = await registerPartner(deps, req.body, metaOf(req));
        return reply.code(201).send({ ...(await respondWithTokens(deps, reply, issued)), partner });
      },
    );

    r.post(
      '/auth/login',
      {
        preHandler: [
          limits.guard('login', (req) => `${req.ip}:${String((req.body as { email: string }).email).toLowerCase()}`),
        ],
        schema: {
          tags: ['auth'],
          summary: 'Sign in with email and password',
          security: [],
          body: loginBody,
          response: { 200: z.union([tokenResponse, mfaChallenge]), ...errors(400, 401, 429) },
        },
      },
      async (req, reply) => {
        const outcome = await login(deps, req.body.email, req.body.password, metaOf(req));
        if (outcome.kind === 'mfa') return outcome.body;
        return respondWithTokens(deps, reply, outcome.issued);
      },
    );

    r.post(
      '/auth/refresh',
      {
        schema: {
          tags: ['auth'],
          summary: 'Rotate the token pair (refresh cookie + x-service-csrf header)',
          security: [],
          response: { 200: tokenResponse, ...errors(401, 403) },
        },
      },
      async (req, reply) => {
        assertCsrf(req, deps.config);
        const token = req.cookies[REFRESH_COOKIE];
        if (!token) throw new AppError('invalid_refresh_token', 'No refresh token cookie.');
        const body = await respondWithTokens(deps, reply, await refresh(deps, token, metaOf(req)));
        await markRotationDelivered(deps, token);
        return body;
      },
    );

    r.post(
      '/auth/forgot-password',
      {
        schema: {
          tags: ['auth'],
          summary: 'Send a reset link (always 200)',
          security: [],
          body: forgotPasswordBody,
          response: { 200: success, ...errors(400) },
        },
      },
      async (req) => {
        await forgotPassword(deps, req.body.email, req.ip);
        return { success: true as const };
      },
    );

    r.post(
      '/auth/reset-password',
      {
        schema: {
          tags: ['auth'],
          summary: 'Set a new password with a reset link',
          security: [],
          body: resetPasswordBody,
          response: { 200: success, ...errors(400) },
        },
      },
      async (req) => {
        await resetPassword(deps, req.body.token, req.body.newPassword, metaOf(req));
        return { success: true as const };
      },
    );

    r.post(
      '/auth/invite/preview',
      {
        schema: {
          tags: ['auth'],
          summary: 'Who an invitation is for',
          description:
            "An invitation into an organisation that its partner's staff made is held (403 msp_access_denied) while the organisation suspends its partner's access.",
          security: [],
          body: invitePreviewBody,
          response: { 200: invitePreview, ...errors(400, 403, 404) },
        },
      },
      async (req) => previewInvite(deps, req.body.token),
    );

    r.post(
      '/auth/accept-invite',
      {
        schema: {
          tags: ['auth'],
          summary: 'Accept an invitation and set a password',
          description:
            "An invitation into an organisation that its partner's staff made cannot be accepted (403 msp_access_denied) while the organisation suspends its partner's access; the link works again once it lifts the suspension.",
          security: [],
          body: acceptInviteBody,
          response: { 200: tokenResponse, ...errors(400, 403, 404) },
        },
      },
      async (req, reply) => respondWithTokens(deps, reply, await acceptInvite(deps, req.body, metaOf(req))),
    );

    r.post(
      '/auth/verify-email',
      {
        schema: {
          tags: ['auth'],
          summary: 'Spend a mailed link: the address is proven, or the login moves to the new address',
          description:
            'The link of POST /auth/verify-email/send, or of a change of address (mailed to the new address). Works once.',
          security: [],
          body: verifyEmailBody,
          response: { 200: verifyEmailResult, ...errors(400, 403, 409) },
        },
      },
      async (req) => confirmEmail(deps, req.body.token, metaOf(req)),
    );
  };
}

// MFA and phone routes (the passkey routes are the passkeys module's). With ENABLE_2FA=false every one of them
// answers 404.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { principalOf, requireMfa } from '../../http/guards.js';
import { metaOf } from '../../http/meta.js';
import { authErrors, errors } from '../../http/schemas.js';
import { REFRESH_COOKIE, respondWithTokens, tokenResponse } from '../identity/index.js';
import { twoFactorOn } from './enabled.js';
import {
  disableBody,
  enableBody,
  phoneConfirmBody,
  phoneVerifyBody,
  recoveryCodesResponse,
  setupResponse,
  smsSendBody,
  verifyBody,
} from './schemas.js';
import { confirmTotpSetup, disableMfa, rotateRecoveryCodes, startTotpSetup } from './setup-service.js';
import { confirmPhone, enableSmsMfa, sendLoginSms, startPhoneVerification } from './sms-service.js';
import { verifyLoginCode } from './verify-service.js';

const tokensWithCodes = tokenResponse.extend({ recoveryCodes: z.array(z.string()) });

export function mfaRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const enabled = twoFactorOn(deps);
    const pending = deps.authenticate({ allowPendingMfaEnrollment: true });
    const auth = deps.authenticate();
    const tags = ['mfa'];

    const withCodes = async (reply: FastifyReply, out: Awaited<ReturnType<typeof confirmTotpSetup>>) => ({
      ...(await respondWithTokens(deps, reply, out.issued)),
      recoveryCodes: out.recoveryCodes,
    });

    // Sign-in: the second step, public with a tempToken.
    r.post(
      '/auth/mfa/verify',
      {
        onRequest: [enabled],
        schema: {
          tags,
          summary: 'Complete a sign-in (with tempToken) or confirm a pending TOTP setup (bearer)',
          security: [],
          body: verifyBody,
          response: { 200: z.union([tokensWithCodes, tokenResponse]), ...errors(400, 401, 429), ...authErrors },
        },
      },
      async (req, reply) => {
        if (req.body.tempToken)
          return respondWithTokens(
            deps,
            reply,
            await verifyLoginCode(deps, req.body.tempToken, req.body.code, metaOf(req)),
          );
        await pending(req, reply);
        return withCodes(reply, await confirmTotpSetup(deps, principalOf(req), req.body.code, metaOf(req)));
      },
    );

    r.post(
      '/auth/mfa/sms/send',
      {
        onRequest: [enabled],
        schema: {
          tags,
          summary: 'Send the sign-in code by SMS',
          security: [],
          body: smsSendBody,
          response: { 200: z.object({ success: z.literal(true), phoneLast4: z.string() }), ...errors(400, 401, 429) },
        },
      },
      async (req) => sendLoginSms(deps, req.body.tempToken),
    );

    // Enrolment and management of the caller's own factors (reachable while Force MFA holds the account).
    r.post(
      '/auth/mfa/setup',
      {
        onRequest: [enabled, pending],
        schema: {
          tags,
          summary: 'Begin TOTP setup (valid 10 minutes)',
          response: { 200: setupResponse, ...errors(409), ...authErrors },
        },
      },
      async (req) => startTotpSetup(deps, principalOf(req)),
    );

    r.post(
      '/auth/mfa/enable',
      {
        onRequest: [enabled, pending],
        schema: {
          tags,
          summary: 'Confirm TOTP setup with a code',
          body: enableBody,
          response: { 200: tokensWithCodes, ...errors(400, 401, 429), ...authErrors },
        },
      },
      async (req, reply) =>
        withCodes(reply, await confirmTotpSetup(deps, principalOf(req), req.body.code, metaOf(req))),
    );

    r.post(
      '/auth/mfa/disable',
      {
        onRequest: [enabled, auth],
        schema: {
          tags,
          summary: 'Turn MFA off (password and a current code)',
          body: disableBody,
          response: { 200: tokenResponse, ...errors(400, 401, 409, 429), ...authErrors },
        },
      },
      async (req, reply) =>
        respondWithTokens(
          deps,
          reply,
          // The refresh cookie must be the calling session's own: only then can a replacement reach the client.
          await disableMfa(deps, principalOf(req), req.body, req.cookies[REFRESH_COOKIE], metaOf(req)),
        ),
    );

    r.post(
      '/auth/mfa/recovery-codes',
      {
        onRequest: [enabled, auth, requireMfa()],
        schema: {
          tags,
          summary: 'Replace every recovery code',
          response: { 200: recoveryCodesResponse, ...errors(409), ...authErrors },
        },
      },
      async (req) => ({ recoveryCodes: await rotateRecoveryCodes(deps, principalOf(req), metaOf(req)) }),
    );

    r.post(
      '/auth/phone/verify',
      {
        onRequest: [enabled, pending],
        schema: {
          tags,
          summary: 'Send a verification code to a phone (E.164)',
          body: phoneVerifyBody,
          response: {
            200: z.object({ success: z.literal(true), phoneLast4: z.string() }),
            ...errors(400, 429),
            ...authErrors,
          },
        },
      },
      async (req) => startPhoneVerification(deps, principalOf(req), req.body.phoneNumber),
    );

    r.post(
      '/auth/phone/confirm',
      {
        onRequest: [enabled, pending],
        schema: {
          tags,
          summary: 'Confirm the phone with the code',
          body: phoneConfirmBody,
          response: {
            200: z.object({ success: z.literal(true), phoneVerified: z.boolean(), phoneLast4: z.string() }),
            ...errors(400, 401, 429),
            ...authErrors,
          },
        },
      },
      async (req) => confirmPhone(deps, principalOf(req), req.body.code, metaOf(req)),
    );

    r.post(
      '/auth/mfa/sms/enable',
      {
        onRequest: [enabled, pending],
        schema: {
          tags,
          summary: 'Enable SMS as the second factor',
          response: { 200: tokensWithCodes, ...errors(400), ...authErrors },
        },
      },
      async (req, reply) => withCodes(reply, await enableSmsMfa(deps, principalOf(req), metaOf(req))),
    );
  };
}

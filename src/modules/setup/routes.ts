// First-run setup (public): whether setup is needed, and the single-use link's form posting here.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { metaOf } from '../../http/meta.js';
import { errors } from '../../http/schemas.js';
import { countRegistrationAttempt } from '../auth/index.js';
import { opaqueToken, registerPartnerBody } from '../auth/index.js';
import { respondWithTokens, tokenResponse } from '../identity/index.js';
import { completeSetup, setupNeeded } from './service.js';

export const setupBody = registerPartnerBody.extend({ token: opaqueToken });

export function setupRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();

    r.get(
      '/setup/status',
      {
        schema: {
          operationId: 'getSetupStatus',
          tags: ['setup'],
          summary: 'Whether the first partner still has to be created, and whether registration is open',
          description:
            'Public. `needed` is true until a partner exists; the console then shows its setup page. ' +
            '`registrationOpen` is true when self-service registration is open (`ENABLE_REGISTRATION`); the console ' +
            'offers "Create an account" only then.',
          security: [],
          response: { 200: z.object({ needed: z.boolean(), registrationOpen: z.boolean() }) },
        },
      },
      async () => ({ needed: await setupNeeded(deps.db), registrationOpen: deps.config.enableRegistration }),
    );

    r.post(
      '/setup',
      {
        schema: {
          operationId: 'completeSetup',
          tags: ['setup'],
          summary: 'Create the first partner and its administrator with the setup link',
          description:
            'Public, once: the token is the single-use link printed at start while no partner exists (valid 1 hour). ' +
            'Answers the sign-in tokens of the new administrator, as register-partner does.',
          security: [],
          body: setupBody,
          response: {
            201: tokenResponse.extend({ partner: z.object({ id: z.uuid(), name: z.string(), slug: z.string() }) }),
            ...errors(400, 401, 409, 429),
          },
        },
      },
      async (req, reply) => {
        // Counted like a registration (per address and e-mail, only once the input is valid and strong).
        await countRegistrationAttempt(deps, 'registerPartner', `setup:${req.ip}`, req.body);
        const { issued, partner } = await completeSetup(deps, req.body, metaOf(req));
        return reply.code(201).send({ ...(await respondWithTokens(deps, reply, issued)), partner });
      },
    );
  };
}

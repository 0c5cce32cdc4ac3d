import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../../deps.js';
import { principalOf } from '../../http/guards.js';
import { authErrors, errors } from '../../http/schemas.js';
import { metaOf } from '../../http/meta.js';
import { requireStepUp } from '../../http/step-up.js';
import { currentProfile, userProfile } from '../identity/index.js';
import { updateOwnProfile } from './profile-service.js';
import { updateOwnProfileBody } from './schemas.js';

/** Account surface: the caller's own profile. Reachable while Force MFA holds the account. */
export function userAccountRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const pending = deps.authenticate({ allowPendingMfaEnrollment: true });
    const stepUpOnEmail = requireStepUp(deps, { when: (req) => (req.body as { email?: string }).email !== undefined });

    r.get(
      '/users/me',
      {
        onRequest: [pending],
        schema: {
          tags: ['users'],
          summary: "The caller's profile and permissions",
          response: { 200: userProfile, ...authErrors },
        },
      },
      async (req) => currentProfile(deps.db, principalOf(req)),
    );

    r.patch(
      '/users/me',
      {
        onRequest: [pending],
        preHandler: [stepUpOnEmail],
        schema: {
          tags: ['users'],
          summary: 'Update own profile (a new e-mail takes effect once the link mailed to it is opened)',
          body: updateOwnProfileBody,
          response: { 200: userProfile, ...errors(400), ...authErrors },
        },
      },
      async (req) => updateOwnProfile(deps, principalOf(req), req.body, metaOf(req)),
    );
  };
}

// Account surface of /auth/invitations: the signed-in caller's own pending memberships and its answers to them.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { principalOf } from '../../http/guards.js';
import { metaOf } from '../../http/meta.js';
import { authErrors, errors } from '../../http/schemas.js';
import { acceptedInvitation, acceptLinkBody, invitationIdParam, invitationJson } from './schemas.js';
import { acceptInvitation, acceptInvitationByLink, declineInvitation, listInvitations } from './service.js';

export function invitationRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const auth = deps.authenticate();
    const tags = ['auth'];

    r.get(
      '/auth/invitations',
      {
        onRequest: [auth],
        schema: {
          tags,
          summary: 'Your pending invitations (memberships offered to your account, granting nothing yet)',
          response: { 200: z.object({ data: z.array(invitationJson) }), ...authErrors },
        },
      },
      async (req) => listInvitations(deps, principalOf(req)),
    );

    r.post(
      '/auth/invitations/:id/accept',
      {
        onRequest: [auth],
        schema: {
          tags,
          summary: 'Accept a pending invitation (your e-mail address must be proven)',
          params: invitationIdParam,
          response: { 200: acceptedInvitation, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => acceptInvitation(deps, principalOf(req), req.params.id, metaOf(req)),
    );

    r.post(
      '/auth/invitations/:id/decline',
      {
        onRequest: [auth],
        schema: {
          tags,
          summary: 'Decline a pending invitation (the offered membership is deleted)',
          params: invitationIdParam,
          response: { 200: z.object({ success: z.literal(true) }), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => declineInvitation(deps, principalOf(req), req.params.id, metaOf(req)),
    );

    r.post(
      '/auth/invitations/accept-link',
      {
        onRequest: [auth],
        schema: {
          tags,
          summary: 'Accept the invitation of a mailed link (signed in as the invited account; proves the address)',
          body: acceptLinkBody,
          response: { 200: acceptedInvitation, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => acceptInvitationByLink(deps, principalOf(req), req.body.token, metaOf(req)),
    );
  };
}

// /webhooks: audit webhook subscriptions and their delivery log. authenticate → audit:manage → step-up (creating,
// changing or deleting where the audit trail goes) → schema → handler. By-id routes: the record's tenant decides.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { principalOf, requirePermission } from '../../http/guards.js';
import { metaOf } from '../../http/meta.js';
import { authErrors, errors, page, idParam } from '../../http/schemas.js';
import { requireStepUp } from '../../http/step-up.js';
import { PERMISSIONS as PERMS } from '../../access/catalog.js';
import { findInScope, resolveTarget, WEBHOOK } from '../tenants/index.js';
import {
  createdWebhookJson,
  createWebhookBody,
  deliveryJson,
  deliveryListQuery,
  pingResult,
  redeliverBody,
  redeliverResult,
  updateWebhookBody,
  webhookJson,
  webhookListQuery,
} from './schemas.js';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listDeliveries,
  listWebhooks,
  ping,
  redeliver,
  updateWebhook,
} from './service.js';

const PAYLOAD = [
  'Each delivery is a POST of `{ type: "audit.record", timestamp, data: { webhookId, sequence, record, chain: { seq, prevHash, hash } } }`',
  'signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`; verify with the `standardwebhooks` library and the secret).',
  'Events go out in `sequence` order per subscription, at least once (drop repeats by `webhook-id`), retried with backoff for 24 hours, then dead-lettered.',
].join(' ');

export function webhookRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const auth = deps.authenticate();
    const manage = requirePermission(PERMS.AUDIT_MANAGE);
    const stepUp = requireStepUp(deps);
    const tags = ['webhooks'];
    const byId = async (req: FastifyRequest & { params: { id: string } }) =>
      (await findInScope(deps.db, principalOf(req), WEBHOOK, req.params.id)).target;

    r.post(
      '/webhooks',
      {
        onRequest: [auth, manage],
        preHandler: [stepUp],
        schema: {
          tags,
          operationId: 'createWebhook',
          summary: 'Subscribe a URL to audit events',
          description: `Creates a subscription of the caller's tenant (or, for a partner caller, of the organisation named by orgId). The answer carries the signing secret, once. A partner-wide subscription needs full organisation access. Audited as webhook.create. ${PAYLOAD}`,
          body: createWebhookBody,
          response: { 201: createdWebhookJson, ...errors(400, 404), ...authErrors },
        },
      },
      async (req, reply) => {
        const { orgId, ...input } = req.body;
        const p = principalOf(req);
        return reply
          .code(201)
          .send(await createWebhook(deps, p, await resolveTarget(deps.db, p, orgId), input, metaOf(req)));
      },
    );

    r.get(
      '/webhooks',
      {
        onRequest: [auth, manage],
        schema: {
          tags,
          operationId: 'listWebhooks',
          summary: 'Subscriptions of a tenant',
          description:
            "The caller's tenant's subscriptions, or those of the organisation named by ?orgId= (keyset pages). Secrets are never listed.",
          querystring: webhookListQuery,
          response: { 200: page(webhookJson), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => {
        const p = principalOf(req);
        return listWebhooks(deps, p, await resolveTarget(deps.db, p, req.query.orgId), req.query);
      },
    );

    r.get(
      '/webhooks/:id',
      {
        onRequest: [auth, manage],
        schema: {
          tags,
          operationId: 'getWebhook',
          summary: 'A subscription',
          description: 'The subscription without its secret.',
          params: idParam,
          response: { 200: webhookJson, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => getWebhook(deps, principalOf(req), await byId(req), req.params.id),
    );

    r.patch(
      '/webhooks/:id',
      {
        onRequest: [auth, manage],
        preHandler: [stepUp],
        schema: {
          tags,
          operationId: 'updateWebhook',
          summary: 'Change a subscription',
          description:
            'Changes the URL (checked again), the event prefixes, the description, or pauses it (`active: false`: no new events are queued, queued ones wait). Audited as webhook.update.',
          params: idParam,
          body: updateWebhookBody,
          response: { 200: webhookJson, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => updateWebhook(deps, principalOf(req), await byId(req), req.params.id, req.body, metaOf(req)),
    );

    r.delete(
      '/webhooks/:id',
      {
        onRequest: [auth, manage],
        preHandler: [stepUp],
        schema: {
          tags,
          operationId: 'deleteWebhook',
          summary: 'Delete a subscription',
          description:
            'Deletes the subscription with its queued deliveries and its delivery log. Audited as webhook.delete.',
          params: idParam,
          response: { 200: z.object({ success: z.literal(true) }), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => {
        await deleteWebhook(deps, principalOf(req), await byId(req), req.params.id, metaOf(req));
        return { success: true as const };
      },
    );

    r.get(
      '/webhooks/:id/deliveries',
      {
        onRequest: [auth, manage],
        schema: {
          tags,
          operationId: 'listWebhookDeliveries',
          summary: 'The delivery log of a subscription',
          description:
            'Deliveries newest event first (keyset pages), each with its status (pending, delivered, failed = dead-lettered), attempts, the last HTTP status and error.',
          params: idParam,
          querystring: deliveryListQuery,
          response: { 200: page(deliveryJson), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => listDeliveries(deps, principalOf(req), await byId(req), req.params.id, req.query),
    );

    r.post(
      '/webhooks/:id/redeliver',
      {
        onRequest: [auth, manage],
        schema: {
          tags,
          operationId: 'redeliverWebhook',
          summary: 'Queue deliveries again',
          description:
            'Queues one delivery (deliveryId, any status) or every failed one (no deliveryId) again with a fresh 24-hour retry window; they keep their sequence and go out before later events. Audited as webhook.redeliver.',
          params: idParam,
          body: redeliverBody,
          response: { 200: redeliverResult, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) =>
        redeliver(deps, principalOf(req), await byId(req), req.params.id, req.body.deliveryId, metaOf(req)),
    );

    r.post(
      '/webhooks/:id/ping',
      {
        onRequest: [auth, manage],
        schema: {
          tags,
          operationId: 'pingWebhook',
          summary: 'Send a signed test event',
          description:
            'POSTs a signed `{ type: "webhook.ping" }` to the URL now (not queued, not numbered) and answers what the receiver said; refusals of the outbound guard (private address, http, redirect) are reported as ok: false.',
          params: idParam,
          response: { 200: pingResult, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => ping(deps, principalOf(req), await byId(req), req.params.id),
    );
  };
}

// Request and response shapes of /webhooks. The signing secret appears in the create answer only.
import { z } from 'zod';

/** An action prefix ("role.", "auth.login.") or "*" for every event. */
const eventPrefix = z
  .string()
  .max(100)
  .regex(
    /^(\*|[a-z][a-z0-9_]*(\.[a-z0-9_]*)*)$/,
    'An action prefix such as "role." or "auth.login", or "*" for every event',
  )
  .meta({ examples: ['role.', 'auth.login', '*'] });

const url = z
  .url({ protocol: /^https?$/, message: 'An absolute https URL' })
  .max(2048)
  .meta({
    description: 'Where deliveries are POSTed: https, a public address, no redirects.',
    examples: ['https://siem.example.com/hooks/gatehouse'],
  });
const events = z.array(eventPrefix).min(1).max(50).meta({
  description: 'Action prefixes of the audit events to deliver (`"role."` matches `role.create`); `"*"` = every event.',
});

export const createWebhookBody = z.strictObject({
  url,
  events,
  orgId: z.uuid().optional().meta({
    description:
      "A partner caller's organisation to subscribe to; omitted = the caller's own tenant (for a partner: every event of the partner and its organisations).",
  }),
  description: z.string().trim().max(500).optional(),
});

export const updateWebhookBody = z
  .strictObject({
    url: url.optional(),
    events: events.optional(),
    description: z.string().trim().max(500).nullable().optional(),
    active: z
      .boolean()
      .optional()
      .meta({ description: 'false pauses the subscription: no new events are queued for it, queued ones wait.' }),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'Nothing to change' });

export const webhookJson = z
  .object({
    id: z.uuid(),
    partnerId: z.uuid(),
    orgId: z
      .uuid()
      .nullable()
      .meta({ description: 'null: a partner-wide subscription (the partner and all its organisations).' }),
    url: z.string(),
    events: z.array(z.string()),
    description: z.string().nullable(),
    active: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Webhook' });

export const createdWebhookJson = webhookJson
  .extend({
    secret: z.string().meta({
      description:
        'The signing secret (`whsec_...`, Standard Webhooks). Shown once: store it now; it is never returned again.',
    }),
  })
  .meta({ id: 'CreatedWebhook' });

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;

export const deliveryJson = z
  .object({
    id: z.uuid().meta({
      description: 'Also the `webhook-id` header: the same on every attempt, so a receiver can drop repeats.',
    }),
    webhookId: z.uuid(),
    sequence: z
      .number()
      .int()
      .meta({ description: "The event's position in this subscription (1, 2, 3 ...): delivered in this order." }),
    auditId: z.uuid(),
    action: z.string(),
    status: z.enum(DELIVERY_STATUSES).meta({
      description: '`failed`: dead-lettered after the retry window; `POST /webhooks/{id}/redeliver` queues it again.',
    }),
    attempts: z.number().int(),
    nextAttemptAt: z.string().nullable(),
    lastAttemptAt: z.string().nullable(),
    lastStatus: z
      .number()
      .int()
      .nullable()
      .meta({ description: "The receiver's HTTP status at the last attempt (null: no answer)." }),
    lastError: z.string().nullable(),
    createdAt: z.string(),
    deliveredAt: z.string().nullable(),
    failedAt: z.string().nullable(),
  })
  .meta({ id: 'WebhookDelivery' });

export const deliveryListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional(),
  status: z.enum(DELIVERY_STATUSES).optional(),
  orgId: z.uuid().optional().describe('Optional: must name the organisation the subscription belongs to'),
});

export const webhookListQuery = z.strictObject({
  orgId: z.uuid().optional().describe("A partner caller's organisation; omitted = the caller's own tenant"),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional(),
});

export const redeliverBody = z.strictObject({
  deliveryId: z
    .uuid()
    .optional()
    .meta({ description: 'One delivery (any status) to send again; omitted = every failed (dead-lettered) delivery.' }),
});
export const redeliverResult = z.object({ queued: z.number().int().meta({ description: 'Deliveries queued again.' }) });

export const pingResult = z.object({
  ok: z.boolean(),
  status: z.number().int().nullable().meta({ description: "The receiver's HTTP status (null: no answer)." }),
  error: z.string().nullable(),
});

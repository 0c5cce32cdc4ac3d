import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  index,
  integer,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
  varchar,
} from 'drizzle-orm/pg-core';
import { users } from './identity.js';
import { organizations, partners, timestamps } from './tenants.js';

/**
 * Audit webhook subscriptions: a partner's (every event of the partner and its organisations) or an
 * organisation's (that organisation's events). `events` are action prefixes ("role.", "auth.login"; "*" = all).
 * The signing secret is sealed with the secret box. `lastSequence` numbers the subscription's events 1, 2, 3 ...
 */
export const webhooks = pgTable(
  'webhooks',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    orgId: uuid('org_id').references(() => organizations.id, { onDelete: 'cascade' }),
    url: varchar('url', { length: 2048 }).notNull(),
    events: text('events').array().notNull(),
    description: varchar('description', { length: 500 }),
    secretSealed: text('secret_sealed').notNull(),
    active: boolean('active').notNull().default(true),
    lastSequence: bigint('last_sequence', { mode: 'number' }).notNull().default(0),
    createdBy: uuid('created_by').references(() => users.id, { onDelete: 'set null' }),
    /** Made by someone acting for the partner (a partner member, a partner credential): the customer's controls hold it. */
    madeByPartner: boolean('made_by_partner').notNull().default(false),
    ...timestamps,
  },
  (t) => [index('webhooks_partner_idx').on(t.partnerId), index('webhooks_org_idx').on(t.orgId)],
);

/**
 * One audit record to one subscription: written in the transaction of the record, delivered in `sequence` order
 * (a delivery is claimable only while no earlier one of its subscription is pending), retried with backoff until
 * `deadline`, then `failed` (the dead letter). Delivered and failed rows are the subscription's delivery log.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    webhookId: uuid('webhook_id')
      .notNull()
      .references(() => webhooks.id, { onDelete: 'cascade' }),
    sequence: bigint('sequence', { mode: 'number' }).notNull(),
    /** The audit record (audit_logs.id); read when sent, so the payload is the record as stored. */
    auditId: uuid('audit_id').notNull(),
    action: varchar('action', { length: 100 }).notNull(),
    status: varchar('status', { length: 16 }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    notBefore: timestamp('not_before', { withTimezone: true, precision: 3 }).notNull(),
    leasedUntil: timestamp('leased_until', { withTimezone: true, precision: 3 }),
    /** The end of the retry window: a failure after it dead-letters the delivery. */
    deadline: timestamp('deadline', { withTimezone: true, precision: 3 }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    deliveredAt: timestamp('delivered_at', { withTimezone: true, precision: 3 }),
    failedAt: timestamp('failed_at', { withTimezone: true, precision: 3 }),
    lastAttemptAt: timestamp('last_attempt_at', { withTimezone: true, precision: 3 }),
    /** The receiver's HTTP status at the last attempt (null: no answer). */
    lastStatus: integer('last_status'),
    lastError: varchar('last_error', { length: 300 }),
  },
  (t) => [
    uniqueIndex('webhook_deliveries_sequence_key').on(t.webhookId, t.sequence),
    index('webhook_deliveries_pending_idx').on(t.webhookId, t.sequence).where(sql`${t.status} = 'pending'`),
    index('webhook_deliveries_due_idx').on(t.notBefore).where(sql`${t.status} = 'pending'`),
    check('webhook_deliveries_status', sql`${t.status} in ('pending', 'delivered', 'failed')`),
  ],
);

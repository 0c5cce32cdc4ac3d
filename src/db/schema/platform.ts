import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
  varchar,
} from 'drizzle-orm/pg-core';
import { auditResult } from './enums.js';

/**
 * Append-only audit trail (triggers refuse UPDATE and DELETE). Each partner's records form a hash chain:
 * hash = SHA-256(prev_hash || canonical content). No foreign keys: the record outlives what it describes.
 */
export const auditLogs = pgTable(
  'audit_logs',
  {
    seq: bigserial('seq', { mode: 'number' }).primaryKey(),
    id: uuid('id').notNull().defaultRandom(),
    at: timestamp('at', { withTimezone: true, precision: 3 }).notNull(),
    action: varchar('action', { length: 100 }).notNull(),
    result: auditResult('result').notNull(),
    actorUserId: uuid('actor_user_id'),
    actorEmail: varchar('actor_email', { length: 255 }),
    partnerId: uuid('partner_id'),
    orgId: uuid('org_id'),
    resourceType: varchar('resource_type', { length: 64 }),
    resourceId: varchar('resource_id', { length: 255 }),
    ip: varchar('ip', { length: 45 }),
    userAgent: text('user_agent'),
    details: jsonb('details').notNull().default({}),
    prevHash: text('prev_hash'),
    hash: text('hash').notNull(),
    /** Written while the organisation suspended its partner's access: never shown or sent to the partner. */
    partnerHidden: boolean('partner_hidden').notNull().default(false),
    /** The actor spoke for the partner (a partner member, partner service account or partner-made credential). */
    byPartner: boolean('by_partner').notNull().default(false),
  },
  (t) => [
    uniqueIndex('audit_logs_id_key').on(t.id),
    index('audit_logs_partner_seq_idx').on(t.partnerId, t.seq),
    index('audit_logs_org_seq_idx').on(t.orgId, t.seq),
    index('audit_logs_action_idx').on(t.action),
  ],
);

/** Ed25519 signing keys for access tokens; the private JWK is encrypted with the secret box. */
export const signingKeys = pgTable(
  'signing_keys',
  {
    kid: varchar('kid', { length: 64 }).primaryKey(),
    alg: varchar('alg', { length: 16 }).notNull().default('EdDSA'),
    publicJwk: jsonb('public_jwk').notNull(),
    privateJwkEnc: text('private_jwk_enc').notNull(),
    active: boolean('active').notNull().default(true),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    retiredAt: timestamp('retired_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('signing_keys_one_active').on(t.active).where(sql`${t.active}`)],
);

/** Sliding-window rate-limit log when no Redis is configured. */
export const rateLimitHits = pgTable(
  'rate_limit_hits',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    key: varchar('key', { length: 512 }).notNull(),
    at: timestamp('at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [index('rate_limit_hits_key_at_idx').on(t.key, t.at)],
);

/** Short-lived shared state (single-use markers, counters) when no Redis is configured. */
export const kvEntries = pgTable('kv_entries', {
  key: varchar('key', { length: 512 }).primaryKey(),
  value: jsonb('value').notNull(),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
});

/**
 * One row. epoch is bumped in the same transaction as any change to roles, parents, role permissions or
 * assignments; every request reads it with its session check, so permission caches on every instance
 * notice the change on the next request.
 */
export const authzState = pgTable(
  'authz_state',
  {
    id: bigint('id', { mode: 'number' }).primaryKey(),
    epoch: bigint('epoch', { mode: 'number' }).notNull().default(0),
  },
  (t) => [check('authz_state_singleton', sql`${t.id} = 1`)],
);

/**
 * One row. The decision epoch: bumped by database triggers (statement level) on every change to what an access decision
 * reads (memberships and their restrictions, accounts, service accounts, just-in-time grants, relationships, tenant
 * settings, where a device, group, site or script lives, group membership, and authz_state itself). The authorization
 * API answers it with each decision, so a caller may cache decisions until it moves.
 */
export const decisionEpoch = pgTable(
  'decision_epoch',
  {
    id: bigint('id', { mode: 'number' }).primaryKey(),
    epoch: bigint('epoch', { mode: 'number' }).notNull().default(0),
  },
  (t) => [check('decision_epoch_singleton', sql`${t.id} = 1`)],
);

/**
 * Mail waiting to be sent (transactional outbox). A row is written in the same transaction as the change that
 * calls for the mail, so a crash never loses one; the message (links carry tokens) is sealed with the secret box.
 * A sender claims due rows for a lease, deletes them once the SMTP server accepted them, and backs off on failure.
 */
export const mailOutbox = pgTable(
  'mail_outbox',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    template: varchar('template', { length: 64 }).notNull(),
    sealed: text('sealed').notNull(),
    attempts: integer('attempts').notNull().default(0),
    notBefore: timestamp('not_before', { withTimezone: true, precision: 3 }).notNull(),
    leasedUntil: timestamp('leased_until', { withTimezone: true, precision: 3 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    failedAt: timestamp('failed_at', { withTimezone: true, precision: 3 }),
    lastError: varchar('last_error', { length: 300 }),
  },
  (t) => [index('mail_outbox_due_idx').on(t.notBefore).where(sql`${t.failedAt} is null`)],
);

import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  index,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
  varchar,
} from 'drizzle-orm/pg-core';
import { roles, users } from './identity.js';
import { organizations, partners, timestamps } from './tenants.js';

/**
 * A machine identity of a partner (org_id null) or of one of its organisations, holding one role there. It has no
 * password and no session: it authenticates with its keys only.
 */
export const serviceAccounts = pgTable(
  'service_accounts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** OAuth client_id (client_credentials); public, never a secret. */
    clientId: varchar('client_id', { length: 64 }).notNull(),
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    orgId: uuid('org_id').references(() => organizations.id, { onDelete: 'cascade' }),
    name: varchar('name', { length: 255 }).notNull(),
    description: text('description'),
    roleId: uuid('role_id')
      .notNull()
      .references(() => roles.id, { onDelete: 'restrict' }),
    disabled: boolean('disabled').notNull().default(false),
    createdBy: uuid('created_by').references(() => users.id, { onDelete: 'set null' }),
    /** Made by someone acting for the partner (a partner member, a partner credential): the customer's controls hold it. */
    madeByPartner: boolean('made_by_partner').notNull().default(false),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('service_accounts_client_id_key').on(t.clientId),
    uniqueIndex('service_accounts_partner_name_key')
      .on(t.partnerId, sql`lower(${t.name})`)
      .where(sql`${t.orgId} is null`),
    uniqueIndex('service_accounts_org_name_key').on(t.orgId, sql`lower(${t.name})`).where(sql`${t.orgId} is not null`),
    index('service_accounts_partner_created_idx').on(t.partnerId, t.createdAt, t.id),
    index('service_accounts_role_idx').on(t.roleId),
    check('service_accounts_name_nonblank', sql`length(btrim(${t.name})) > 0`),
  ],
);

/**
 * API keys: `gh_<environment>_<prefix>_<secret>`. Only the SHA-256 of the whole key is stored; `prefix` (the first
 * 12 hex digits of the id) finds the row without revealing anything about the secret.
 */
export const serviceAccountKeys = pgTable(
  'service_account_keys',
  {
    id: uuid('id').primaryKey(),
    serviceAccountId: uuid('service_account_id')
      .notNull()
      .references(() => serviceAccounts.id, { onDelete: 'cascade' }),
    prefix: varchar('prefix', { length: 16 }).notNull(),
    environment: varchar('environment', { length: 16 }).notNull(),
    keyHash: varchar('key_hash', { length: 64 }).notNull(),
    name: varchar('name', { length: 255 }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    /** CIDR blocks (IPv4 and IPv6) the key may be used from; empty = anywhere. */
    allowedCidrs: jsonb('allowed_cidrs').$type<string[]>().notNull().default([]),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    lastUsedIp: varchar('last_used_ip', { length: 45 }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    createdBy: uuid('created_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('service_account_keys_prefix_key').on(t.prefix),
    index('service_account_keys_account_created_idx').on(t.serviceAccountId, t.createdAt, t.id),
    check('service_account_keys_hash_format', sql`${t.keyHash} ~ '^[0-9a-f]{64}$'`),
  ],
);

/** Every address a key was used from: a use from an address not in here is audited (once, by the insert that adds it). */
export const serviceAccountKeyIps = pgTable(
  'service_account_key_ips',
  {
    keyId: uuid('key_id')
      .notNull()
      .references(() => serviceAccountKeys.id, { onDelete: 'cascade' }),
    ip: varchar('ip', { length: 45 }).notNull(),
    firstSeenAt: timestamp('first_seen_at', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.keyId, t.ip] })],
);

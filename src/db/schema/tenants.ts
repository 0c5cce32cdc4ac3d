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
import { tenantStatus } from './enums.js';

const timestamps = {
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
};
export { timestamps };

/** A freeze in force on a tenant: why, by whom (by name), from which side, since when. */
export interface FreezeRecord {
  reason: string;
  at: string;
  /** The side that set it; only that side lifts it. */
  side: 'partner' | 'organization';
  byType: 'user' | 'service_account';
  byId: string;
  byName: string;
}

export const partners = pgTable(
  'partners',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    name: varchar('name', { length: 255 }).notNull(),
    slug: varchar('slug', { length: 100 }).notNull(),
    status: tenantStatus('status').notNull().default('active'),
    settings: jsonb('settings').notNull().default({}),
    /** A freeze of every destructive permission of the partner's staff and service accounts (null: none). */
    freeze: jsonb('freeze').$type<FreezeRecord>(),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('partners_slug_key').on(t.slug),
    check('partners_slug_format', sql`${t.slug} ~ '^[a-z0-9]([a-z0-9-]*[a-z0-9])?$'`),
    check('partners_name_nonblank', sql`length(btrim(${t.name})) > 0`),
  ],
);

export const organizations = pgTable(
  'organizations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'restrict' }),
    name: varchar('name', { length: 255 }).notNull(),
    slug: varchar('slug', { length: 100 }).notNull(),
    status: tenantStatus('status').notNull().default('active'),
    settings: jsonb('settings').notNull().default({}),
    /** Whether the organisation sets policies on partner members (mspAccess, an IP allow-list): kept by PostgreSQL. */
    setsPartnerPolicies: boolean('sets_partner_policies')
      .notNull()
      .generatedAlwaysAs(
        sql`(settings->>'mspAccess' is not null or jsonb_array_length(coalesce(settings->'security'->'ipAllowlist', '[]'::jsonb)) > 0)`,
      ),
    /** A freeze of every destructive permission in the organisation (null: none). */
    freeze: jsonb('freeze').$type<FreezeRecord>(),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('organizations_partner_slug_key').on(t.partnerId, t.slug),
    index('organizations_partner_name_idx').on(t.partnerId, t.name),
    // Keyset pages of GET /orgs (lower(name), id) within a partner: an index scan in page order.
    index('organizations_partner_lname_id_idx').on(t.partnerId, sql`lower(${t.name})`, t.id),
    // The organisations that set policies on partner members (ORG_POLICIES_SQL in access/repo.ts, read with every
    // partner member's request): usually none, so the per-request read touches no row instead of the partner's all.
    index('organizations_partner_policies_idx').on(t.partnerId).where(sql`${t.setsPartnerPolicies}`),
    check('organizations_slug_format', sql`${t.slug} ~ '^[a-z0-9]([a-z0-9-]*[a-z0-9])?$'`),
    check('organizations_name_nonblank', sql`length(btrim(${t.name})) > 0`),
  ],
);

export const sites = pgTable(
  'sites',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    /** The organisation's partner, set by the database (trigger gh_fill_partner_from_org): never written by the app. */
    partnerId: uuid('partner_id'),
    name: varchar('name', { length: 255 }).notNull(),
    timezone: varchar('timezone', { length: 64 }).notNull().default('UTC'),
    address: text('address'),
    ...timestamps,
  },
  (t) => [
    // Contacts are pinned to a site by name on import, so a name is unique within its organisation.
    uniqueIndex('sites_org_name_key').on(t.orgId, sql`lower(${t.name})`),
    check('sites_name_nonblank', sql`length(btrim(${t.name})) > 0`),
  ],
);

export const deviceGroups = pgTable(
  'device_groups',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    /** The organisation's partner, set by the database (trigger gh_fill_partner_from_org): never written by the app. */
    partnerId: uuid('partner_id'),
    siteId: uuid('site_id').references(() => sites.id, { onDelete: 'cascade' }),
    name: varchar('name', { length: 255 }).notNull(),
    ...timestamps,
  },
  (t) => [uniqueIndex('device_groups_org_name_key').on(t.orgId, sql`lower(${t.name})`)],
);

export const devices = pgTable(
  'devices',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    // NO ACTION (checked at statement end): deleting a site that still holds devices is refused,
    // while deleting the organisation cascades through both.
    siteId: uuid('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'no action' }),
    enrollmentKeyId: uuid('enrollment_key_id'),
    /** The organisation's partner, set by the database on insert (trigger gh_device_partner): never written by the app. */
    partnerId: uuid('partner_id'),
    hostname: varchar('hostname', { length: 255 }).notNull(),
    displayName: varchar('display_name', { length: 255 }),
    osType: varchar('os_type', { length: 32 }).notNull(),
    osVersion: varchar('os_version', { length: 255 }),
    agentVersion: varchar('agent_version', { length: 64 }),
    agentTokenHash: text('agent_token_hash').notNull(),
    enrolledAt: timestamp('enrolled_at', { withTimezone: true }).notNull().defaultNow(),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true }),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('devices_agent_token_hash_key').on(t.agentTokenHash),
    index('devices_org_site_idx').on(t.orgId, t.siteId),
    // Keyset pages of GET /devices (lower(hostname), id): per organisation, and across a partner's organisations.
    index('devices_org_lhostname_id_idx').on(t.orgId, sql`lower(${t.hostname})`, t.id),
    index('devices_lhostname_id_idx').on(sql`lower(${t.hostname})`, t.id),
    // The same pages across one partner's organisations, in page order at any depth.
    index('devices_partner_lhostname_id_idx').on(t.partnerId, sql`lower(${t.hostname})`, t.id),
  ],
);

export const deviceGroupMembers = pgTable(
  'device_group_members',
  {
    deviceId: uuid('device_id')
      .notNull()
      .references(() => devices.id, { onDelete: 'cascade' }),
    groupId: uuid('group_id')
      .notNull()
      .references(() => deviceGroups.id, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.deviceId, t.groupId] }), index('device_group_members_group_idx').on(t.groupId)],
);

/** Inventory and patch state as last reported by the agent; each report replaces the previous one. */
export const deviceInventory = pgTable('device_inventory', {
  deviceId: uuid('device_id')
    .primaryKey()
    .references(() => devices.id, { onDelete: 'cascade' }),
  hardware: jsonb('hardware').notNull().default({}),
  software: jsonb('software').notNull().default([]),
  patches: jsonb('patches').notNull().default([]),
  reportedAt: timestamp('reported_at', { withTimezone: true }).notNull().defaultNow(),
});

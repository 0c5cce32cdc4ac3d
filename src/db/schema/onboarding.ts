import { sql } from 'drizzle-orm';
import {
  check,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  unique,
  uniqueIndex,
  uuid,
  varchar,
} from 'drizzle-orm/pg-core';
import { configKind, customFieldEntity, customFieldType, scriptAvailability, scriptLanguage } from './enums.js';
import { users } from './identity.js';
import { deviceGroups, organizations, partners, sites, timestamps } from './tenants.js';

export const enrollmentKeys = pgTable(
  'enrollment_keys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    /** The organisation's partner, set by the database (trigger gh_fill_partner_from_org): never written by the app. */
    partnerId: uuid('partner_id'),
    siteId: uuid('site_id').references(() => sites.id, { onDelete: 'cascade' }),
    /** The device group an enrolled device joins; a key outlives its group (the device then joins none). */
    deviceGroupId: uuid('device_group_id').references(() => deviceGroups.id, { onDelete: 'set null' }),
    name: varchar('name', { length: 255 }).notNull(),
    keyHash: text('key_hash').notNull(),
    maxUsage: integer('max_usage').notNull().default(1),
    usageCount: integer('usage_count').notNull().default(0),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    createdBy: uuid('created_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('enrollment_keys_key_hash_key').on(t.keyHash),
    index('enrollment_keys_org_idx').on(t.orgId),
    check('enrollment_keys_max_usage_range', sql`${t.maxUsage} between 1 and 1000000`),
    check('enrollment_keys_usage_within_max', sql`${t.usageCount} >= 0 and ${t.usageCount} <= ${t.maxUsage}`),
  ],
);

export const scripts = pgTable(
  'scripts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    orgId: uuid('org_id').references(() => organizations.id, { onDelete: 'cascade' }),
    name: varchar('name', { length: 255 }).notNull(),
    description: text('description'),
    language: scriptLanguage('language').notNull(),
    content: text('content').notNull(),
    parameters: jsonb('parameters').notNull().default([]),
    availability: scriptAvailability('availability').notNull(),
    exitCodeSeverityMapping: jsonb('exit_code_severity_mapping').notNull().default({}),
    createdBy: uuid('created_by').references(() => users.id, { onDelete: 'set null' }),
    ...timestamps,
  },
  (t) => [
    check(
      'scripts_owner_matches_availability',
      sql`(${t.availability} = 'partner' and ${t.orgId} is null) or (${t.availability} = 'organization' and ${t.orgId} is not null)`,
    ),
    check('scripts_content_size', sql`octet_length(${t.content}) <= 1048576`),
    index('scripts_partner_idx').on(t.partnerId),
    index('scripts_org_idx').on(t.orgId),
  ],
);

export const contacts = pgTable(
  'contacts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    /** The organisation's partner, set by the database (trigger gh_fill_partner_from_org): never written by the app. */
    partnerId: uuid('partner_id'),
    /** null = organisation-level contact; a deleted site leaves its contacts at organisation level. */
    siteId: uuid('site_id').references(() => sites.id, { onDelete: 'set null' }),
    externalId: varchar('external_id', { length: 255 }),
    previousId: varchar('previous_id', { length: 255 }),
    firstName: varchar('first_name', { length: 255 }),
    lastName: varchar('last_name', { length: 255 }),
    email: varchar('email', { length: 255 }),
    phone: varchar('phone', { length: 32 }),
    title: varchar('title', { length: 255 }),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('contacts_org_external_id_key').on(t.orgId, t.externalId),
    uniqueIndex('contacts_org_previous_id_key').on(t.orgId, t.previousId),
    index('contacts_org_email_idx').on(t.orgId, sql`lower(${t.email})`),
  ],
);

export const customFieldDefinitions = pgTable(
  'custom_field_definitions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    /** null = partner-wide definition. */
    orgId: uuid('org_id').references(() => organizations.id, { onDelete: 'cascade' }),
    key: varchar('key', { length: 64 }).notNull(),
    name: varchar('name', { length: 255 }).notNull(),
    type: customFieldType('type').notNull(),
    options: jsonb('options'),
    entityType: customFieldEntity('entity_type').notNull(),
    ...timestamps,
  },
  (t) => [
    unique('custom_field_definitions_key').on(t.partnerId, t.orgId, t.entityType, t.key).nullsNotDistinct(),
    check('custom_field_definitions_key_format', sql`${t.key} ~ '^[a-z][a-z0-9_]*$'`),
    check('custom_field_definitions_select_options', sql`(${t.type} = 'select') = (${t.options} is not null)`),
  ],
);

export const customFieldValues = pgTable(
  'custom_field_values',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    definitionId: uuid('definition_id')
      .notNull()
      .references(() => customFieldDefinitions.id, { onDelete: 'cascade' }),
    entityId: uuid('entity_id').notNull(),
    value: jsonb('value').notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    unique('custom_field_values_definition_entity_key').on(t.definitionId, t.entityId),
    index('custom_field_values_entity_idx').on(t.entityId),
  ],
);

/** Partner-wide configuration: owned by the partner (org_id null) or by one organisation. */
export const configItems = pgTable(
  'config_items',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    orgId: uuid('org_id').references(() => organizations.id, { onDelete: 'cascade' }),
    kind: configKind('kind').notNull(),
    name: varchar('name', { length: 255 }).notNull(),
    description: text('description'),
    body: jsonb('body').notNull().default({}),
    ...timestamps,
  },
  (t) => [index('config_items_partner_kind_idx').on(t.partnerId, t.kind), index('config_items_org_idx').on(t.orgId)],
);

import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  timestamp,
  uniqueIndex,
  uuid,
  varchar,
} from 'drizzle-orm/pg-core';
import { roles, users } from './identity.js';
import { organizations, partners, timestamps } from './tenants.js';

/**
 * SCIM bearer tokens: one identity provider's provisioning channel into a partner's staff (org_id null)
 * or one organisation. Only the SHA-256 of the token is kept; `hint` is its first characters, for the list.
 */
export const scimTokens = pgTable(
  'scim_tokens',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    orgId: uuid('org_id').references(() => organizations.id, { onDelete: 'cascade' }),
    name: varchar('name', { length: 255 }).notNull(),
    tokenHash: varchar('token_hash', { length: 64 }).notNull(),
    hint: varchar('hint', { length: 16 }).notNull(),
    /** The role a provisioned user holds until a mapped group gives another. */
    defaultRoleId: uuid('default_role_id')
      .notNull()
      .references(() => roles.id, { onDelete: 'restrict' }),
    /** A new account gets an invitation mail (to set a password); off when the tenant signs in by SSO only. */
    sendInvitations: boolean('send_invitations').notNull().default(true),
    /** Whose permissions bound the roles this token hands out (live: the creator's current membership). */
    createdBy: uuid('created_by').references(() => users.id, { onDelete: 'set null' }),
    /** Made by someone acting for the partner (a partner member, a partner credential): the customer's controls hold it. */
    madeByPartner: boolean('made_by_partner').notNull().default(false),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('scim_tokens_hash_key').on(t.tokenHash),
    index('scim_tokens_partner_created_idx').on(t.partnerId, t.createdAt, t.id),
    index('scim_tokens_role_idx').on(t.defaultRoleId),
    check('scim_tokens_hash_format', sql`${t.tokenHash} ~ '^[0-9a-f]{64}$'`),
    check('scim_tokens_name_nonblank', sql`length(btrim(${t.name})) > 0`),
  ],
);

export interface ScimEmail {
  value: string;
  type?: string;
  primary?: boolean;
}

/** A SCIM User resource: a Gatehouse account provisioned into one tenant (its membership lives in *_users). */
export const scimUsers = pgTable(
  'scim_users',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    orgId: uuid('org_id').references(() => organizations.id, { onDelete: 'cascade' }),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The account was made by this resource (its name follows the IdP); a linked existing account keeps its own. */
    ownsAccount: boolean('owns_account').notNull(),
    userName: varchar('user_name', { length: 255 }).notNull(),
    externalId: varchar('external_id', { length: 255 }),
    displayName: varchar('display_name', { length: 255 }),
    givenName: varchar('given_name', { length: 255 }),
    familyName: varchar('family_name', { length: 255 }),
    emails: jsonb('emails').$type<ScimEmail[]>().notNull().default([]),
    active: boolean('active').notNull(),
    defaultRoleId: uuid('default_role_id')
      .notNull()
      .references(() => roles.id, { onDelete: 'restrict' }),
    /** The membership's site and device-group restrictions while it is suspended (active false). */
    suspended: jsonb('suspended').$type<{
      siteIds: string[] | null;
      deviceGroupIds: string[] | null;
      orgAccess: 'all' | 'selected' | 'none' | 'eligible' | 'all_except';
      orgIds: string[];
    }>(),
    version: integer('version').notNull().default(1),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('scim_users_partner_user_name_key')
      .on(t.partnerId, sql`lower(${t.userName})`)
      .where(sql`${t.orgId} is null`),
    uniqueIndex('scim_users_org_user_name_key')
      .on(t.orgId, sql`lower(${t.userName})`)
      .where(sql`${t.orgId} is not null`),
    uniqueIndex('scim_users_partner_external_id_key')
      .on(t.partnerId, t.externalId)
      .where(sql`${t.orgId} is null and ${t.externalId} is not null`),
    uniqueIndex('scim_users_org_external_id_key')
      .on(t.orgId, t.externalId)
      .where(sql`${t.orgId} is not null and ${t.externalId} is not null`),
    uniqueIndex('scim_users_partner_account_key').on(t.partnerId, t.userId).where(sql`${t.orgId} is null`),
    uniqueIndex('scim_users_org_account_key').on(t.orgId, t.userId).where(sql`${t.orgId} is not null`),
    index('scim_users_partner_created_idx').on(t.partnerId, t.orgId, t.createdAt, t.id),
    index('scim_users_user_idx').on(t.userId),
    index('scim_users_role_idx').on(t.defaultRoleId),
  ],
);

/** A SCIM Group of a tenant; `role_id` maps it to a role there (its members then hold that role). */
export const scimGroups = pgTable(
  'scim_groups',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    orgId: uuid('org_id').references(() => organizations.id, { onDelete: 'cascade' }),
    displayName: varchar('display_name', { length: 255 }).notNull(),
    externalId: varchar('external_id', { length: 255 }),
    roleId: uuid('role_id').references(() => roles.id, { onDelete: 'restrict' }),
    version: integer('version').notNull().default(1),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('scim_groups_partner_name_key')
      .on(t.partnerId, sql`lower(${t.displayName})`)
      .where(sql`${t.orgId} is null`),
    uniqueIndex('scim_groups_org_name_key')
      .on(t.orgId, sql`lower(${t.displayName})`)
      .where(sql`${t.orgId} is not null`),
    index('scim_groups_partner_created_idx').on(t.partnerId, t.orgId, t.createdAt, t.id),
    index('scim_groups_role_idx').on(t.roleId),
    check('scim_groups_name_nonblank', sql`length(btrim(${t.displayName})) > 0`),
  ],
);

export const scimGroupMembers = pgTable(
  'scim_group_members',
  {
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    groupId: uuid('group_id')
      .notNull()
      .references(() => scimGroups.id, { onDelete: 'cascade' }),
    scimUserId: uuid('scim_user_id')
      .notNull()
      .references(() => scimUsers.id, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.groupId, t.scimUserId] }), index('scim_group_members_user_idx').on(t.scimUserId)],
);

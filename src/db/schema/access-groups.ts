// Partner-side access groups: partner staff reach a customer through the groups attached to its relationships. Adding
// a member to a group is the grant; a group may serve one relationship or several; a group mapped to a SCIM group of
// the partner's identity provider takes its members from there. Read with a partner member's session on every request.
import { sql } from 'drizzle-orm';
import { check, index, pgTable, primaryKey, timestamp, uniqueIndex, uuid, varchar } from 'drizzle-orm/pg-core';
import { users } from './identity.js';
import { relationships } from './relationships.js';
import { scimGroups } from './scim.js';
import { partners, timestamps } from './tenants.js';

export const accessGroups = pgTable(
  'access_groups',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    name: varchar('name', { length: 200 }).notNull(),
    /** A partner-level SCIM group whose members are this group's members too (membership follows the IdP). */
    scimGroupId: uuid('scim_group_id').references(() => scimGroups.id, { onDelete: 'set null' }),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('access_groups_partner_name_key').on(t.partnerId, sql`lower(${t.name})`),
    index('access_groups_partner_created_idx').on(t.partnerId, t.createdAt, t.id),
    index('access_groups_scim_idx').on(t.scimGroupId),
    check('access_groups_name_nonblank', sql`length(btrim(${t.name})) > 0`),
  ],
);

/** A partner member added to a group by hand (SCIM-mapped members are read from the SCIM group). */
export const accessGroupMembers = pgTable(
  'access_group_members',
  {
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    groupId: uuid('group_id')
      .notNull()
      .references(() => accessGroups.id, { onDelete: 'cascade' }),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.groupId, t.userId] }), index('access_group_members_user_idx').on(t.userId)],
);

/** The groups through which partner staff use a relationship (none attached: every member the partner lets in). */
export const relationshipAccessGroups = pgTable(
  'relationship_access_groups',
  {
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    relationshipId: uuid('relationship_id')
      .notNull()
      .references(() => relationships.id, { onDelete: 'cascade' }),
    groupId: uuid('group_id')
      .notNull()
      .references(() => accessGroups.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.relationshipId, t.groupId] }),
    index('relationship_access_groups_group_idx').on(t.groupId),
  ],
);

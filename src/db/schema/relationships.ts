// Delegated-access relationships: what an organisation signed that its partner's staff may do in it (a set of the
// partner's roles), where (the whole organisation, or listed sites and device groups) and until when. Read with a
// partner member's session on every request when the partner requires relationships.
import { sql } from 'drizzle-orm';
import { boolean, index, integer, pgEnum, pgTable, timestamp, uuid, varchar } from 'drizzle-orm/pg-core';
import { users } from './identity.js';
import { organizations, partners, timestamps } from './tenants.js';

/** Stored states; `expiring` is derived (active, within 30 days of its end, not auto-extended). */
export const relationshipStatus = pgEnum('relationship_status', [
  'draft',
  'approval_pending',
  'active',
  'declined',
  'terminated',
  'expired',
]);

export const relationships = pgTable(
  'relationships',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    name: varchar('name', { length: 200 }).notNull(),
    /** Partner roles whose permissions staff may use in the organisation (their union). */
    roleIds: uuid('role_ids').array().notNull(),
    /** null: every site (and every device group) of the organisation. */
    siteIds: uuid('site_ids').array(),
    deviceGroupIds: uuid('device_group_ids').array(),
    /** ISO 8601 duration, P1D..P2Y. */
    duration: varchar('duration', { length: 32 }).notNull(),
    autoExtend: boolean('auto_extend').notNull().default(false),
    /**
     * Set when an access group is first attached, never cleared: from then on only members of its groups use it (a
     * relationship that never had one serves every member the partner lets in). Detaching or deleting a group only narrows.
     */
    groupsRequired: boolean('groups_required').notNull().default(false),
    status: relationshipStatus('status').notNull().default('draft'),
    requestExpiresAt: timestamp('request_expires_at', { withTimezone: true }),
    startsAt: timestamp('starts_at', { withTimezone: true }),
    endsAt: timestamp('ends_at', { withTimezone: true }),
    createdBy: uuid('created_by').references(() => users.id, { onDelete: 'set null' }),
    decidedBy: uuid('decided_by').references(() => users.id, { onDelete: 'set null' }),
    terminatedBy: uuid('terminated_by').references(() => users.id, { onDelete: 'set null' }),
    /** The smallest notice (days before the end: 30, 7, 1, 0 at expiry) already mailed for the current end. */
    noticedDays: integer('noticed_days'),
    ...timestamps,
  },
  (t) => [
    index('relationships_partner_idx').on(t.partnerId, t.status),
    index('relationships_org_idx').on(t.orgId, t.status),
    index('relationships_ends_idx').on(t.endsAt).where(sql`${t.status} = 'active'`),
  ],
);

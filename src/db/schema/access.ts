// Just-in-time access to an organisation: a partner member's request, and the grant it yields, which
// widens the member's scope until it expires or is revoked (read with the session on every request).
import { index, integer, pgEnum, pgTable, text, timestamp, uuid, varchar } from 'drizzle-orm/pg-core';
import { users } from './identity.js';
import { organizations, partners, sites } from './tenants.js';

/** Who approves: nobody (granted at once), a Partner Admin, or one of the organisation's own admins. */
export const jitApproval = pgEnum('jit_approval', ['auto', 'partner_admin', 'customer_admin']);
export const accessRequestStatus = pgEnum('access_request_status', ['pending', 'approved', 'denied']);

export const accessRequests = pgTable(
  'access_requests',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    siteId: uuid('site_id').references(() => sites.id, { onDelete: 'cascade' }),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    durationMinutes: integer('duration_minutes').notNull(),
    reason: text('reason').notNull(),
    ticketRef: varchar('ticket_ref', { length: 200 }),
    approval: jitApproval('approval').notNull(),
    status: accessRequestStatus('status').notNull().default('pending'),
    decidedBy: uuid('decided_by').references(() => users.id, { onDelete: 'set null' }),
    decidedAt: timestamp('decided_at', { withTimezone: true }),
    decisionNote: text('decision_note'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('access_requests_partner_status_idx').on(t.partnerId, t.status),
    index('access_requests_org_status_idx').on(t.orgId, t.status),
    index('access_requests_user_idx').on(t.userId),
  ],
);

export const accessGrants = pgTable(
  'access_grants',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    requestId: uuid('request_id')
      .notNull()
      .references(() => accessRequests.id, { onDelete: 'cascade' }),
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    siteId: uuid('site_id').references(() => sites.id, { onDelete: 'cascade' }),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** How it was approved (`customer_admin`: the only kind that lets a member into an organisation under mspAccess approval_required). */
    approval: jitApproval('approval').notNull(),
    approvedBy: uuid('approved_by').references(() => users.id, { onDelete: 'set null' }),
    startsAt: timestamp('starts_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    revokedBy: uuid('revoked_by').references(() => users.id, { onDelete: 'set null' }),
    /** When its expiry was first observed (and audited `access.expire`); set once, by whichever instance sees it first. */
    expiredAt: timestamp('expired_at', { withTimezone: true }),
  },
  (t) => [
    index('access_grants_user_partner_idx').on(t.userId, t.partnerId),
    index('access_grants_org_idx').on(t.orgId),
  ],
);

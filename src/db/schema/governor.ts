// The blast-radius governor: co-sign requests (another Partner Admin lets an over-budget principal take its next few
// destructive actions) and, without Redis, the sliding-window marks its budgets count. Freezes live on the tenant rows
// themselves (partners.freeze, organizations.freeze), which every request's session check already watches.
import { sql } from 'drizzle-orm';
import { index, integer, pgTable, primaryKey, timestamp, uuid, varchar } from 'drizzle-orm/pg-core';
import { users } from './identity.js';
import { partners } from './tenants.js';

/**
 * A principal over one of its budgets asks for a co-signature: pending until `expiresAt`, then approved by another
 * Partner Admin of the same partner, after which exactly `actions` further destructive actions pass (`remaining`
 * counts them down) until `unlockExpiresAt`.
 */
export const coSignRequests = pgTable(
  'co_sign_requests',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    principalType: varchar('principal_type', { length: 16 }).notNull().$type<'user' | 'service_account'>(),
    principalId: uuid('principal_id').notNull(),
    principalName: varchar('principal_name', { length: 255 }).notNull(),
    reason: varchar('reason', { length: 500 }).notNull(),
    actions: integer('actions').notNull(),
    remaining: integer('remaining').notNull(),
    status: varchar('status', { length: 16 }).notNull().default('pending').$type<'pending' | 'approved'>(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    approvedBy: uuid('approved_by').references(() => users.id, { onDelete: 'set null' }),
    approvedByName: varchar('approved_by_name', { length: 255 }),
    approvedAt: timestamp('approved_at', { withTimezone: true }),
    unlockExpiresAt: timestamp('unlock_expires_at', { withTimezone: true }),
  },
  (t) => [
    index('co_sign_requests_partner_idx').on(t.partnerId, t.createdAt),
    index('co_sign_requests_principal_idx')
      .on(t.principalId, t.unlockExpiresAt)
      .where(sql`${t.status} = 'approved' and ${t.remaining} > 0`),
  ],
);

/**
 * The database budget store (without Redis): one row per key and member, `at` its latest use. A use of a destructive
 * permission is a member of its own (a fresh id); an organisation or a device is one member however often it is touched.
 */
export const governorMarks = pgTable(
  'governor_marks',
  {
    key: varchar('key', { length: 256 }).notNull(),
    member: varchar('member', { length: 64 }).notNull(),
    at: timestamp('at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.key, t.member] }), index('governor_marks_key_at_idx').on(t.key, t.at)],
);

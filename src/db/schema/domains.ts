import { sql } from 'drizzle-orm';
import { index, pgTable, timestamp, uniqueIndex, uuid, varchar } from 'drizzle-orm/pg-core';
import { domainStatus } from './enums.js';
import { users } from './identity.js';
import { organizations, partners, timestamps } from './tenants.js';

/**
 * A tenant's claim on an e-mail domain, proven by a DNS TXT record. `org_id` null: the partner's own; set: one of its
 * organisations (proven by the partner for it, or by the organisation's admin).
 */
export const domains = pgTable(
  'domains',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    orgId: uuid('org_id').references(() => organizations.id, { onDelete: 'cascade' }),
    /** Lower-case ASCII (an IDN as punycode), no trailing dot. */
    domain: varchar('domain', { length: 253 }).notNull(),
    status: domainStatus('status').notNull().default('pending'),
    /** The TXT value to publish at `_gatehouse-challenge.<domain>`: random per claim, public by design. */
    txtValue: varchar('txt_value', { length: 128 }).notNull(),
    createdBy: uuid('created_by').references(() => users.id, { onDelete: 'set null' }),
    verifiedAt: timestamp('verified_at', { withTimezone: true }),
    ...timestamps,
  },
  (t) => [
    // One tenant at most has proven a domain; claims (pending) may be many.
    uniqueIndex('domains_verified_unique').on(t.domain).where(sql`${t.status} = 'verified'`),
    // One claim per domain within a partner and its organisations.
    uniqueIndex('domains_partner_domain_unique').on(t.partnerId, t.domain),
    index('domains_org_idx').on(t.orgId),
  ],
);

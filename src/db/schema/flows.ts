import { sql } from 'drizzle-orm';
import { check, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { flowKind } from './enums.js';
import { users } from './identity.js';

/**
 * Identity processes as stored flows: a pending MFA login (tempToken), an MFA setup, a WebAuthn challenge,
 * a reset link, an invitation, an SSO exchange code. Each is consumed atomically
 * (UPDATE ... WHERE consumed_at IS NULL RETURNING). The token itself is never stored, only its SHA-256.
 */
export const authFlows = pgTable(
  'auth_flows',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    kind: flowKind('kind').notNull(),
    userId: uuid('user_id').references(() => users.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull(),
    data: jsonb('data').notNull().default({}),
    attempts: integer('attempts').notNull().default(0),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    consumedAt: timestamp('consumed_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('auth_flows_token_hash_key').on(t.tokenHash),
    index('auth_flows_user_kind_idx').on(t.userId, t.kind),
    index('auth_flows_expires_idx').on(t.expiresAt),
    check('auth_flows_attempts_nonneg', sql`${t.attempts} >= 0`),
  ],
);

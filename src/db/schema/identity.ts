import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
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
import { membershipKind, membershipStatus, mfaMethod, orgAccess, roleScope, userStatus } from './enums.js';
import { organizations, partners, timestamps } from './tenants.js';

export const users = pgTable(
  'users',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    email: varchar('email', { length: 255 }).notNull(),
    name: varchar('name', { length: 255 }).notNull(),
    /** The person proved the address (a mailed link opened); an unproven address earns no later invitation's access. */
    emailVerified: boolean('email_verified').notNull().default(false),
    passwordHash: text('password_hash'),
    mfaSecret: text('mfa_secret'),
    mfaEnabled: boolean('mfa_enabled').notNull().default(false),
    mfaRecoveryCodes: jsonb('mfa_recovery_codes').$type<string[]>(),
    /** Last TOTP time step accepted: a code is good once per step. */
    mfaLastTotpStep: bigint('mfa_last_totp_step', { mode: 'number' }),
    phoneNumber: varchar('phone_number', { length: 16 }),
    phoneVerified: boolean('phone_verified').notNull().default(false),
    mfaMethod: mfaMethod('mfa_method'),
    status: userStatus('status').notNull().default('active'),
    avatarUrl: varchar('avatar_url', { length: 2048 }),
    lastLoginAt: timestamp('last_login_at', { withTimezone: true }),
    passwordChangedAt: timestamp('password_changed_at', { withTimezone: true }),
    failedLoginCount: integer('failed_login_count').notNull().default(0),
    lockedUntil: timestamp('locked_until', { withTimezone: true }),
    /** Bumped whenever the password or a factor changes: pending login flows bound to an older value are void. */
    credentialVersion: integer('credential_version').notNull().default(0),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('users_email_lower_key').on(sql`lower(${t.email})`),
    check('users_email_shape', sql`${t.email} ~ '^[^@\\s]+@[^@\\s]+$'`),
    check('users_phone_e164', sql`${t.phoneNumber} is null or ${t.phoneNumber} ~ '^\\+[1-9][0-9]{6,14}$'`),
    check('users_failed_login_count_nonneg', sql`${t.failedLoginCount} >= 0`),
  ],
);

export const roles = pgTable(
  'roles',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    partnerId: uuid('partner_id').references(() => partners.id, { onDelete: 'cascade' }),
    orgId: uuid('org_id').references(() => organizations.id, { onDelete: 'cascade' }),
    parentRoleId: uuid('parent_role_id').references((): any => roles.id, { onDelete: 'restrict' }),
    scope: roleScope('scope').notNull(),
    /** The membership kind the role can be assigned to. */
    appliesTo: membershipKind('applies_to').notNull(),
    name: varchar('name', { length: 100 }).notNull(),
    description: text('description'),
    isSystem: boolean('is_system').notNull().default(false),
    forceMfa: boolean('force_mfa').notNull().default(false),
    /** Holders satisfy MFA with passkeys only (TOTP, SMS and recovery codes do not count). */
    phishingResistantOnly: boolean('phishing_resistant_only').notNull().default(false),
    ...timestamps,
  },
  (t) => [
    check(
      'roles_scope_owner',
      sql`(${t.scope} = 'system' and ${t.isSystem} and ${t.partnerId} is null and ${t.orgId} is null)
       or (${t.scope} = 'partner' and not ${t.isSystem} and ${t.partnerId} is not null and ${t.orgId} is null and ${t.appliesTo} = 'partner')
       or (${t.scope} = 'organization' and not ${t.isSystem} and ${t.orgId} is not null and ${t.appliesTo} = 'organization')`,
    ),
    check('roles_not_own_parent', sql`${t.parentRoleId} is null or ${t.parentRoleId} <> ${t.id}`),
    check('roles_name_nonblank', sql`length(btrim(${t.name})) > 0`),
    uniqueIndex('roles_partner_name_key').on(t.partnerId, sql`lower(${t.name})`).where(sql`${t.scope} = 'partner'`),
    uniqueIndex('roles_org_name_key').on(t.orgId, sql`lower(${t.name})`).where(sql`${t.scope} = 'organization'`),
    index('roles_partner_idx').on(t.partnerId),
    index('roles_org_idx').on(t.orgId),
    index('roles_parent_idx').on(t.parentRoleId),
  ],
);

export const permissions = pgTable(
  'permissions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    resource: varchar('resource', { length: 100 }).notNull(),
    action: varchar('action', { length: 50 }).notNull(),
    description: text('description'),
  },
  (t) => [unique('permissions_resource_action_key').on(t.resource, t.action)],
);

export const rolePermissions = pgTable(
  'role_permissions',
  {
    roleId: uuid('role_id')
      .notNull()
      .references(() => roles.id, { onDelete: 'cascade' }),
    permissionId: uuid('permission_id')
      .notNull()
      .references(() => permissions.id, { onDelete: 'cascade' }),
    constraints: jsonb('constraints'),
  },
  (t) => [
    unique('role_permissions_pk').on(t.roleId, t.permissionId),
    index('role_permissions_perm_idx').on(t.permissionId),
  ],
);

export const partnerUsers = pgTable(
  'partner_users',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    roleId: uuid('role_id')
      .notNull()
      .references(() => roles.id, { onDelete: 'restrict' }),
    /** Active memberships grant; a pending one waits for the account's consent and grants nothing. */
    status: membershipStatus('status').notNull().default('active'),
    /** When a pending membership was offered (the invitation, SCIM or SSO provisioning that created it). */
    invitedAt: timestamp('invited_at', { withTimezone: true }),
    orgAccess: orgAccess('org_access').notNull().default('none'),
    orgIds: uuid('org_ids').array().notNull().default(sql`'{}'::uuid[]`),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    /** When the member was warned that its unused standing access lapses; a use after it starts a new period. */
    lapseWarnedAt: timestamp('lapse_warned_at', { withTimezone: true }),
    /**
     * lower(users.email), the member list's sort key, so a page of a large partner is one index scan in page order.
     * Kept by triggers (migration 0018): set from the user on insert, rewritten when the user's e-mail changes.
     */
    emailKey: varchar('email_key', { length: 255 }).notNull().default(''),
    ...timestamps,
  },
  (t) => [
    unique('partner_users_partner_user_key').on(t.partnerId, t.userId),
    index('partner_users_partner_email_key_idx').on(t.partnerId, t.emailKey, t.userId),
    index('partner_users_user_idx').on(t.userId),
    index('partner_users_role_idx').on(t.roleId),
  ],
);

export const organizationUsers = pgTable(
  'organization_users',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    /** The organisation's partner, set by the database (trigger gh_fill_partner_from_org): never written by the app. */
    partnerId: uuid('partner_id'),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    roleId: uuid('role_id')
      .notNull()
      .references(() => roles.id, { onDelete: 'restrict' }),
    /** Active memberships grant; a pending one waits for the account's consent and grants nothing. */
    status: membershipStatus('status').notNull().default('active'),
    /** When a pending membership was offered (the invitation, SCIM or SSO provisioning that created it). */
    invitedAt: timestamp('invited_at', { withTimezone: true }),
    /** null = every site / device group. */
    siteIds: uuid('site_ids').array(),
    deviceGroupIds: uuid('device_group_ids').array(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    /** lower(users.email), kept by triggers as on partner_users. */
    emailKey: varchar('email_key', { length: 255 }).notNull().default(''),
    ...timestamps,
  },
  (t) => [
    unique('organization_users_org_user_key').on(t.orgId, t.userId),
    index('organization_users_org_email_key_idx').on(t.orgId, t.emailKey, t.userId),
    index('organization_users_user_idx').on(t.userId),
    index('organization_users_role_idx').on(t.roleId),
  ],
);

/**
 * One row per sign-in. token_hash is the SHA-256 of the current refresh token; the context
 * (partner or organisation membership) the session acts in is fixed at sign-in or switch-context.
 */
export const sessions = pgTable(
  'sessions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull(),
    ipAddress: varchar('ip_address', { length: 45 }),
    userAgent: text('user_agent'),
    scope: membershipKind('scope'),
    partnerId: uuid('partner_id').references(() => partners.id, { onDelete: 'cascade' }),
    orgId: uuid('org_id').references(() => organizations.id, { onDelete: 'cascade' }),
    mfa: boolean('mfa').notNull().default(false),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    absoluteExpiresAt: timestamp('absolute_expires_at', { withTimezone: true }).notNull(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    revokeReason: varchar('revoke_reason', { length: 64 }),
    /** Last password or second-factor proof in this session (step-up); null = none recorded. */
    authTime: timestamp('auth_time', { withTimezone: true }),
    /** The proof that last renewed auth_time (passkey, totp, sms, password); null: none since the sign-in. */
    authMethod: varchar('auth_method', { length: 16 }),
    /** How the session was signed in to (password, password+totp, passkey, sso, ...). */
    method: varchar('method', { length: 32 }),
    /** The known device (device cookie) the sign-in came from. */
    deviceId: uuid('device_id').references((): any => knownDevices.id, { onDelete: 'set null' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('sessions_token_hash_key').on(t.tokenHash),
    index('sessions_user_idx').on(t.userId),
    check('sessions_ip_len', sql`${t.ipAddress} is null or length(${t.ipAddress}) <= 45`),
  ],
);

/** Refresh tokens rotated out of a session: presenting one again is reuse and kills the session. */
export const sessionRotatedTokens = pgTable(
  'session_rotated_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    sessionId: uuid('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    rotatedAt: timestamp('rotated_at', { withTimezone: true }).notNull().defaultNow(),
    /** SHA-256 of the winning request's address and user agent: a twin from the same client lost a race. */
    rotatedBy: text('rotated_by'),
  },
  (t) => [index('session_rotated_tokens_session_idx').on(t.sessionId)],
);

export const passkeys = pgTable(
  'passkeys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: varchar('name', { length: 100 }).notNull(),
    credentialId: text('credential_id').notNull(),
    publicKey: text('public_key').notNull(),
    counter: bigint('counter', { mode: 'number' }).notNull().default(0),
    transports: text('transports').array().notNull().default(sql`'{}'::text[]`),
    deviceType: varchar('device_type', { length: 32 }),
    backedUp: boolean('backed_up').notNull().default(false),
    aaguid: varchar('aaguid', { length: 36 }),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('passkeys_credential_id_key').on(t.credentialId),
    index('passkeys_user_idx').on(t.userId),
    check('passkeys_counter_nonneg', sql`${t.counter} >= 0`),
  ],
);

/** Browsers a user has signed in from: the SHA-256 of the long-lived device cookie, per user. */
export const knownDevices = pgTable(
  'known_devices',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('known_devices_user_token_key').on(t.userId, t.tokenHash)],
);

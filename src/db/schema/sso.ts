import { sql } from 'drizzle-orm';
import { boolean, check, index, jsonb, pgTable, text, timestamp, unique, uuid, varchar } from 'drizzle-orm/pg-core';
import { ssoProviderStatus, ssoProviderType } from './enums.js';
import { roles, users } from './identity.js';
import { organizations, partners, timestamps } from './tenants.js';

export const ssoProviders = pgTable(
  'sso_providers',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    /** null = a partner-owned provider that signs in the partner's technicians. */
    orgId: uuid('org_id').references(() => organizations.id, { onDelete: 'cascade' }),
    name: varchar('name', { length: 255 }).notNull(),
    type: ssoProviderType('type').notNull().default('oidc'),
    status: ssoProviderStatus('status').notNull().default('inactive'),
    issuer: varchar('issuer', { length: 2048 }).notNull(),
    clientId: varchar('client_id', { length: 255 }).notNull(),
    clientSecret: text('client_secret'),
    scopes: varchar('scopes', { length: 1024 }).notNull().default('openid email profile'),
    autoProvision: boolean('auto_provision').notNull().default(false),
    defaultRoleId: uuid('default_role_id').references(() => roles.id, { onDelete: 'restrict' }),
    allowedDomains: varchar('allowed_domains', { length: 2048 }).notNull().default(''),
    enforceSso: boolean('enforce_sso').notNull().default(false),
    /** An ID token whose amr names a second factor counts as MFA for the session. */
    trustIdpMfa: boolean('trust_idp_mfa').notNull().default(false),
    /** The last successful POST /test: enforcing SSO on a provider never tested answers a warning. */
    lastTestedOkAt: timestamp('last_tested_ok_at', { withTimezone: true }),
    // SAML 2.0 (type saml): the IdP's metadata as given, and what was read from it.
    metadataXml: text('metadata_xml'),
    metadataUrl: varchar('metadata_url', { length: 2048 }),
    /** PEM bodies of the IdP's signing certificates (several during a rollover). */
    idpCerts: jsonb('idp_certs').$type<string[]>().notNull().default([]),
    idpSsoUrl: varchar('idp_sso_url', { length: 2048 }),
    emailAttribute: varchar('email_attribute', { length: 255 }),
    nameAttribute: varchar('name_attribute', { length: 255 }),
    /** Made (or last configured) by someone acting for the partner: the customer's controls hold its sign-ins. */
    madeByPartner: boolean('made_by_partner').notNull().default(false),
    ...timestamps,
  },
  (t) => [
    check('sso_providers_autoprovision_role', sql`not ${t.autoProvision} or ${t.defaultRoleId} is not null`),
    index('sso_providers_partner_idx').on(t.partnerId),
    index('sso_providers_org_idx').on(t.orgId),
  ],
);

export const ssoIdentities = pgTable(
  'sso_identities',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    providerId: uuid('provider_id')
      .notNull()
      .references(() => ssoProviders.id, { onDelete: 'cascade' }),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    subject: varchar('subject', { length: 255 }).notNull(),
    email: varchar('email', { length: 255 }),
    lastLoginAt: timestamp('last_login_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    unique('sso_identities_provider_subject_key').on(t.providerId, t.subject),
    index('sso_identities_user_idx').on(t.userId),
  ],
);

/** One login flow: PKCE verifier, state and nonce, bound to the browser by a cookie. */
export const ssoSessions = pgTable(
  'sso_sessions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    // SET NULL, not CASCADE: a callback for a provider deleted mid-flow must still say provider_not_found.
    providerId: uuid('provider_id').references(() => ssoProviders.id, { onDelete: 'set null' }),
    stateHash: text('state_hash').notNull(),
    nonce: text('nonce').notNull(),
    codeVerifier: text('code_verifier').notNull(),
    browserBindingHash: text('browser_binding_hash').notNull(),
    redirectPath: varchar('redirect_path', { length: 2048 }).notNull().default('/'),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    consumedAt: timestamp('consumed_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [unique('sso_sessions_state_key').on(t.stateHash)],
);

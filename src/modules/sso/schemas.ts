import { z } from 'zod';
import { PRESET_IDS } from './presets.js';

const domains = z
  .string()
  .max(2048)
  .transform((s) => s.toLowerCase().replace(/\s+/g, '').split(',').filter(Boolean).join(','))
  .refine(
    (s) =>
      s === '' ||
      s.split(',').every((d) => /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(d)),
    'must be a comma-separated list of domains',
  )
  .meta({
    pattern:
      '^$|^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}(,([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63})*$',
    examples: ['example.org,corp.example.org'],
  });

const settings = {
  issuer: z.url({ protocol: /^https?$/ }).max(2048),
  clientId: z.string().trim().min(1).max(255),
  clientSecret: z.string().min(1).max(4096).nullable().optional(),
  scopes: z
    .string()
    .trim()
    .max(1024)
    .regex(/^[\x21-\x7e]+( [\x21-\x7e]+)*$/, 'space-separated scopes')
    .refine((s) => s.split(' ').includes('openid'), 'must include openid')
    .meta({ pattern: '^(?=(.* )?openid( |$))[\\x21-\\x7e]+( [\\x21-\\x7e]+)*$', examples: ['openid email profile'] })
    .optional(),
  autoProvision: z.boolean().optional(),
  defaultRoleId: z.uuid().nullable().optional(),
  allowedDomains: domains.optional(),
  enforceSSO: z.boolean().optional(),
  trustIdpMfa: z
    .boolean()
    .optional()
    .describe("Count the IdP's second factor (amr mfa, otp, hwk, swk, sms, fpt, face) as MFA"),
};

const attributeName = z.string().trim().min(1).max(255).nullable().optional();
/** SAML: the IdP's metadata, given inline or fetched from its URL; its entity id, SSO URL and certificates come from it. */
const samlSettings = {
  metadataXml: z
    .string()
    .min(1)
    .max(512 * 1024)
    .optional()
    .describe("The IdP's metadata XML (EntityDescriptor)"),
  metadataUrl: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .optional()
    .describe('Where the IdP publishes its metadata (fetched now and by POST /test)'),
  emailAttribute: attributeName.describe(
    'Attribute carrying the e-mail (default: common names, else an emailAddress NameID)',
  ),
  nameAttribute: attributeName.describe('Attribute carrying the display name'),
};

const oidcCreate = z.strictObject({
  name: z.string().trim().min(1).max(255),
  type: z.string().max(20).optional(),
  preset: z.enum(PRESET_IDS).optional(),
  orgId: z.uuid().optional(),
  ...settings,
});
const samlCommon = {
  name: z.string().trim().min(1).max(255),
  type: z.literal('saml'),
  preset: z.enum(PRESET_IDS).optional(),
  orgId: z.uuid().optional(),
  emailAttribute: samlSettings.emailAttribute,
  nameAttribute: samlSettings.nameAttribute,
  autoProvision: settings.autoProvision,
  defaultRoleId: settings.defaultRoleId,
  allowedDomains: settings.allowedDomains,
  enforceSSO: settings.enforceSSO,
  trustIdpMfa: settings.trustIdpMfa.describe(
    "Count a second factor named by the assertion's AuthnContextClassRef as MFA",
  ),
};
/** SAML from metadata given inline, or fetched from its URL: exactly one of the two. */
const samlCreate = z.union([
  z.strictObject({ ...samlCommon, metadataXml: samlSettings.metadataXml.unwrap() }),
  z.strictObject({ ...samlCommon, metadataUrl: samlSettings.metadataUrl.unwrap() }),
]);
export const createProviderBody = z.union([samlCreate, oidcCreate]);
export const updateProviderBody = z
  .strictObject({
    name: z.string().trim().min(1).max(255).optional(),
    ...settings,
    issuer: settings.issuer.optional(),
    clientId: settings.clientId.optional(),
    ...samlSettings,
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'Nothing to change' })
  .refine((b) => b.metadataXml === undefined || b.metadataUrl === undefined, {
    message: 'Give at most one of metadataXml and metadataUrl',
    path: ['metadataXml'],
  })
  .meta({
    minProperties: 1,
    description:
      'A SAML provider takes metadataXml or metadataUrl (not both), emailAttribute and nameAttribute; an OpenID Connect provider its own settings.',
  });
export const statusBody = z.strictObject({ status: z.enum(['active', 'inactive', 'testing']) });

export const providerJson = z
  .object({
    id: z.uuid(),
    orgId: z.uuid().nullable(),
    partnerId: z.uuid(),
    name: z.string(),
    type: z.enum(['oidc', 'saml']),
    status: z.enum(['active', 'inactive', 'testing']),
    issuer: z.string(),
    clientId: z.string(),
    hasClientSecret: z.boolean(),
    scopes: z.string(),
    autoProvision: z.boolean(),
    defaultRoleId: z.uuid().nullable(),
    allowedDomains: z.string(),
    enforceSSO: z.boolean(),
    trustIdpMfa: z.boolean(),
    /** SAML: our entity id at the IdP (the URL of our SP metadata for this provider). */
    entityId: z.string().optional(),
    /** SAML: the assertion consumer service to register at the IdP. */
    acsUrl: z.string().optional(),
    spMetadataUrl: z.string().optional(),
    /** SAML: where the IdP's metadata is fetched from (null when it was given inline). */
    metadataUrl: z.string().nullable().optional(),
    /** SAML: the IdP's single sign-on URL (HTTP-Redirect), from its metadata. */
    ssoUrl: z.string().optional(),
    emailAttribute: z.string().nullable().optional(),
    nameAttribute: z.string().nullable().optional(),
    /** The last successful POST /test, null when none. */
    lastTestedAt: z.string().nullable(),
    /** provider_untested: enforceSSO was turned on for a provider whose /test never succeeded. */
    warnings: z.array(z.enum(['provider_untested'])).optional(),
    domains: z
      .array(z.object({ domain: z.string(), proven: z.boolean() }))
      .optional()
      .describe(
        "Each domain of allowedDomains, and whether the provider's tenant proved it (discovery, auto-provisioning and enforcement act only on proven domains)",
      ),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'SsoProvider' });

export const certificateJson = z.object({
  subject: z.string(),
  notBefore: z.string(),
  notAfter: z.string(),
  expired: z.boolean(),
  fingerprintSha256: z.string(),
});
export const testResult = z.union([
  z.object({
    ok: z.literal(true),
    issuer: z.string(),
    authorizationEndpoint: z.string(),
    tokenEndpoint: z.string(),
    jwksUri: z.string(),
  }),
  /** SAML: the metadata was read (and fetched, from metadataUrl); each signing certificate with its expiry. */
  z.object({
    ok: z.literal(true),
    type: z.literal('saml'),
    issuer: z.string(),
    ssoUrl: z.string(),
    certificates: z.array(certificateJson),
  }),
  z.object({ ok: z.literal(false), error: z.string() }),
]);
/** What a sign-in page needs to offer the organisation's SSO: a button label, the kind, whether to hide the password. */
export const checkResult = z.object({
  ssoEnabled: z.boolean(),
  providerName: z.string().optional(),
  type: z.enum(['oidc', 'saml']).optional(),
  enforceSSO: z.boolean().optional(),
  loginUrl: z.string().optional(),
});
export const discoveryBody = z.strictObject({ email: z.email().max(255) });
export const discoveryResult = checkResult.extend({
  orgId: z.uuid().optional(),
  /** With enforceSSO: who keeps password sign-in (the partner's administrators, break-glass). */
  passwordSignIn: z.enum(['partner_admins_only']).optional(),
});
export const exchangeBody = z.strictObject({ code: z.string().min(16).max(512) });
export const loginQuery = z.looseObject({ redirect: z.string().max(2048).optional() });
export const callbackQuery = z.looseObject({
  code: z.string().max(4096).optional(),
  state: z.string().max(512).optional(),
  error: z.string().max(256).optional(),
});
export const acsBody = z.looseObject({
  SAMLResponse: z
    .string()
    .max(512 * 1024)
    .optional(),
  RelayState: z.string().max(1024).optional(),
});
export const samlReturnQuery = z.looseObject({ token: z.string().max(512).optional() });
export const ownerParam = z.strictObject({ orgId: z.uuid() });
export const providerListQuery = z.strictObject({ orgId: z.uuid().optional() });

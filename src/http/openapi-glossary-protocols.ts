// The API's vocabulary, second half: the fields of the standards the API speaks (WebAuthn, OpenID Connect, SAML 2.0,
// SCIM 2.0, OAuth 2.0, JWK, TOTP), as they mean in those standards. See openapi-glossary.ts for how it is applied.
import { AT, type Gloss } from './openapi-glossary-core.js';

/** Field name → its meaning(s), for the fields the standards define. */
export const PROTOCOL_GLOSSARY: Record<string, Gloss[]> = {
  display: [{ description: 'SCIM: a human-readable name of the referenced resource.', examples: ['Ada Lovelace'] }],
  primary: [{ description: 'SCIM: true for the preferred value of a multi-valued attribute.' }],
  credential: [{ description: 'The WebAuthn credential the browser returned (navigator.credentials.get()).' }],
  options: [
    {
      description: 'WebAuthn options to pass to the browser (navigator.credentials).',
      alone: true,
      examples: [['Bronze', 'Silver', 'Gold']],
    },
    { description: 'The allowed values (select fields only).', examples: [['Bronze', 'Silver', 'Gold']] },
  ],
  rawId: [{ description: 'WebAuthn credential id, base64url.', examples: ['p3ZpTq6Xk0a2b9cD4eF5gH'] }],
  response: [{ description: 'The authenticator’s response (WebAuthn), base64url fields.' }],
  clientExtensionResults: [{ description: 'WebAuthn client extension results.' }],
  authenticatorAttachment: [{ description: 'WebAuthn: platform or cross-platform authenticator.' }],
  clientDataJSON: [{ description: 'WebAuthn client data, base64url.', examples: ['eyJ0eXBlIjoid2ViYXV0aG4uZ2V0In0'] }],
  authenticatorData: [
    {
      description: 'WebAuthn authenticator data, base64url.',
      examples: ['SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2MFAAAAAQ'],
    },
  ],
  attestationObject: [
    { description: 'WebAuthn attestation object, base64url.', examples: ['o2NmbXRkbm9uZWdhdHRTdG10oGhhdXRoRGF0YVi'] },
  ],
  signature: [{ description: 'WebAuthn assertion signature, base64url.', examples: ['MEUCIQDg1dPb0p4nDkQz7cLqZg'] }],
  userHandle: [{ description: 'WebAuthn user handle, base64url; null: none.' }],
  transports: [
    {
      description: 'How the authenticator connects (usb, nfc, ble, internal, hybrid).',
      examples: [['internal', 'hybrid']],
    },
  ],
  backedUp: [{ description: 'true: the passkey is synced (backed up by its provider).' }],
  issuer: [
    {
      description: 'The identity provider’s issuer (OpenID) or entity id (SAML).',
      examples: ['https://login.microsoftonline.com/4b1d2c3e-aaaa-4bbb-8ccc-123456789abc/v2.0'],
    },
  ],
  clientId: [{ description: 'The client id registered at the identity provider.', examples: ['gatehouse-console'] }],
  clientSecret: [{ description: 'The client secret (write only: never answered back).' }],
  enforceSSO: [{ description: 'true: these accounts must sign in through this provider.' }],
  autoProvision: [{ description: 'true: a first sign-in through the provider creates the account.' }],
  allowedDomains: [{ description: 'E-mail domains the provider may sign in.', examples: [['contoso.com']] }],
  providerName: [{ description: 'The identity provider’s display name.', examples: ['Contoso Entra ID'] }],
  providerId: [{ description: 'An identity provider, by id.' }],
  preset: [{ description: 'A known identity provider whose endpoints are filled in for you.' }],
  entityId: [{ description: 'SAML entity id.', examples: ['https://sts.contoso.com/adfs/services/trust'] }],
  acsUrl: [
    {
      description: 'SAML assertion consumer service URL of this service.',
      examples: ['https://gatehouse.example.com/api/v1/sso/saml/acs'],
    },
  ],
  ssoUrl: [
    { description: 'The identity provider’s SAML sign-in URL.', examples: ['https://idp.contoso.com/sso/saml'] },
  ],
  loginUrl: [
    {
      description: 'Where a browser starts the sign-in.',
      examples: ['https://gatehouse.example.com/api/v1/sso/login/2c4e6a8b-1d3f-4a5b-9c7d-0e1f2a3b4c5d'],
    },
  ],
  ssoEnabled: [{ description: 'true: single sign-on is set up.' }],
  flow: [{ description: 'The pending flow’s single-use id.', examples: ['q8Wm2Zr5Tx1Ny7Kb4Vd9Hc3Jf6Lp0Sg'] }],
  meta: [{ description: 'SCIM resource metadata (RFC 7643).' }],
  schemas: [
    {
      description: 'SCIM schema URIs of this message (RFC 7643).',
      examples: [['urn:ietf:params:scim:schemas:core:2.0:User']],
    },
  ],
  members: [{ description: 'SCIM: the group’s members.' }],
  Operations: [{ description: 'SCIM PATCH operations, applied in order (RFC 7644).' }],
  path: [{ description: 'SCIM attribute path the operation changes.' }],
  resourceType: [{ description: 'SCIM resource type.', examples: ['User'] }],
  created: [{ description: 'When it was created (ISO 8601, UTC).', examples: [AT] }],
  lastModified: [{ description: 'When it last changed (ISO 8601, UTC).', examples: [AT] }],
  location: [
    {
      description: 'URL of the resource.',
      examples: ['https://gatehouse.example.com/scim/v2/Users/3f2b8c1e-6a4d-4e8f-9b2a-1c5d7e9f0a12'],
    },
  ],
  totalResults: [{ description: 'SCIM: how many resources match.' }],
  startIndex: [{ description: 'SCIM: 1-based index of the first resource of this page.' }],
  itemsPerPage: [{ description: 'SCIM: how many resources this page holds.' }],
  Resources: [{ description: 'SCIM: the resources of this page.' }],
  $ref: [
    {
      description: 'SCIM: URL of the referenced resource.',
      examples: ['https://gatehouse.example.com/scim/v2/Users/3f2b8c1e-6a4d-4e8f-9b2a-1c5d7e9f0a12'],
    },
  ],
  keys: [{ description: 'The public keys (JWK Set, RFC 7517).' }],
  kty: [{ description: 'JWK key type (RFC 7517).', examples: ['OKP'] }],
  kid: [{ description: 'JWK key id (RFC 7517).', examples: ['k1'] }],
  alg: [{ description: 'JWS algorithm (RFC 7518).', examples: ['EdDSA'] }],
  crv: [{ description: 'Elliptic curve (RFC 7518).', examples: ['Ed25519'] }],
  x: [
    {
      description: 'Public key value, base64url (RFC 7518).',
      examples: ['11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo'],
    },
  ],
  use: [{ description: 'Intended use of the key: sig (RFC 7517).', examples: ['sig'] }],
  secret: [{ description: 'The TOTP secret, base32: shown once.', examples: ['JBSWY3DPEHPK3PXP'] }],
  otpAuthUrl: [
    {
      description: 'otpauth:// URL for an authenticator app.',
      examples: ['otpauth://totp/Gatehouse:ada%40example.org?secret=JBSWY3DPEHPK3PXP&issuer=Gatehouse'],
    },
  ],
  qrCodeDataUrl: [{ description: 'The otpauth URL as a QR code image (data: URL).' }],
  issuerTemplate: [
    {
      description: 'Issuer URL with placeholders for your tenant.',
      examples: ['https://login.microsoftonline.com/{tenantId}/v2.0'],
    },
  ],
  redirectUri: [
    {
      description: 'Where the identity provider returns the browser.',
      examples: ['https://gatehouse.example.com/api/v1/sso/callback'],
    },
  ],
  emailClaim: [{ description: 'The ID-token claim carrying the e-mail.', examples: ['email'] }],
  nameClaim: [{ description: 'The ID-token claim carrying the name.', examples: ['name'] }],
  saml: [{ description: 'SAML details, when the protocol is SAML.' }],
  metadataUrlTemplate: [{ description: 'Metadata URL with placeholders for your tenant.' }],
  entityIdTemplate: [{ description: 'Entity id with placeholders for your tenant.' }],
  authorizationEndpoint: [
    {
      description: 'OpenID authorization endpoint the provider published.',
      examples: ['https://idp.contoso.com/authorize'],
    },
  ],
  tokenEndpoint: [
    { description: 'OpenID token endpoint the provider published.', examples: ['https://idp.contoso.com/token'] },
  ],
  jwksUri: [
    { description: 'Where the provider publishes its signing keys.', examples: ['https://idp.contoso.com/jwks'] },
  ],
  certificates: [{ description: 'The signing certificates found.' }],
  notBefore: [{ description: 'Start of validity (ISO 8601, UTC).', examples: [AT] }],
  notAfter: [{ description: 'End of validity (ISO 8601, UTC).', examples: [AT] }],
  expired: [{ description: 'true: past its end of validity.' }],
  fingerprintSha256: [{ description: 'SHA-256 fingerprint, hex.' }],
  SAMLResponse: [{ description: 'The identity provider’s SAML response, base64 (HTTP-POST binding).' }],
  RelayState: [{ description: 'SAML RelayState sent with the request, returned unchanged.' }],
  grant_type: [{ description: 'OAuth grant type (RFC 6749).', examples: ['client_credentials'] }],
  client_id: [{ description: 'OAuth client id (RFC 6749).' }],
  client_secret: [{ description: 'OAuth client secret (RFC 6749).' }],
  token_type: [{ description: 'OAuth token type (RFC 6749).' }],
  expires_in: [{ description: 'Lifetime of the access token, in seconds (RFC 6749).' }],
  hasClientSecret: [{ description: 'true: a client secret is stored (it is never answered back).' }],
  spMetadataUrl: [
    {
      description: 'This service’s SAML metadata URL for the identity provider.',
      examples: ['https://gatehouse.example.com/api/v1/sso/saml/metadata/0f1e2d3c-4b5a-4968-8776-655443322110'],
    },
  ],
  lastTestedAt: [{ description: 'When the provider last passed its test; null: never.', examples: [AT] }],
  userName: [{ description: 'SCIM user name (unique in the tenant).', examples: ['ada@contoso.com'] }],
  emails: [{ description: 'SCIM e-mail addresses.' }],
  groups: [{ description: 'Groups it belongs to.' }],
  emailAttribute: [{ description: 'The attribute carrying the e-mail.', examples: ['email'] }],
  nameAttribute: [{ description: 'The attribute carrying the display name.', examples: ['displayName'] }],
  metadataUrl: [
    {
      description: 'Where the identity provider publishes its metadata.',
      examples: ['https://idp.contoso.com/metadata.xml'],
    },
  ],
  externalId: [{ description: 'The identity provider’s own id for it.', examples: ['00u1abcd2EFGH3ijk4l5'] }],
  access_token: [
    { description: 'OAuth access token (RFC 6749).', examples: ['eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiIzZjJiIn0.c2ln'] },
  ],
  op: [{ description: 'SCIM PATCH operation: add, remove or replace (RFC 7644).', examples: ['replace'] }],
  scopes: [{ description: 'OpenID scopes to request.', examples: [['openid', 'email', 'profile']] }],
  metadataXml: [
    {
      description: 'SAML metadata XML (EntityDescriptor).',
      examples: ['<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.contoso.com"/>'],
    },
  ],
};

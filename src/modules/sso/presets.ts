// Built-in presets of common identity providers: the issuer pattern to fill in, the scopes,
// the claims that carry e-mail and name, and a short setup note; and, where the IdP offers SAML 2.0, its metadata URL
// pattern (null when the IdP only offers a download), attribute names and note. The redirect URI, ACS URL and entity
// id to register are added per instance.

export interface SamlPreset {
  /** null: the IdP offers its metadata only as a download (paste it as metadataXml). */
  metadataUrlTemplate: string | null;
  emailAttribute: string;
  nameAttribute: string;
  notes: string;
}

const SAML: Record<string, SamlPreset> = {
  entra: {
    metadataUrlTemplate:
      'https://login.microsoftonline.com/{tenantId}/federationmetadata/2007-06/federationmetadata.xml?appid={applicationId}',
    emailAttribute: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
    nameAttribute: 'http://schemas.microsoft.com/identity/claims/displayname',
    notes:
      'Enterprise applications → New application → Create your own (non-gallery) → Single sign-on → SAML. Identifier (Entity ID) and Reply URL (ACS) as shown; keep the NameID persistent or user.mail (not transient).',
  },
  okta: {
    metadataUrlTemplate: 'https://{yourOktaDomain}/app/{appId}/sso/saml/metadata',
    emailAttribute: 'email',
    nameAttribute: 'name',
    notes:
      'Applications → Create App Integration → SAML 2.0. Single sign-on URL = ACS URL, Audience URI = entity id; attribute statements email = user.email, name = user.displayName.',
  },
  google: {
    metadataUrlTemplate: null,
    emailAttribute: 'email',
    nameAttribute: 'name',
    notes:
      'Admin console → Apps → Web and mobile apps → Add custom SAML app; download the IdP metadata and paste it. ACS URL and Entity ID as shown, Name ID format EMAIL; map Primary email → email.',
  },
  auth0: {
    metadataUrlTemplate: 'https://{yourTenant}.{region}.auth0.com/samlp/metadata/{clientId}',
    emailAttribute: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
    nameAttribute: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name',
    notes:
      'Applications → your application → Addons → SAML2 Web App; Application Callback URL = ACS URL, settings { "audience": entity id }.',
  },
  keycloak: {
    metadataUrlTemplate: 'https://{host}/realms/{realm}/protocol/saml/descriptor',
    emailAttribute: 'email',
    nameAttribute: 'name',
    notes:
      'Clients → Create client (SAML), Client ID = entity id, Valid redirect URIs and Assertion Consumer Service POST Binding URL = ACS URL; Sign assertions on; add mappers for email and name.',
  },
  jumpcloud: {
    metadataUrlTemplate: null,
    emailAttribute: 'email',
    nameAttribute: 'name',
    notes:
      'SSO Applications → Custom SAML App; SP Entity ID and ACS URL as shown, Sign Assertion; attributes email and name; export the metadata and paste it.',
  },
  onelogin: {
    metadataUrlTemplate: 'https://{subdomain}.onelogin.com/saml/metadata/{appId}',
    emailAttribute: 'User.email',
    nameAttribute: 'name',
    notes:
      'Applications → Add App → SAML Custom Connector (Advanced); Audience = entity id, Recipient and ACS (Consumer) URL = ACS URL, SAML signature element Assertion.',
  },
  pingone: {
    metadataUrlTemplate: 'https://auth.pingone.{region}/{environmentId}/saml20/metadata/{appId}',
    emailAttribute: 'email',
    nameAttribute: 'name',
    notes:
      'Applications → Add Application → SAML Application; ACS URL and Entity ID as shown, Sign Assertion; attribute mapping email and name.',
  },
};

export interface SsoPreset {
  id: string;
  name: string;
  type: 'oidc';
  issuerTemplate: string;
  scopes: string;
  emailClaim: string;
  nameClaim: string;
  notes: string;
  /** Where the IdP also offers SAML 2.0. */
  saml?: SamlPreset;
}

const OIDC_PRESETS = [
  {
    id: 'entra',
    name: 'Microsoft Entra ID',
    type: 'oidc',
    issuerTemplate: 'https://login.microsoftonline.com/{tenantId}/v2.0',
    scopes: 'openid email profile',
    emailClaim: 'email',
    nameClaim: 'name',
    notes:
      'App registrations → New registration (Web), add the redirect URI, create a client secret. Add the optional claim "email" and set "xms_edov" (verified domain owner) or use allowedDomains: Entra does not send email_verified by default.',
  },
  {
    id: 'okta',
    name: 'Okta',
    type: 'oidc',
    issuerTemplate: 'https://{yourOktaDomain}',
    scopes: 'openid email profile',
    emailClaim: 'email',
    nameClaim: 'name',
    notes:
      'Applications → Create App Integration → OIDC, Web Application; sign-in redirect URI as shown. Use the org authorization server or a custom one ({yourOktaDomain}/oauth2/default).',
  },
  {
    id: 'google',
    name: 'Google Workspace',
    type: 'oidc',
    issuerTemplate: 'https://accounts.google.com',
    scopes: 'openid email profile',
    emailClaim: 'email',
    nameClaim: 'name',
    notes:
      'Google Cloud console → APIs & Services → Credentials → OAuth client ID (Web application). Google accepts any Google account: always set allowedDomains.',
  },
  {
    id: 'auth0',
    name: 'Auth0',
    type: 'oidc',
    issuerTemplate: 'https://{yourTenant}.{region}.auth0.com/',
    scopes: 'openid email profile',
    emailClaim: 'email',
    nameClaim: 'name',
    notes:
      'Applications → Create Application → Regular Web Application; Allowed Callback URLs as shown. The issuer ends with a slash.',
  },
  {
    id: 'keycloak',
    name: 'Keycloak',
    type: 'oidc',
    issuerTemplate: 'https://{host}/realms/{realm}',
    scopes: 'openid email profile',
    emailClaim: 'email',
    nameClaim: 'name',
    notes:
      'Clients → Create client (OpenID Connect), Client authentication on; Valid redirect URIs as shown. One client per realm.',
  },
  {
    id: 'jumpcloud',
    name: 'JumpCloud',
    type: 'oidc',
    issuerTemplate: 'https://oauth.id.jumpcloud.com/',
    scopes: 'openid email profile',
    emailClaim: 'email',
    nameClaim: 'name',
    notes:
      'SSO Applications → Custom OIDC App; Redirect URIs as shown, Client Authentication Type: Client Secret Post; enable the email and profile attributes.',
  },
  {
    id: 'onelogin',
    name: 'OneLogin',
    type: 'oidc',
    issuerTemplate: 'https://{subdomain}.onelogin.com/oidc/2',
    scopes: 'openid email profile',
    emailClaim: 'email',
    nameClaim: 'name',
    notes:
      'Applications → Add App → OpenID Connect (OIDC); Redirect URIs as shown; SSO tab: Token Endpoint Authentication Method POST.',
  },
  {
    id: 'pingone',
    name: 'PingOne',
    type: 'oidc',
    issuerTemplate: 'https://auth.pingone.{region}/{environmentId}/as',
    scopes: 'openid email profile',
    emailClaim: 'email',
    nameClaim: 'name',
    notes:
      'Applications → Add Application → OIDC Web App; Redirect URIs as shown; Token Endpoint Authentication Method: Client Secret Post. Region is com, eu, ca or asia.',
  },
  {
    id: 'generic',
    name: 'Generic OpenID Connect',
    type: 'oidc',
    issuerTemplate: 'https://{issuer}',
    scopes: 'openid email profile',
    emailClaim: 'email',
    nameClaim: 'name',
    notes: 'Any provider with /.well-known/openid-configuration.',
  },
] as const;

export type PresetId = (typeof OIDC_PRESETS)[number]['id'];
export const SSO_PRESETS: readonly (SsoPreset & { id: PresetId })[] = OIDC_PRESETS.map((p) =>
  SAML[p.id] ? { ...p, saml: SAML[p.id] } : p,
);
export const PRESET_IDS = SSO_PRESETS.map((p) => p.id) as [PresetId, ...PresetId[]];

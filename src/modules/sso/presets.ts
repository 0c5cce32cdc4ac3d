// Built-in presets of common OpenID Providers (spec 2.8): the issuer pattern to fill in and sensible scopes.
export const SSO_PRESETS = [
  { id: 'entra', name: 'Microsoft Entra ID', type: 'oidc', issuerTemplate: 'https://login.microsoftonline.com/{tenantId}/v2.0', scopes: 'openid email profile', notes: 'Register a web app; redirect URI is shown on the provider page.' },
  { id: 'okta', name: 'Okta', type: 'oidc', issuerTemplate: 'https://{yourOktaDomain}', scopes: 'openid email profile', notes: 'Use the org authorization server or a custom one ({yourOktaDomain}/oauth2/default).' },
  { id: 'google', name: 'Google Workspace', type: 'oidc', issuerTemplate: 'https://accounts.google.com', scopes: 'openid email profile', notes: 'Limit sign-in with allowedDomains: Google accepts any Google account.' },
  { id: 'auth0', name: 'Auth0', type: 'oidc', issuerTemplate: 'https://{yourTenant}.auth0.com/', scopes: 'openid email profile', notes: 'The issuer ends with a slash.' },
  { id: 'keycloak', name: 'Keycloak', type: 'oidc', issuerTemplate: 'https://{host}/realms/{realm}', scopes: 'openid email profile', notes: 'One client per realm.' },
  { id: 'generic', name: 'Generic OpenID Connect', type: 'oidc', issuerTemplate: 'https://{issuer}', scopes: 'openid email profile', notes: 'Any provider with /.well-known/openid-configuration.' },
] as const;

export type PresetId = (typeof SSO_PRESETS)[number]['id'];
export const PRESET_IDS = SSO_PRESETS.map((p) => p.id) as [PresetId, ...PresetId[]];

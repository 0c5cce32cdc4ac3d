// The face of the SSO module. No other module needs its internals today; the app mounts the routes itself
// (routes.ts), and deps.ts builds the OpenID Connect client cache, whose type is exported here.
export { OidcClients, type ProviderSettings } from './oidc.js';

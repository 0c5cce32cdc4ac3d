// The face of the SSO module. No other module needs its internals; the wiring (app.ts, deps.ts) takes the routes and
// the OpenID Connect client cache from here.
export { OidcClients, type ProviderSettings } from './oidc.js';
export { ssoRoutes } from './routes.js';

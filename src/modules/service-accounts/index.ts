// The service-accounts module's public face: the only file other modules (and the app) may import.
export { oauthRoutes } from './routes-oauth.js';
export { serviceAccountRoutes } from './routes.js';
export { serviceAccountPrincipal, type ServiceAccountFacts } from './principal.js';

// The SCIM module's public face: the only file other modules (and the app) may import.
export { scimRoutes, SCIM_PREFIX } from './routes.js';
export { scimTokenRoutes } from './token-routes.js';

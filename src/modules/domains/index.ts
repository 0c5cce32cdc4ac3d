// The domains module's public face: the only file other modules (and the app) may import.
export { domainRoutes } from './routes.js';
export { domainProvenBy, provenAmong, verifiedDomainOwner } from './repo.js';

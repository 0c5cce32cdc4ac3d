// The governor module's face: freezes, co-signatures and the partner's governor view (routes.ts, mounted by the app),
// and the audit of what the governor noted during a request (installed by the app). The rules themselves are in the
// access core (src/access/freeze.ts, src/access/governor.ts), where every decision path meets them.
export { installGovernorAudit } from './audit-hook.js';
export { governorRoutes } from './routes.js';

// The audit module's public face: the only file other modules may import (the app mounts routes.ts itself).
export type { AuditContent } from './chain.js';
export { actorOf, AuditWriter, type AuditActor, type AuditEvent, type AuditRequestMeta } from './writer.js';
export { csvCell } from './export.js';
export { listAuditLogs } from './service.js';

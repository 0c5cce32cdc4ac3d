// What the access core and the request pipeline write to the audit trail, as an interface: the audit module's
// AuditWriter implements it and src/deps.ts wires it in (the pipeline knows no feature).
import type { Executor } from '../db/connect.js';
import type { ServiceAccountActor } from './principal.js';

/** The client address and user agent of a request, as recorded with an event. */
export interface AuditRequestMeta {
  ip: string | null;
  userAgent: string | null;
}

/** Who acted (a subset of the audit module's AuditActor). */
export interface AccessAuditActor {
  userId: string | null;
  email: string | null;
  type?: string;
  name?: string;
  serviceAccount?: ServiceAccountActor;
  scimToken?: { id: string; name: string };
}

export interface AccessAuditEvent {
  action: string;
  result?: 'success' | 'failure' | 'denied';
  actor?: AccessAuditActor | null;
  partnerId?: string | null;
  orgId?: string | null;
  resourceType?: string | null;
  resourceId?: string | null;
  details?: Record<string, unknown>;
}

/** Records an event in the transaction of the change it describes (modules/audit/writer.ts AuditWriter). */
export interface AuditRecorder {
  record(tx: Executor, event: AccessAuditEvent, meta: AuditRequestMeta | null): Promise<unknown>;
}

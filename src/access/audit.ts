// What the access core and the request pipeline write to the audit trail, as an interface: the audit module's
// AuditWriter implements it and src/deps.ts wires it in (the pipeline knows no feature).
import type { Executor } from '../db/connect.js';
import { speaksForPartner, type Principal, type ServiceAccountActor } from './principal.js';

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
  /** The actor spoke for the partner (recorded, so the customer sees it after the actor left the partner). */
  forPartner?: boolean;
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

/**
 * The actor of an event a principal causes: a service account by its account, a person by id and e-mail. Here, below
 * the modules, so that a feature records who acted without importing the audit module (re-exported by audit/index).
 */
export function actorOf(p: Principal): AccessAuditActor & { type?: 'service_account' } {
  const forPartner = speaksForPartner(p);
  if (p.actorType === 'service_account' && p.serviceAccount)
    return { userId: p.userId, email: null, type: 'service_account', serviceAccount: p.serviceAccount, forPartner };
  return { userId: p.userId, email: p.email, forPartner };
}

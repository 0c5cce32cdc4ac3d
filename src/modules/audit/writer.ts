// Records an audit event in the same transaction as the change it describes.
import { randomUUID } from 'node:crypto';
import type { Executor } from '../../db/connect.js';
import type { ServiceAccountActor } from '../../http/context.js';
import type { Clock } from '../../platform/clock.js';
import { queueDeliveries } from '../webhooks/index.js';
import { chainLockKey, recordHash, type AuditContent } from './chain.js';
import { appendRecord, lastHash, lockChain } from './repo.js';
import { asSystemWithin } from '../../db/row-security.js';

/**
 * Who acted: a user, an operator at the command line (`type: 'cli'`, `name` = OS user@host), or a service account
 * (`type: 'service_account'`, `userId` = its id, `serviceAccount` = which one and with which key).
 */
export type AuditActor = {
  userId: string | null;
  email: string | null;
  type?: 'user' | 'cli' | 'service_account' | 'scim_token';
  name?: string;
  serviceAccount?: ServiceAccountActor;
  /** A SCIM bearer token: the identity provider provisioning through it. */
  scimToken?: { id: string; name: string };
  /** The actor spoke for the partner (a partner member, a partner service account, a credential the partner made). */
  forPartner?: boolean;
};

/** The actor of an authenticated request: the user, or the service account whose key made the request (access core). */
export { actorOf } from '../../access/audit.js';

export interface AuditEvent {
  action: string;
  result?: 'success' | 'failure' | 'denied';
  actor?: AuditActor | null;
  partnerId?: string | null;
  orgId?: string | null;
  resourceType?: string | null;
  resourceId?: string | null;
  details?: Record<string, unknown>;
}

export interface AuditRequestMeta {
  ip: string | null;
  userAgent: string | null;
}

/** Keys that must never be written to the trail, whatever a caller passes in details. */
const SECRET_KEY = /pass(word)?|secret|token|otp|code|recovery|credential|key$|hash/i;

export function scrubDetails(details: unknown, depth = 0): unknown {
  if (typeof details === 'string') return storable(details);
  if (details === null || typeof details !== 'object') return details;
  if (depth > 6) return '[too deep]'; // unscrubbed below this depth: never store it
  if (Array.isArray(details)) return details.map((d) => scrubDetails(d, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(details as Record<string, unknown>)) {
    if (SECRET_KEY.test(k) && !ALLOWED_KEYS.has(k)) continue;
    out[storable(k)] = scrubDetails(v, depth + 1);
  }
  return out;
}
/** Non-secret keys that SECRET_KEY would catch. */
const ALLOWED_KEYS = new Set([
  'keyId',
  'enrollmentKeyId',
  'passkeyId',
  'passkeyName',
  'errorCode',
  'reasonCode',
  'scimTokenId',
  'scimTokenName',
]);

/**
 * PostgreSQL refuses NUL in text and jsonb and lone UTF-16 surrogates in jsonb, and the drivers turn a lone surrogate
 * in text into U+FFFD: either would fail the change being recorded, or store other text than was hashed (a false
 * tamper alarm). Both become U+FFFD before hashing.
 */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
export const storable = (s: string) => s.replace(UNSTORABLE, '\ufffd');
const storableOrNull = (s: string | null | undefined) => (s == null ? null : storable(s));

/**
 * A command-line actor is named in the details (actorType, operator): the record has no user. A service account is
 * named there too (actorType, its name, clientId and the key used); actorUserId holds its id.
 */
function actorDetails(event: AuditEvent): Record<string, unknown> {
  const details = event.details ?? {};
  const sa = event.actor?.type === 'service_account' ? event.actor.serviceAccount : undefined;
  if (sa)
    return {
      ...details,
      actorType: 'service_account',
      serviceAccountName: sa.name,
      clientId: sa.clientId,
      keyId: sa.keyId,
    };
  const scim = event.actor?.type === 'scim_token' ? event.actor.scimToken : undefined;
  if (scim) return { ...details, actorType: 'scim_token', via: 'scim', scimTokenId: scim.id, scimTokenName: scim.name };
  if (event.actor?.type !== 'cli') return details;
  return { ...details, actorType: 'cli', operator: event.actor.name ?? null };
}

export class AuditWriter {
  constructor(
    private readonly clock: Clock,
    /** Called after each record is written (metrics); the record may still roll back with its transaction. */
    private readonly onWrite: (record: { action: string; result: string; details: unknown }) => void = () => {},
  ) {}

  /** Must be given the transaction of the change; serialises the partner's chain until it commits. */
  async record(tx: Executor, event: AuditEvent, meta: AuditRequestMeta | null): Promise<string> {
    // The chain's tail and the webhooks it fans out to are the chain's, not the caller's: an organisation's admin
    // appends to its partner's chain, a person without a tenant to the global one (system context `audit-chain`).
    return asSystemWithin(tx, 'audit-chain', () => this.append(tx, event, meta));
  }

  private async append(tx: Executor, event: AuditEvent, meta: AuditRequestMeta | null): Promise<string> {
    const partnerId = event.partnerId ?? null;
    await lockChain(tx, chainLockKey(partnerId));
    const prevHash = await lastHash(tx, partnerId);
    const content: AuditContent = {
      id: randomUUID(),
      at: this.clock.now(),
      action: storable(event.action),
      result: event.result ?? 'success',
      actorUserId: event.actor?.userId ?? null,
      actorEmail: storableOrNull(event.actor?.email),
      partnerId,
      orgId: event.orgId ?? null,
      resourceType: storableOrNull(event.resourceType),
      resourceId: storableOrNull(event.resourceId),
      ip: storableOrNull(meta?.ip?.slice(0, 45)),
      userAgent: storableOrNull(meta?.userAgent?.slice(0, 1024)),
      // As stored: a JSON round trip turns Dates into strings and drops undefined, so the hash covers what jsonb keeps.
      details: scrubDetails(JSON.parse(JSON.stringify(actorDetails(event)))),
    };
    await appendRecord(
      tx,
      { ...content, details: content.details as object, prevHash, hash: recordHash(content, prevHash) },
      { byPartner: event.actor?.forPartner === true },
    );
    // The webhook outbox, in the same transaction: the deliveries commit or roll back with the record.
    await queueDeliveries(tx, content, content.at);
    this.onWrite(content);
    return content.id;
  }
}

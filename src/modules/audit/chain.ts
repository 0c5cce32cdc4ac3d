// The hash chain of audit records: each record's hash covers its content and the previous record's hash
// in the same chain (one chain per partner; events with no partner form the global chain).
import { createHash } from 'node:crypto';

export interface AuditContent {
  id: string;
  at: Date;
  action: string;
  result: 'success' | 'failure' | 'denied';
  actorUserId: string | null;
  actorEmail: string | null;
  partnerId: string | null;
  orgId: string | null;
  resourceType: string | null;
  resourceId: string | null;
  ip: string | null;
  userAgent: string | null;
  details: unknown;
}

/** JSON with object keys sorted at every depth, so the database's jsonb reordering does not change the hash. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

export function recordHash(content: AuditContent, prevHash: string | null): string {
  const body = canonicalJson({ ...content, at: content.at.toISOString(), prevHash });
  return createHash('sha256').update(body).digest('hex');
}

export const chainLockKey = (partnerId: string | null) => `audit-chain:${partnerId ?? 'global'}`;

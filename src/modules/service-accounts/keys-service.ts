// API keys of a service account: issued (shown once, stored as SHA-256 only), listed (never the secret), revoked.
// At most two are active at once, so a rotation has an overlap window: issue the new key, deploy it, revoke the old.
import { z } from 'zod';
import type { Executor } from '../../db/connect.js';
import type { Deps } from '../../deps.js';
import { personIdOf, type Principal } from '../../http/context.js';
import { AppError, notFound } from '../../http/errors.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import { auditTenant } from '../tenants/index.js';
import { displayPrefix, newApiKey, normaliseCidr } from './key-format.js';
import { apiKeyRowOf, countActiveKeys, insertApiKey, listApiKeyRows, revokeApiKeyRow, type ApiKeyRow } from './repo.js';
import { administrableAccount, findServiceAccount, targetOf } from './service.js';

type KeyRow = ApiKeyRow;

/** Active keys per service account; a third is refused (409 key_limit_reached) until one is revoked or expires. */
export const MAX_ACTIVE_KEYS = 2;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export const keyToJson = (k: KeyRow, now: Date) => ({
  id: k.id,
  serviceAccountId: k.serviceAccountId,
  name: k.name,
  prefix: displayPrefix(k.environment, k.prefix),
  createdAt: k.createdAt.toISOString(),
  expiresAt: iso(k.expiresAt),
  allowedCidrs: k.allowedCidrs,
  lastUsedAt: iso(k.lastUsedAt),
  lastUsedIp: k.lastUsedIp,
  revokedAt: iso(k.revokedAt),
  active: !k.revokedAt && (!k.expiresAt || k.expiresAt > now),
});

function cidrsOf(input: string[] | undefined): string[] {
  const fieldErrors: Record<string, string[]> = {};
  const out = new Set<string>();
  (input ?? []).forEach((c, i) => {
    const n = normaliseCidr(c);
    if (n) out.add(n);
    else fieldErrors[`allowedCidrs.${i}`] = ['Not an IPv4 (a.b.c.d/n) or IPv6 (x::/n) CIDR block'];
  });
  if (Object.keys(fieldErrors).length)
    throw new AppError('validation_failed', 'An allowed CIDR block is not valid.', {
      details: { fieldErrors, formErrors: [] },
    });
  return [...out];
}

export async function createKey(
  deps: Deps,
  caller: Principal,
  accountId: string,
  input: { name: string; expiresAt?: string; allowedCidrs?: string[] },
  meta: AuditRequestMeta,
) {
  const now = deps.clock.now();
  const expiresAt = input.expiresAt ? new Date(input.expiresAt) : null;
  if (expiresAt && expiresAt <= now)
    throw new AppError('validation_failed', 'The expiry is in the past.', {
      details: { fieldErrors: { expiresAt: ['Must be in the future'] }, formErrors: [] },
    });
  const allowedCidrs = cidrsOf(input.allowedCidrs);
  const issued = newApiKey(deps.config.apiKeyEnvironment);
  return deps.db.transaction(async (tx) => {
    // The account row is locked: two concurrent issues cannot both pass the count below.
    const account = await administrableAccount(tx, caller, accountId, true);
    if ((await countActiveKeys(tx, account.id, now)) >= MAX_ACTIVE_KEYS) throw new AppError('key_limit_reached');
    const row = await insertApiKey(tx, {
      id: issued.id,
      serviceAccountId: account.id,
      prefix: issued.prefix,
      environment: deps.config.apiKeyEnvironment,
      keyHash: issued.hash,
      name: input.name,
      expiresAt,
      allowedCidrs,
      createdBy: personIdOf(caller),
      createdAt: now,
    });
    await deps.audit.record(
      tx,
      {
        action: 'service_account.key.create',
        actor: actorOf(caller),
        ...auditTenant(targetOf(account)),
        resourceType: 'api_key',
        resourceId: row.id,
        details: {
          serviceAccountId: account.id,
          name: input.name,
          keyPrefix: issued.display,
          expiresAt: iso(expiresAt),
          allowedCidrs,
        },
      },
      meta,
    );
    return { ...keyToJson(row, now), key: issued.key };
  });
}

const keyCursor = z.object({ c: z.string(), id: z.uuid() });

export async function listKeys(
  deps: Deps,
  caller: Principal,
  accountId: string,
  q: { limit: number; cursor?: string },
) {
  const account = await findServiceAccount(deps.db, caller, accountId);
  const after = decodeCursor(q.cursor, keyCursor);
  const rows = await listApiKeyRows(deps.db, account.id, { after, limit: q.limit });
  const now = deps.clock.now();
  const page = pageOf(rows, q.limit, (k) => ({ c: k.createdAt.toISOString(), id: k.id }));
  return { data: page.data.map((k) => keyToJson(k, now)), nextCursor: page.nextCursor };
}

async function keyOf(db: Executor, accountId: string, keyId: string) {
  const row = await apiKeyRowOf(db, accountId, keyId);
  if (!row) throw notFound('API key');
  return row;
}

/** Revocation is read by every instance on the key's next use (no cache holds a key): it bites on the next request. */
export async function revokeKey(
  deps: Deps,
  caller: Principal,
  accountId: string,
  keyId: string,
  meta: AuditRequestMeta,
) {
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const account = await administrableAccount(tx, caller, accountId);
    const key = await keyOf(tx, account.id, keyId);
    if (key.revokedAt) return keyToJson(key, now);
    const row = await revokeApiKeyRow(tx, keyId, now);
    await deps.audit.record(
      tx,
      {
        action: 'service_account.key.revoke',
        actor: actorOf(caller),
        ...auditTenant(targetOf(account)),
        resourceType: 'api_key',
        resourceId: keyId,
        details: {
          serviceAccountId: account.id,
          name: key.name,
          keyPrefix: displayPrefix(key.environment, key.prefix),
        },
      },
      meta,
    );
    return keyToJson(row ?? key, now);
  });
}

// The request context of a service account: built from its key on every request, read live from the
// database (key, account, role epoch), so a revoked key, an expired one, a disabled or deleted account, or a changed
// role is refused or applied on the next request on every instance. Nothing here outlives a request.
import type { AuditRecorder } from '../../access/audit.js';
import type { ResolvedRole, RoleCache } from '../../access/resolver.js';
import { type ActiveRelationship, relationshipsInForce } from '../../access/relationships.js';
import { effectiveSecurity, requireRelationshipsOf } from '../../access/settings.js';
import type { Db } from '../../db/connect.js';
import type { ApiKeyAuthenticator } from '../../access/caller.js';
import type { Principal } from '../../http/context.js';
import { customerControlReasons } from '../../access/decision.js';
import { AppError } from '../../http/errors.js';
import { refusalOf } from '../../http/refusal.js';
import type { RateLimits } from '../../http/rate-limit.js';
import type { Clock } from '../../platform/clock.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import { ipAllowed, keyMatches, looksLikeApiKey, normaliseIp, parseApiKey } from './key-format.js';
import { addKeyIp, keyById, keyByPrefix, touchKey, type KeyAuthRow } from './repo.js';

export interface KeyAuthDeps {
  db: Db;
  roleCache: RoleCache;
  clock: Clock;
  limits: RateLimits;
  audit: AuditRecorder;
  apiKeyEnvironment: string;
}

/** The pipeline's view of service-account credentials (src/access/caller.ts), wired in by src/deps.ts. */
export const apiKeyAuthenticator = (deps: KeyAuthDeps): ApiKeyAuthenticator => ({
  looksLikeApiKey,
  authenticateApiKey: (key, meta) => authenticateApiKey(deps, key, meta),
  servicePrincipalForToken: (accountId, keyId, meta) => servicePrincipalForToken(deps, accountId, keyId, meta),
});

type KeyRow = KeyAuthRow;

/** Last-used time and address of a key are written at most once per this interval (as a session's last-seen). */
export const KEY_LAST_USED_EVERY_MS = 60_000;

const dead = (message: string) => new AppError('unauthenticated', message);

/** An API key presented as a bearer credential: the principal of its service account, or 401/403/429. */
export async function authenticateApiKey(deps: KeyAuthDeps, key: string, meta: AuditRequestMeta): Promise<Principal> {
  const parsed = parseApiKey(key);
  if (!parsed) throw dead('The API key is not valid.');
  if (parsed.environment !== deps.apiKeyEnvironment)
    throw dead(`The API key is not for this environment (${deps.apiKeyEnvironment}).`);
  const ip = normaliseIp(meta.ip ?? '') ?? '';
  const row = (await keyByPrefix(deps.db, parsed.prefix, ip))?.[0];
  if (!row || !keyMatches(key, row.key_hash)) throw dead('The API key is not valid.');
  return admit(deps, row, { ip, userAgent: meta.userAgent });
}

/** An access token obtained with a key (client_credentials): the key must still be live, and the address allowed. */
export async function servicePrincipalForToken(
  deps: KeyAuthDeps,
  accountId: string,
  keyId: string,
  meta: AuditRequestMeta,
): Promise<Principal> {
  const ip = normaliseIp(meta.ip ?? '') ?? '';
  const row = (await keyById(deps.db, keyId, ip, accountId))?.[0];
  if (!row) throw dead('The access token is no longer valid.');
  return admit(deps, row, { ip, userAgent: meta.userAgent });
}

/** The checks every use of a key passes (liveness, allow-list, per-key limit), then the principal. */
async function admit(
  deps: KeyAuthDeps,
  row: KeyRow,
  meta: { ip: string; userAgent: string | null },
): Promise<Principal> {
  const { ip } = meta;
  const now = deps.clock.now();
  if (row.revoked_at) throw dead('The API key has been revoked.');
  if (row.expires_at && new Date(row.expires_at).getTime() <= now.getTime()) throw dead('The API key has expired.');
  if (row.disabled) throw dead('The service account is disabled.');
  const cidrs = typeof row.allowed_cidrs === 'string' ? (JSON.parse(row.allowed_cidrs) as string[]) : row.allowed_cidrs;
  if (!ipAllowed(ip, cidrs)) throw new AppError('ip_not_allowed');
  await deps.limits.enforce('apiKey', row.key_id);

  const role = await deps.roleCache.get(row.role_id, Number(row.epoch));
  if (!role) throw dead('The service account has no role.');
  const relationships = await relationshipsInForce(
    row.relationships,
    (id) => deps.roleCache.get(id, Number(row.epoch)),
    now.getTime(),
  );
  const principal = { ...serviceAccountPrincipal(row, role, relationships), ip };
  // An organisation's account the partner made speaks for the partner there: the organisation's controls hold it on
  // every request (a partner's own account meets them per organisation, as partner members do).
  if (row.org_id && row.made_by_partner) {
    const refusal = refusalOf(customerControlReasons(principal, row.org_id, row.org_settings), 'service account');
    if (refusal) throw refusal;
  }
  await recordUse(deps, principal, row, meta, now);
  return principal;
}

/** What a service account's principal is made of (the key row without the key's own state). */
export type ServiceAccountFacts = Pick<
  KeyRow,
  | 'key_id'
  | 'account_id'
  | 'client_id'
  | 'account_name'
  | 'partner_id'
  | 'org_id'
  | 'role_id'
  | 'partner_settings'
  | 'org_settings'
  | 'made_by_partner'
  | 'org_policies'
  | 'relationships'
  | 'epoch'
>;

/**
 * The principal of a service account: what every request with one of its keys carries, and what GET /access/explain
 * reasons about (`key_id` empty there: no key is presented).
 */
export function serviceAccountPrincipal(
  row: ServiceAccountFacts,
  role: ResolvedRole,
  /** The partner's relationships in force (relationshipsInForce of the row); a partner's own account is held to them. */
  relationships: ActiveRelationship[] = [],
): Principal {
  // Never `*:*`: creation and role changes refuse it; a role that gains it later (a parent changed) grants nothing by it.
  const permissions = new Set([...role.permissions].filter((k) => k !== '*:*'));
  return {
    actorType: 'service_account',
    userId: row.account_id,
    email: row.client_id,
    sessionId: row.key_id,
    serviceAccount: {
      id: row.account_id,
      name: row.account_name,
      clientId: row.client_id,
      keyId: row.key_id,
      madeByPartner: row.made_by_partner === true || !row.org_id,
    },
    mfa: false,
    mfaEnabled: false,
    tenantKind: row.org_id ? 'organization' : 'partner',
    partnerId: row.partner_id,
    orgId: row.org_id,
    roleId: row.role_id,
    roleName: role.name,
    orgAccess: row.org_id ? null : 'all',
    orgIds: [],
    siteIds: null,
    deviceGroupIds: null,
    permissions,
    security: row.org_id
      ? effectiveSecurity(row.partner_settings, row.org_settings)
      : effectiveSecurity(row.partner_settings),
    orgPolicies: typeof row.org_policies === 'string' ? JSON.parse(row.org_policies) : (row.org_policies ?? {}),
    // A partner's own account reaches its organisations as partner staff do: through active relationships only, when
    // the partner requires them.
    requireRelationships: !row.org_id && requireRelationshipsOf(row.partner_settings),
    relationships: row.org_id ? [] : relationships,
    // A service account cannot enrol or present a second factor: Force MFA holds people, not keys.
    mfaEnrollmentRequired: false,
    mfaStepUpWaived: false,
    epoch: Number(row.epoch),
    authTime: null,
  };
}

/**
 * Last used at and from where, coalesced to one write per key per minute (instances racing write once: the condition
 * repeats the interval). A use from an address the key was never used from is audited, once: the insert that adds the
 * address decides, and the audit record is written in its transaction.
 */
async function recordUse(
  deps: KeyAuthDeps,
  p: Principal,
  row: KeyRow,
  meta: { ip: string; userAgent: string | null },
  now: Date,
): Promise<void> {
  const { ip } = meta;
  const stale = !row.last_used_at || now.getTime() - new Date(row.last_used_at).getTime() >= KEY_LAST_USED_EVERY_MS;
  if (!row.ip_known) {
    await deps.db.transaction(async (tx) => {
      if (!(await addKeyIp(tx, row.key_id, ip, now))) return;
      await deps.audit.record(
        tx,
        {
          action: 'service_account.key.new_ip',
          actor: actorOf(p),
          partnerId: row.partner_id,
          orgId: row.org_id,
          resourceType: 'api_key',
          resourceId: row.key_id,
          details: { keyPrefix: row.prefix, newIp: ip, previousIp: row.last_used_ip },
        },
        meta,
      );
    });
  }
  if (stale) {
    const before = new Date(now.getTime() - KEY_LAST_USED_EVERY_MS);
    await touchKey(deps.db, row.key_id, ip, now, before);
  }
}

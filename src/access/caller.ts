// Who is calling: the access core turns a bearer credential into the live Principal (a person's session read with
// its membership, tenant settings and grants; or a service account through ApiKeyAuthenticator), and builds the same
// Principal for sign-in, refresh and explain. The HTTP hook (src/http/authenticate.ts) only reads the credential and
// attaches what this answers.
import { decodeJwt } from 'jose';
import type { Db } from '../db/connect.js';
import { normaliseIp } from '../platform/cidr.js';
import type { Clock } from '../platform/clock.js';
import type { AuditRecorder, AuditRequestMeta } from './audit.js';
import { accountReason } from './decision.js';
import { recordGrantExpiry } from './grants.js';
import type { LivenessCache } from './liveness-cache.js';
import type { ActiveGrant, OrgAccessMode, Principal } from './principal.js';
import {
  endSessionRow,
  type GrantRow,
  livenessStatement,
  type MembershipFacts,
  type SessionRow,
  touchSessionRow,
} from './repo.js';
import { hasPermission, type ResolvedRole, type RoleCache } from './resolver.js';
import { type ActiveRelationship, relationshipsInForce } from './relationships.js';
import {
  breakGlassUserOf,
  effectiveSecurity,
  ipAllowlistOf,
  forceMfaRoleIdsOf,
  phishingResistant,
  phishingResistantAdminsOf,
  requireRelationshipsOf,
  sessionEnded,
  sessionLimitsOf,
} from './settings.js';
import type { VerifiedTokenCache } from './token-cache.js';
import type { TokenService } from './tokens.js';

/** A jsonb array of ids (a string on drivers that do not parse jsonb). */
const jsonIds = (v: string[] | string | null | undefined): string[] =>
  v == null ? [] : typeof v === 'string' ? (JSON.parse(v) as string[]) : v;

/** node-postgres and PGlite both return uuid[] as arrays; parse the text form defensively. */
function uuidArray(v: string[] | string | null): string[] | null {
  if (v == null) return null;
  if (Array.isArray(v)) return v;
  const inner = v.replace(/^\{|\}$/g, '');
  return inner ? inner.split(',') : [];
}

/** A partner membership's org_ids, which mean what its orgAccess says: selected, eligible or excluded ones. */
const orgIdsWhen = (row: MembershipFacts, mode: OrgAccessMode): string[] =>
  row.scope === 'partner' && row.org_access === mode ? (uuidArray(row.pu_org_ids) ?? []) : [];

export interface CallerDeps {
  db: Db;
  tokens: TokenService;
  roleCache: RoleCache;
  clock: Clock;
  enable2fa: boolean;
  audit: AuditRecorder;
  /** Service accounts' API keys and the tokens obtained with them (modules/service-accounts, wired in src/deps.ts). */
  apiKeys: ApiKeyAuthenticator;
  /** This instance's liveness rows, invalidated by push; a request reads through it, sign-in and refresh do not. */
  liveness?: LivenessCache;
}

/**
 * How a service account's credential becomes a principal: the service-accounts module implements it
 * (apiKeyAuthenticator in modules/service-accounts/principal.ts) and src/deps.ts wires it in.
 */
export interface ApiKeyAuthenticator {
  /** Whether a bearer credential is meant as an API key (then it never goes to the JWT verifier). */
  looksLikeApiKey(token: string): boolean;
  /** An API key presented as a bearer credential: the principal of its service account, or 401/403/429. */
  authenticateApiKey(key: string, meta: AuditRequestMeta): Promise<Principal>;
  /** An access token obtained with a key (client_credentials, `client_id` claim): the key must still be live. */
  servicePrincipalForToken(accountId: string, keyId: string, meta: AuditRequestMeta): Promise<Principal>;
}

/** Last-seen of a session is written at most once per this interval, not on every request. */
export const LAST_SEEN_EVERY_MS = 60_000;

/** The condition repeats the interval so that instances racing on one session write it once. */
async function touchSession(db: Db, sid: string, now: number) {
  await touchSessionRow(db, sid, new Date(now), new Date(now - LAST_SEEN_EVERY_MS));
}

function grantRows(v: GrantRow[] | string | null | undefined): GrantRow[] {
  if (v == null) return [];
  return typeof v === 'string' ? (JSON.parse(v) as GrantRow[]) : v;
}

/** The grants of the row in force at `now`, and those past their end (not yet recorded as expired). */
export function splitGrants(
  row: Pick<MembershipFacts, 'jit_grants'>,
  now: number,
): { active: ActiveGrant[]; expired: GrantRow[] } {
  const active: ActiveGrant[] = [];
  const expired: GrantRow[] = [];
  for (const g of grantRows(row.jit_grants)) {
    const end = new Date(g.expires_at);
    if (end.getTime() > now)
      active.push({ id: g.id, orgId: g.org_id, siteId: g.site_id, expiresAt: end, approval: g.approval });
    else expired.push(g);
  }
  return { active, expired };
}

/** The session's liveness row: from the cache when given and warm, else from the database (and then cached). */
async function livenessRow(
  db: Db,
  cache: LivenessCache | undefined,
  sid: string,
  sub: string,
): Promise<SessionRow | null> {
  const hit = await cache?.get(sid, sub);
  if (hit) return hit;
  const ticket = cache?.ticket() ?? 0;
  const row = (await livenessStatement(db, sid, sub))?.[0] ?? null;
  if (row && cache) cache.set(ticket, row);
  return row;
}

/**
 * Loads the live principal for a verified token, or null when the session, user or membership is gone. With
 * `cached`, the row may come from this instance's liveness cache (a request); without, it is read (sign-in, refresh).
 */
export async function loadPrincipal(
  deps: CallerDeps,
  sub: string,
  sid: string,
  ip: string | null = null,
  cached = false,
): Promise<Principal | null> {
  const row = await livenessRow(deps.db, cached ? deps.liveness : undefined, sid, sub);
  if (!row) return null;
  const now = deps.clock.now().getTime();
  if (row.revoked_at) return null;
  if (new Date(row.expires_at).getTime() <= now || new Date(row.absolute_expires_at).getTime() <= now) return null;
  if (!accountReason(row.user_status).allowed) return null;
  const ended = sessionEnded(
    sessionLimitsOf(...tenantLevels(row)),
    {
      absoluteExpiresAt: new Date(row.absolute_expires_at),
      lastUsedAt: row.last_used_at ? new Date(row.last_used_at) : null,
    },
    now,
  );
  if (ended) {
    await endSessionRow(deps.db, row.session_id, ended, new Date(now));
    return null;
  }
  if (!row.last_used_at || now - new Date(row.last_used_at).getTime() >= LAST_SEEN_EVERY_MS) {
    await touchSession(deps.db, row.session_id, now);
    row.last_used_at = new Date(now); // the cached row too: this instance writes last-seen once per interval
  }

  const roleId = membershipRoleId(row);
  if (row.scope && !roleId) return null; // membership removed: its tokens die now
  const role = roleId ? await deps.roleCache.get(roleId, Number(row.epoch)) : null;
  if (roleId && !role) return null;
  const { expired } = splitGrants(row, now);
  if (expired.length) await recordExpiredGrants(deps, expired, now);
  const relationships = await relationshipsInForce(
    row.relationships,
    (id) => deps.roleCache.get(id, Number(row.epoch)),
    now,
  );
  return userPrincipal(row, role, {
    enable2fa: deps.enable2fa,
    ip,
    now,
    relationships,
    session: {
      id: row.session_id,
      mfa: row.session_mfa,
      method: row.session_method,
      authTime: row.auth_time,
      authMethod: row.auth_method,
    },
  });
}

/** Grants first seen expired are recorded (`access.expire`) by whichever instance marks each one (exactly once). */
/** The settings that govern a membership, partner first: a partner member's partner; an organisation and its partner. */
const tenantLevels = (
  row: Pick<MembershipFacts, 'scope' | 'partner_settings' | 'org_settings' | 'org_partner_settings'>,
) =>
  row.scope === 'partner'
    ? [row.partner_settings]
    : row.scope === 'organization'
      ? [row.org_partner_settings, row.org_settings]
      : [];

/** An administrative role: one that may change people or the tenant's settings. */
const isAdminRole = (role: ResolvedRole) =>
  hasPermission(role.permissions, 'users:write') || hasPermission(role.permissions, 'settings:write');

async function recordExpiredGrants(deps: CallerDeps, expired: GrantRow[], now: number) {
  await deps.db.transaction(async (tx) => {
    for (const g of expired) await recordGrantExpiry(tx, deps.audit, g.id, new Date(now), 'request');
  });
}

export const membershipRoleId = (row: Pick<MembershipFacts, 'scope' | 'pu_role_id' | 'ou_role_id'>) =>
  row.scope === 'partner' ? row.pu_role_id : row.scope === 'organization' ? row.ou_role_id : null;

/**
 * The principal of a person in one membership: what every request of theirs carries and what
 * GET /access/explain reasons about for a user without a session (`session` absent: no second factor verified).
 */
export function userPrincipal(
  row: MembershipFacts,
  role: ResolvedRole | null,
  opts: {
    enable2fa: boolean;
    ip?: string | null;
    now: number;
    /** The partner's relationships in force (relationshipsInForce of the row). */
    relationships?: ActiveRelationship[];
    session?: {
      id: string;
      mfa: boolean;
      method: string | null;
      authTime: Date | string | null;
      authMethod?: string | null;
    };
  },
): Principal {
  const { session } = opts;
  const levels = tenantLevels(row);
  const tenantSecurity = effectiveSecurity(...levels);
  // A role's phishing-resistant flag, or the tenant's for administrators, tightens the tenant's policy for its holders.
  const security =
    role?.phishingResistantOnly || (role && phishingResistantAdminsOf(...levels) && isAdminRole(role))
      ? phishingResistant(tenantSecurity)
      : tenantSecurity;
  const policyRequiresMfa =
    security.requireMfa || role?.forceMfa === true || (!!role && forceMfaRoleIdsOf(...levels).has(role.roleId));
  // Under a phishing-resistant policy only a passkey sign-in (or proof) counts as MFA, and only a passkey as enrolled.
  const sessionMfa = !!session?.mfa && (!security.phishingResistantOnly || /passkey/.test(session.method ?? ''));
  const factorEnrolled = security.phishingResistantOnly ? row.has_passkey === true : row.mfa_enabled;
  return {
    actorType: 'user',
    serviceAccount: null,
    userId: row.user_id,
    email: row.email,
    sessionId: session?.id ?? '',
    mfa: sessionMfa,
    mfaEnabled: row.mfa_enabled,
    tenantKind: row.scope,
    partnerId: row.scope === 'partner' ? row.partner_id : row.org_partner_id,
    orgId: row.scope === 'organization' ? row.org_id : null,
    roleId: membershipRoleId(row),
    roleName: role?.name ?? null,
    orgAccess: row.scope === 'partner' ? row.org_access : null,
    orgIds: orgIdsWhen(row, 'selected'),
    eligibleOrgIds: orgIdsWhen(row, 'eligible'),
    excludedOrgIds: orgIdsWhen(row, 'all_except'),
    grants: row.scope === 'partner' ? splitGrants(row, opts.now).active : [],
    requireRelationships: row.scope === 'partner' && requireRelationshipsOf(row.partner_settings),
    relationships: row.scope === 'partner' ? (opts.relationships ?? []) : [],
    accessGroupIds: row.scope === 'partner' ? jsonIds(row.access_groups) : [],
    siteIds: row.scope === 'organization' ? uuidArray(row.site_ids) : null,
    deviceGroupIds: row.scope === 'organization' ? uuidArray(row.device_group_ids) : null,
    permissions: role?.permissions ?? new Set(),
    security: { ...security, requireMfa: policyRequiresMfa },
    mfaEnrollmentRequired: opts.enable2fa && policyRequiresMfa && !factorEnrolled,
    mfaStepUpWaived: !opts.enable2fa,
    epoch: Number(row.epoch),
    authTime: session?.authTime ? new Date(session.authTime) : null,
    // The last proof was a passkey: a step-up with one, or a passkey sign-in not renewed since.
    authPhishingResistant: session?.authMethod
      ? session.authMethod === 'passkey'
      : /passkey/.test(session?.method ?? ''),
    ip: opts.ip ? (normaliseIp(opts.ip) ?? opts.ip) : null,
    ipAllowlist:
      row.scope === 'partner'
        ? ipAllowlistOf(row.partner_settings)
        : row.scope === 'organization'
          ? ipAllowlistOf(row.org_settings)
          : [],
    breakGlass: row.scope === 'partner' && breakGlassUserOf(row.partner_settings) === row.user_id,
    orgPolicies:
      row.scope === 'partner' && row.org_policies
        ? typeof row.org_policies === 'string'
          ? JSON.parse(row.org_policies)
          : row.org_policies
        : {},
    user: {
      name: row.user_name,
      avatarUrl: row.avatar_url,
      status: row.user_status as 'active',
      mfaMethod: row.mfa_method,
      phoneVerified: row.phone_verified,
      emailVerified: row.email_verified,
      phoneLast4: row.phone_last4,
      lastLoginAt: row.last_login_at ? new Date(row.last_login_at) : null,
      createdAt: new Date(row.user_created_at),
    },
  };
}

/** Why a bearer credential names no caller: a token that fails verification, or a session (or membership) that ended. */
export type NoCaller = 'token_invalid' | 'session_ended';

/**
 * The principal of a bearer credential: a service account's key or the token it obtained (client_id claim), else a
 * person's access token, its signature checked once per token (`verified`) and its session read live.
 */
export async function principalForBearer(
  deps: CallerDeps,
  verified: VerifiedTokenCache,
  token: string,
  meta: AuditRequestMeta,
  ip: string,
): Promise<Principal | NoCaller> {
  if (deps.apiKeys.looksLikeApiKey(token)) return deps.apiKeys.authenticateApiKey(token, meta);
  let claims = verified.get(token, deps.clock.now().getTime());
  if (!claims) {
    claims = await deps.tokens.verify(token);
    if (!claims) return 'token_invalid';
    const { exp } = decodeJwt(token);
    if (typeof exp === 'number') verified.set(token, claims, exp);
  }
  const principal = claims.clientId
    ? await deps.apiKeys.servicePrincipalForToken(claims.sub, claims.sid, meta)
    : await loadPrincipal(deps, claims.sub, claims.sid, ip, true);
  return principal ?? 'session_ended';
}

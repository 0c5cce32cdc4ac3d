// The session liveness check, tenant context and Force-MFA gate, run on every protected request.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { decodeJwt } from 'jose';
import type { Db } from '../db/connect.js';
import { preparedStatement, uuidArg } from '../db/prepared.js';
import type { ResolvedRole, RoleCache } from '../access/resolver.js';
import { accountReason } from '../access/decision.js';
import { endSessionRow, touchSessionRow } from '../access/repo.js';
import { enforceOwnIpAllowlist } from './ip-policy.js';
import { armBreakGlass } from '../access/break-glass.js';
import { recordGrantExpiry } from '../access/grants.js';
import type { TokenService } from '../access/tokens.js';
import {
  effectiveSecurity,
  allowedMethodList,
  breakGlassUserOf,
  forceMfaRoleIdsOf,
  ipAllowlistOf,
  phishingResistant,
  phishingResistantAdminsOf,
  sessionEnded,
  sessionLimitsOf,
} from '../access/settings.js';
import { hasPermission } from '../access/resolver.js';
import { normaliseIp } from '../platform/cidr.js';
import type { Clock } from '../platform/clock.js';
import type { AuditRecorder, AuditRequestMeta } from '../access/audit.js';
import type { ActiveGrant, Principal } from './context.js';
import { AppError } from './errors.js';
import { metaOf } from './meta.js';
import { isPeopleOnly } from './people-only.js';
import { attachScope } from './scope.js';
import type { RateLimits } from './rate-limit.js';
import { VerifiedTokenCache } from './token-cache.js';
import type { LivenessCache } from './liveness-cache.js';
import { asSystem } from '../db/row-security.js';
import { GRANTS_SQL, type GrantRow, ORG_POLICIES_SQL } from '../access/membership-sql.js';

export interface SessionRow {
  session_id: string;
  user_id: string;
  email: string;
  user_status: string;
  mfa_enabled: boolean;
  session_mfa: boolean;
  scope: 'partner' | 'organization' | null;
  partner_id: string | null;
  org_id: string | null;
  revoked_at: Date | string | null;
  expires_at: Date | string;
  absolute_expires_at: Date | string;
  auth_time: Date | string | null;
  last_used_at: Date | string | null;
  session_method: string | null;
  has_passkey: boolean;
  pu_role_id: string | null;
  org_access: 'all' | 'selected' | 'none' | 'eligible' | null;
  pu_org_ids: string[] | string | null;
  ou_role_id: string | null;
  site_ids: string[] | string | null;
  device_group_ids: string[] | string | null;
  partner_settings: unknown;
  org_settings: unknown;
  org_partner_id: string | null;
  org_partner_settings: unknown;
  /** Partner sessions: the partner's organisations that set policies on partner members, id → settings. */
  org_policies: Record<string, unknown> | string | null;
  /** Partner sessions: the member's just-in-time grants neither revoked nor yet seen expired (GRANTS_SQL). */
  jit_grants: GrantRow[] | string | null;
  epoch: number | string;
  user_name: string;
  avatar_url: string | null;
  mfa_method: 'totp' | 'sms' | 'passkey' | null;
  phone_verified: boolean;
  email_verified: boolean;
  phone_last4: string | null;
  last_login_at: Date | string | null;
  user_created_at: Date | string;
}

/** node-postgres and PGlite both return uuid[] as arrays; parse the text form defensively. */
function uuidArray(v: string[] | string | null): string[] | null {
  if (v == null) return null;
  if (Array.isArray(v)) return v;
  const inner = v.replace(/^\{|\}$/g, '');
  return inner ? inner.split(',') : [];
}

export interface AuthenticateDeps {
  db: Db;
  tokens: TokenService;
  roleCache: RoleCache;
  clock: Clock;
  enable2fa: boolean;
  enrollUrl: string;
  /** API keys: the per-key limit, the audit of a use from a new address, and this instance's key environment. */
  limits: RateLimits;
  audit: AuditRecorder;
  apiKeyEnvironment: string;
  /** Service accounts' API keys and the tokens obtained with them (modules/service-accounts, wired in src/deps.ts). */
  apiKeys: ApiKeyAuthenticator;
  /** This instance's liveness rows, invalidated by push; authenticate reads through it, sign-in and refresh do not. */
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
  const at = new Date(now);
  const before = new Date(now - LAST_SEEN_EVERY_MS);
  await touchSessionRow(db, sid, at, before);
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

/**
 * The one statement of an authenticated request: session, user (profile fields, never the password hash, TOTP secret
 * or recovery codes), membership, tenant settings and the authz epoch. Prepared by name on both databases, so it is
 * parsed and planned once per connection instead of on every request.
 */
const livenessStatement = preparedStatement<SessionRow, [string, string]>(
  'gh_liveness',
  `select s.id as session_id, u.id as user_id, u.email, u.status as user_status, u.mfa_enabled, s.mfa as session_mfa,
          u.name as user_name, u.avatar_url, u.mfa_method, u.phone_verified, u.email_verified, right(u.phone_number, 4) as phone_last4,
          u.last_login_at, u.created_at as user_created_at,
          s.scope, s.partner_id, s.org_id, s.revoked_at, s.expires_at, s.absolute_expires_at,
          s.auth_time, s.last_used_at, s.method as session_method,
          exists (select 1 from passkeys k where k.user_id = s.user_id) as has_passkey,
          pu.role_id as pu_role_id, pu.org_access, pu.org_ids as pu_org_ids,
          ou.role_id as ou_role_id, ou.site_ids, ou.device_group_ids,
          p.settings as partner_settings, o.settings as org_settings, o.partner_id as org_partner_id,
          op.settings as org_partner_settings,
          ${ORG_POLICIES_SQL('s.scope', 's.partner_id')} as org_policies,
          ${GRANTS_SQL('s.scope', 's.partner_id', 's.user_id')} as jit_grants,
          (select epoch from authz_state where id = 1) as epoch
   from sessions s
   join users u on u.id = s.user_id
   left join partner_users pu on s.scope = 'partner' and pu.partner_id = s.partner_id and pu.user_id = s.user_id
     and pu.status = 'active'
   left join organization_users ou on s.scope = 'organization' and ou.org_id = s.org_id and ou.user_id = s.user_id
     and ou.status = 'active'
   left join partners p on p.id = s.partner_id
   left join organizations o on o.id = s.org_id
   left join partners op on op.id = o.partner_id
   where s.id = $1 and s.user_id = $2`,
  [uuidArg, uuidArg],
);

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
 * `cached`, the row may come from this instance's liveness cache (authenticate); without, it is read (sign-in, refresh).
 */
export async function loadPrincipal(
  deps: AuthenticateDeps,
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
  return userPrincipal(row, role, {
    enable2fa: deps.enable2fa,
    ip,
    now,
    session: { id: row.session_id, mfa: row.session_mfa, method: row.session_method, authTime: row.auth_time },
  });
}

/** Grants first seen expired are recorded (`access.expire`) by whichever instance marks each one (exactly once). */
async function recordExpiredGrants(deps: AuthenticateDeps, expired: GrantRow[], now: number) {
  await deps.db.transaction(async (tx) => {
    for (const g of expired) await recordGrantExpiry(tx, deps.audit, g.id, new Date(now), 'request');
  });
}

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

/** What a person's membership is made of: the columns of the liveness statement without the session's own. */
export type MembershipFacts = Omit<
  SessionRow,
  | 'session_id'
  | 'session_mfa'
  | 'revoked_at'
  | 'expires_at'
  | 'absolute_expires_at'
  | 'auth_time'
  | 'last_used_at'
  | 'session_method'
>;

export const membershipRoleId = (row: Pick<MembershipFacts, 'scope' | 'pu_role_id' | 'ou_role_id'>) =>
  row.scope === 'partner' ? row.pu_role_id : row.scope === 'organization' ? row.ou_role_id : null;

/**
 * The principal of a person in one membership: what every request of theirs carries (authenticate) and what
 * GET /access/explain reasons about for a user without a session (`session` absent: no second factor verified).
 */
export function userPrincipal(
  row: MembershipFacts,
  role: ResolvedRole | null,
  opts: {
    enable2fa: boolean;
    ip?: string | null;
    now: number;
    session?: { id: string; mfa: boolean; method: string | null; authTime: Date | string | null };
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
    scope: row.scope,
    partnerId: row.scope === 'partner' ? row.partner_id : row.org_partner_id,
    orgId: row.scope === 'organization' ? row.org_id : null,
    roleId: membershipRoleId(row),
    roleName: role?.name ?? null,
    orgAccess: row.scope === 'partner' ? row.org_access : null,
    orgIds: row.scope === 'partner' && row.org_access === 'selected' ? (uuidArray(row.pu_org_ids) ?? []) : [],
    eligibleOrgIds: row.scope === 'partner' && row.org_access === 'eligible' ? (uuidArray(row.pu_org_ids) ?? []) : [],
    grants: row.scope === 'partner' ? splitGrants(row, opts.now).active : [],
    siteIds: row.scope === 'organization' ? uuidArray(row.site_ids) : null,
    deviceGroupIds: row.scope === 'organization' ? uuidArray(row.device_group_ids) : null,
    permissions: role?.permissions ?? new Set(),
    security: { ...security, requireMfa: policyRequiresMfa },
    mfaEnrollmentRequired: opts.enable2fa && policyRequiresMfa && !factorEnrolled,
    mfaStepUpWaived: !opts.enable2fa,
    authTime: session?.authTime ? new Date(session.authTime) : null,
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

export function bearerToken(req: FastifyRequest): string | null {
  const h = req.headers.authorization;
  if (!h) return null;
  const m = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i.exec(h.trim());
  return m ? m[1]! : null;
}

export interface AuthenticateOptions {
  /** Routes a user held by Force MFA may still call (own profile, logout, enrolment). */
  allowPendingMfaEnrollment?: boolean;
}

export function makeAuthenticate(deps: AuthenticateDeps) {
  // Signatures are checked once per token, not per request; liveness comes from the push-invalidated cache when warm.
  const verified = new VerifiedTokenCache();
  return (opts: AuthenticateOptions = {}) =>
    async function authenticate(req: FastifyRequest, _reply: FastifyReply): Promise<void> {
      const token = bearerToken(req);
      if (!token) throw new AppError('unauthenticated');
      // A service account's key (`gh_...`) or the token it obtained (client_id claim): the same Principal shape, its scope.
      // The lookups that identify the caller run before its Scope exists: the system context `authenticate`.
      const principal = await asSystem('authenticate', async (): Promise<Principal | null> => {
        if (deps.apiKeys.looksLikeApiKey(token)) return deps.apiKeys.authenticateApiKey(token, metaOf(req));
        let claims = verified.get(token, deps.clock.now().getTime());
        if (!claims) {
          claims = await deps.tokens.verify(token);
          if (!claims) throw new AppError('unauthenticated', 'The access token is invalid or has expired.');
          const { exp } = decodeJwt(token);
          if (typeof exp === 'number') verified.set(token, claims, exp);
        }
        return claims.clientId
          ? deps.apiKeys.servicePrincipalForToken(claims.sub, claims.sid, metaOf(req))
          : loadPrincipal(deps, claims.sub, claims.sid, req.ip, true);
      });
      if (!principal) throw new AppError('unauthenticated', 'The session has ended; sign in again.');
      req.auth = principal;
      attachScope(req, principal);
      // A token replayed from outside the tenant's IP allow-list is refused, on every request.
      if (principal.actorType === 'user') {
        await enforceOwnIpAllowlist(deps, principal, metaOf(req));
        armBreakGlass(principal, req.headers);
      }
      if (principal.actorType === 'service_account' && isPeopleOnly(req.routeOptions.url))
        throw new AppError('service_account_not_allowed');
      if (principal.mfaEnrollmentRequired && !opts.allowPendingMfaEnrollment) {
        throw new AppError('mfa_enrollment_required', undefined, {
          enrollUrl: deps.enrollUrl,
          allowedMethods: allowedMethodList(principal.security),
        });
      }
    };
}

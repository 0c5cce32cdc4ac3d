// The session liveness check, tenant context and Force-MFA gate, run on every protected request.
import { sql } from 'drizzle-orm';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/connect.js';
import type { RoleCache } from '../modules/roles/resolver.js';
import type { TokenService } from '../modules/auth/tokens.js';
import { effectiveSecurity, allowedMethodList, phishingResistant } from '../modules/tenants/settings.js';
import type { Clock } from '../platform/clock.js';
import type { Principal } from './context.js';
import { AppError } from './errors.js';

interface SessionRow {
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
  org_access: 'all' | 'selected' | 'none' | null;
  pu_org_ids: string[] | string | null;
  ou_role_id: string | null;
  site_ids: string[] | string | null;
  device_group_ids: string[] | string | null;
  partner_settings: unknown;
  org_settings: unknown;
  org_partner_id: string | null;
  org_partner_settings: unknown;
  epoch: number | string;
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
}

/** Last-seen of a session is written at most once per this interval, not on every request. */
export const LAST_SEEN_EVERY_MS = 60_000;

/** The condition repeats the interval so that instances racing on one session write it once. */
async function touchSession(db: Db, sid: string, now: number) {
  const at = new Date(now);
  const before = new Date(now - LAST_SEEN_EVERY_MS);
  await db.execute(sql`update sessions set last_used_at = ${at} where id = ${sid} and (last_used_at is null or last_used_at <= ${before})`);
}

/** Loads the live principal for a verified token, or null when the session, user or membership is gone. */
export async function loadPrincipal(deps: AuthenticateDeps, sub: string, sid: string): Promise<Principal | null> {
  const result = await deps.db.execute(sql`
    select s.id as session_id, u.id as user_id, u.email, u.status as user_status, u.mfa_enabled, s.mfa as session_mfa,
           s.scope, s.partner_id, s.org_id, s.revoked_at, s.expires_at, s.absolute_expires_at,
           s.auth_time, s.last_used_at, s.method as session_method,
           exists (select 1 from passkeys k where k.user_id = s.user_id) as has_passkey,
           pu.role_id as pu_role_id, pu.org_access, pu.org_ids as pu_org_ids,
           ou.role_id as ou_role_id, ou.site_ids, ou.device_group_ids,
           p.settings as partner_settings, o.settings as org_settings, o.partner_id as org_partner_id,
           op.settings as org_partner_settings,
           (select epoch from authz_state where id = 1) as epoch
    from sessions s
    join users u on u.id = s.user_id
    left join partner_users pu on s.scope = 'partner' and pu.partner_id = s.partner_id and pu.user_id = s.user_id
    left join organization_users ou on s.scope = 'organization' and ou.org_id = s.org_id and ou.user_id = s.user_id
    left join partners p on p.id = s.partner_id
    left join organizations o on o.id = s.org_id
    left join partners op on op.id = o.partner_id
    where s.id = ${sid} and s.user_id = ${sub}`);
  const row = (result as unknown as { rows: SessionRow[] }).rows[0];
  if (!row) return null;
  const now = deps.clock.now().getTime();
  if (row.revoked_at) return null;
  if (new Date(row.expires_at).getTime() <= now || new Date(row.absolute_expires_at).getTime() <= now) return null;
  if (row.user_status !== 'active') return null;
  if (!row.last_used_at || now - new Date(row.last_used_at).getTime() >= LAST_SEEN_EVERY_MS) await touchSession(deps.db, row.session_id, now);

  const roleId = row.scope === 'partner' ? row.pu_role_id : row.scope === 'organization' ? row.ou_role_id : null;
  if (row.scope && !roleId) return null; // membership removed: its tokens die now
  const role = roleId ? await deps.roleCache.get(roleId, Number(row.epoch)) : null;
  if (roleId && !role) return null;

  const tenantSecurity =
    row.scope === 'partner'
      ? effectiveSecurity(row.partner_settings)
      : row.scope === 'organization'
        ? effectiveSecurity(row.org_partner_settings, row.org_settings)
        : effectiveSecurity();
  // A role's phishing-resistant flag tightens the tenant's policy for its holders.
  const security = role?.phishingResistantOnly ? phishingResistant(tenantSecurity) : tenantSecurity;
  const policyRequiresMfa = security.requireMfa || role?.forceMfa === true;
  // Under a phishing-resistant policy only a passkey sign-in (or proof) counts as MFA, and only a passkey as enrolled.
  const sessionMfa = row.session_mfa && (!security.phishingResistantOnly || /passkey/.test(row.session_method ?? ''));
  const factorEnrolled = security.phishingResistantOnly ? row.has_passkey === true : row.mfa_enabled;
  return {
    userId: row.user_id,
    email: row.email,
    sessionId: row.session_id,
    mfa: sessionMfa,
    mfaEnabled: row.mfa_enabled,
    scope: row.scope,
    partnerId: row.scope === 'partner' ? row.partner_id : row.org_partner_id,
    orgId: row.scope === 'organization' ? row.org_id : null,
    roleId,
    roleName: role?.name ?? null,
    orgAccess: row.scope === 'partner' ? row.org_access : null,
    orgIds: row.scope === 'partner' && row.org_access === 'selected' ? (uuidArray(row.pu_org_ids) ?? []) : [],
    siteIds: row.scope === 'organization' ? uuidArray(row.site_ids) : null,
    deviceGroupIds: row.scope === 'organization' ? uuidArray(row.device_group_ids) : null,
    permissions: role?.permissions ?? new Set(),
    security: { ...security, requireMfa: policyRequiresMfa },
    mfaEnrollmentRequired: deps.enable2fa && policyRequiresMfa && !factorEnrolled,
    mfaStepUpWaived: !deps.enable2fa,
    authTime: row.auth_time ? new Date(row.auth_time) : null,
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
  return (opts: AuthenticateOptions = {}) =>
    async function authenticate(req: FastifyRequest, _reply: FastifyReply): Promise<void> {
      const token = bearerToken(req);
      if (!token) throw new AppError('unauthenticated');
      const claims = await deps.tokens.verify(token);
      if (!claims) throw new AppError('unauthenticated', 'The access token is invalid or has expired.');
      const principal = await loadPrincipal(deps, claims.sub, claims.sid);
      if (!principal) throw new AppError('unauthenticated', 'The session has ended; sign in again.');
      req.auth = principal;
      if (principal.mfaEnrollmentRequired && !opts.allowPendingMfaEnrollment) {
        throw new AppError('mfa_enrollment_required', undefined, {
          enrollUrl: deps.enrollUrl,
          allowedMethods: allowedMethodList(principal.security),
        });
      }
    };
}

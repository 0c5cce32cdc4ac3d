// Who is calling: the principal the access core loads once per request (caller.ts), and what the
// access decisions (decision.ts), the scope (scope.ts) and every module reason about.
import type { Executor } from '../db/connect.js';
import type { ActiveRelationship } from './relationships.js';
import type { GovernedTarget, GovernorEvent } from './governor.js';
import type { AccessReason } from './reasons.js';
import type { EffectiveSecurity } from './settings.js';

/** The governor's charge, as the by-id rule and the evaluation API call it (src/access/governor.ts Governor). */
export interface BudgetMeter {
  charge(
    ex: Executor,
    p: Principal,
    permissions: readonly string[],
    target: GovernedTarget,
  ): Promise<AccessReason | null>;
}

/** A freeze in force: why, by whom (by name), from which side, since when. */
export interface FreezeInfo {
  reason: string;
  at: string;
  side: 'partner' | 'organization';
  byType: 'user' | 'service_account';
  byId: string;
  byName: string;
}

/** The freezes bearing on one partner: its own (all of its staff and service accounts) and its organisations'. */
export interface TenantFreezes {
  partner: FreezeInfo | null;
  orgs: ReadonlyMap<string, FreezeInfo>;
}

/** Who is calling, in which tenant, through which session: resolved once per request by authenticate. */
export interface Principal {
  /** A person (a session) or a service account (an API key, or an access token obtained with one). */
  actorType: 'user' | 'service_account';
  /** The user's id; for a service account, the service account's id. */
  userId: string;
  /** The user's email; for a service account, its clientId (never written to the audit trail as an email). */
  email: string;
  /** The session's id; for a service account, the id of the key it authenticated with. */
  sessionId: string;
  /** Set for a service account only. */
  serviceAccount: ServiceAccountActor | null;
  /** This session verified a second factor. */
  mfa: boolean;
  mfaEnabled: boolean;
  /** The kind of membership the caller acts in (a service account: of the tenant that owns it); null between memberships. */
  tenantKind: 'partner' | 'organization' | null;
  partnerId: string | null;
  orgId: string | null;
  roleId: string | null;
  roleName: string | null;
  /**
   * A partner member: which organisations the caller may act on (`eligible`: none standing; just-in-time grants only;
   * `all_except`: every organisation of the partner but `excludedOrgIds`, those created later included).
   */
  orgAccess: OrgAccessMode | null;
  /** orgAccess `selected`: the organisations of standing access. */
  orgIds: string[];
  /** orgAccess `all_except`: the organisations left out. */
  excludedOrgIds?: string[];
  /** orgAccess `eligible`: the organisations the member may request just-in-time access to. */
  eligibleOrgIds?: string[];
  /** A partner member's just-in-time grants in force now (read with the session on every request, never cached). */
  grants?: ActiveGrant[];
  /** A partner member whose partner requires relationships: organisations are reached only through active ones. */
  requireRelationships?: boolean;
  /** The partner's relationships in force now (read with the session on every request, never cached past their end). */
  relationships?: ActiveRelationship[];
  /** A partner member whose partner requires relationships: its access groups (read with the session on every request). */
  accessGroupIds?: string[];
  /** The permissions the route asks for (set by requirePermission): a relationship's roles must cover them. */
  asked?: readonly string[];
  /** An organisation member: null = every site / device group. */
  siteIds: string[] | null;
  deviceGroupIds: string[] | null;
  permissions: ReadonlySet<string>;
  security: EffectiveSecurity;
  /** Force MFA applies and no factor is enrolled. */
  mfaEnrollmentRequired: boolean;
  /** The session's last password or second-factor proof (step-up); null when none is recorded. */
  authTime: Date | null;
  /** The proof at authTime was phishing-resistant (a passkey): what a budget's step-up asks for. */
  authPhishingResistant?: boolean;
  /** ENABLE_2FA=false: no session can verify a second factor, so step-up (requireMfa) cannot be asked for. */
  mfaStepUpWaived: boolean;
  /** The request's client address; null when the principal was built without a request (GET /access/explain). */
  ip?: string | null;
  /** The own tenant's IP allow-list (a partner member: the partner's; an organisation member: the organisation's); [] = any. */
  ipAllowlist?: string[];
  /** The partner's designated break-glass account, acting in its partner membership: exempt from IP allow-lists, audited. */
  breakGlass?: boolean;
  /** The break-glass account's stated reason (header x-break-glass-reason): lets it into an organisation that suspended partner access. */
  breakGlassReason?: string | null;
  /** Organisations this request reached as break-glass past their mspAccess (alerted once the answer is sent). */
  breakGlassUsed?: Set<string>;
  /** A partner member: the partner's organisations that set policies on partner members (IP allow-list, mspAccess), by id. */
  orgPolicies?: Record<string, unknown>;
  /** The authorisation epoch the principal was read at (freezes and role caches are keyed by it). */
  epoch?: number;
  /** The freezes in force on the principal's partner and on its organisations (set by authenticate and explain). */
  freezes?: TenantFreezes;
  /** Organisations (or '*' for the partner) whose freeze this request passed as the break-glass account (audited). */
  freezePassed?: Set<string>;
  /** The governor that meters this principal's destructive actions (set by authenticate; absent: not metered). */
  governor?: BudgetMeter;
  /** This request's use of destructive permissions, one member of the budget however many records it reaches. */
  governorUseId?: string;
  /** Budget trips and unlocks of this request (audited once the answer is sent). */
  governorEvents?: GovernorEvent[];
  /** The caller's profile fields, read with the session check (GET /users/me answers from them, no second query). */
  user?: PrincipalUser;
}

/** How a partner member reaches the partner's organisations standing. */
export type OrgAccessMode = 'all' | 'selected' | 'none' | 'eligible' | 'all_except';

/** A just-in-time grant in force: it widens the member's scope to the organisation (or one site of it) until expiresAt. */
export interface ActiveGrant {
  id: string;
  orgId: string;
  siteId: string | null;
  expiresAt: Date;
  approval: 'auto' | 'partner_admin' | 'customer_admin';
}

export interface ServiceAccountActor {
  id: string;
  name: string;
  clientId: string;
  keyId: string;
  /** A partner's account, or an organisation's that someone acting for the partner made. */
  madeByPartner?: boolean;
}

/** Whether the caller speaks for the partner: a partner member, or a service account the partner owns or made. */
export const speaksForPartner = (p: Principal): boolean =>
  p.actorType === 'service_account' ? p.serviceAccount?.madeByPartner === true : p.tenantKind === 'partner';

/** Profile fields of the user read by the per-request session check; never a secret (hash, TOTP secret, codes). */
export interface PrincipalUser {
  name: string;
  avatarUrl: string | null;
  status: 'active' | 'invited' | 'disabled';
  mfaMethod: 'totp' | 'sms' | 'passkey' | null;
  phoneVerified: boolean;
  emailVerified: boolean;
  phoneLast4: string | null;
  lastLoginAt: Date | null;
  createdAt: Date;
}

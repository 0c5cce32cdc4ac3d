// Security settings of partners and organisations: the partner's value applies to
// every organisation and the strictest wins.
import { z } from 'zod';
import { normaliseCidr, normaliseIp } from '../platform/cidr.js';
import { governorSettingsSchema } from './governor-settings.js';

/** An address or CIDR block of an allow-list, as stored (`10.1.2.3` → `10.1.2.3/32`), or null when it is neither. */
export function allowlistEntry(v: string): string | null {
  const ip = v.includes('/') ? null : normaliseIp(v.trim());
  if (ip) return `${ip}/${ip.includes(':') ? 128 : 32}`;
  return normaliseCidr(v);
}
const allowlist = z
  .array(
    z
      .string()
      .max(64)
      .refine((v) => allowlistEntry(v) !== null, 'must be an IPv4 or IPv6 address or CIDR block'),
  )
  .max(200)
  .describe(
    'IP allow-list: addresses or CIDR blocks, IPv4 and IPv6; empty = any address. Partner: its members; organisation: its members and partner members acting in it.',
  );

export const MFA_METHODS = ['totp', 'sms', 'passkey'] as const;
export type MfaMethodName = (typeof MFA_METHODS)[number];

export const securitySettingsSchema = z.strictObject({
  requireMfa: z.boolean().optional(),
  /** Only passkeys satisfy MFA (implies requireMfa; TOTP, SMS and recovery codes do not count). */
  phishingResistantOnly: z.boolean().optional(),
  allowedMfaMethods: z
    .strictObject({ totp: z.boolean().optional(), sms: z.boolean().optional(), passkey: z.boolean().optional() })
    .optional(),
  /** Holders of an administrative role (one that manages people or settings) satisfy MFA with passkeys only. */
  phishingResistantAdmins: z
    .boolean()
    .optional()
    .describe(
      'Holders of an administrative role (one that may change users or settings) must use a passkey as their second factor',
    ),
  /** Roles whose holders must use MFA here, built-in ones included (their own Force MFA flag is shared by every tenant). */
  forceMfaRoleIds: z
    .array(z.uuid())
    .max(100)
    .optional()
    .describe(
      'Roles whose holders must use a second factor in this tenant, built-in roles included; a partner list holds in every organisation too',
    ),
  /** A session ends this many hours after its sign-in, whatever its activity. */
  sessionMaxHours: z
    .number()
    .int()
    .min(1)
    .max(720)
    .nullable()
    .optional()
    .describe(
      'Session lifetime: a session ends this many hours after its sign-in (1 to 720); null or absent = 720 (30 days)',
    ),
  /** A session with no request for this many minutes ends. */
  idleTimeoutMinutes: z
    .number()
    .int()
    .min(5)
    .max(43200)
    .nullable()
    .optional()
    .describe(
      'Idle lifetime: a session with no request for this many minutes ends (5 to 43200); null or absent = only the refresh-token lifetime',
    ),
  ipAllowlist: allowlist.optional(),
  /** Partner only: the designated break-glass account (a member of the partner), exempt from IP allow-lists, audited. */
  breakGlassUserId: z
    .uuid()
    .nullable()
    .optional()
    .describe(
      'Partner only: the break-glass account, a partner member exempt from IP allow-lists (every use audited); null clears it',
    ),
  /** Partner only: the longest just-in-time grant a member may request, in minutes (default 480). */
  jitMaxMinutes: z
    .number()
    .int()
    .min(5)
    .max(10080)
    .optional()
    .describe(
      'Partner only: the longest just-in-time access a member may request, in minutes (default 480, at most 7 days)',
    ),
  /** Partner only: standing organisation access unused this many days lapses to eligible (null or absent = never). */
  standingAccessLapseDays: z
    .number()
    .int()
    .min(7)
    .max(365)
    .nullable()
    .optional()
    .describe(
      "Partner only: a member's standing organisation access (orgAccess all or selected) unused for this many days lapses to eligible (just-in-time), after a warning mail to the member and the Partner Admins; Partner Admins are exempt. 7 to 365; null or absent = never (the default)",
    ),
});
/** How far the organisation lets its partner's staff in, least strict first. */
// `approval_required`: a partner member reaches the organisation only through a just-in-time grant its own admins approved.
export const MSP_ACCESS = ['allowed', 'approval_required', 'suspended'] as const;
export type MspAccess = (typeof MSP_ACCESS)[number];
/** Who approves a just-in-time access request to the organisation, least strict first. */
export const JIT_APPROVAL = ['auto', 'partner_admin', 'customer_admin'] as const;
export type JitApproval = (typeof JIT_APPROVAL)[number];
export const JIT_MAX_MINUTES_DEFAULT = 480;
export const tenantSettingsSchema = z
  .strictObject({
    security: securitySettingsSchema.optional(),
    requireRelationships: z
      .boolean()
      .optional()
      .describe(
        "Partner only: on, the partner's staff reach an organisation only through an active delegated-access relationship with it, within that relationship's roles, sites and device groups; off (the default) keeps standing access as it is",
      ),
    mspAccess: z
      .enum(MSP_ACCESS)
      .optional()
      .describe(
        "Organisation only: allowed (default); approval_required (every partner member needs a just-in-time grant approved by one of the organisation's admins); suspended (no partner member, only the partner's break-glass account with a reason). Only the organisation's own admins may loosen it.",
      ),
    jitApproval: z
      .enum(JIT_APPROVAL)
      .optional()
      .describe(
        "Organisation only: who approves a partner member's just-in-time access request: auto (granted at once, the default), partner_admin, customer_admin (one of the organisation's admins). Only the organisation's own admins may loosen it.",
      ),
    governor: governorSettingsSchema.optional(),
  })
  .meta({ id: 'TenantSettings' });
export type TenantSettings = z.infer<typeof tenantSettingsSchema>;

export interface EffectiveSecurity {
  requireMfa: boolean;
  allowedMfaMethods: Record<MfaMethodName, boolean>;
  phishingResistantOnly: boolean;
}

function read(settings: unknown): TenantSettings {
  const parsed = tenantSettingsSchema.safeParse(settings ?? {});
  return parsed.success ? parsed.data : {};
}

/** Combines any number of levels (partner, organisation): a requirement anywhere holds; a method is allowed only if every level allows it. */
export function effectiveSecurity(...levels: unknown[]): EffectiveSecurity {
  const out: EffectiveSecurity = {
    requireMfa: false,
    allowedMfaMethods: { totp: true, sms: true, passkey: true },
    phishingResistantOnly: false,
  };
  for (const level of levels) {
    const sec = read(level).security;
    if (!sec) continue;
    out.requireMfa ||= sec.requireMfa === true;
    for (const m of MFA_METHODS) if (sec.allowedMfaMethods?.[m] === false) out.allowedMfaMethods[m] = false;
    out.phishingResistantOnly ||= sec.phishingResistantOnly === true;
  }
  return out.phishingResistantOnly ? phishingResistant(out) : out;
}

/** Phishing-resistant MFA: MFA is required and only passkeys may be enrolled or satisfy it. */
export function phishingResistant(s: EffectiveSecurity): EffectiveSecurity {
  return {
    requireMfa: true,
    phishingResistantOnly: true,
    allowedMfaMethods: { totp: false, sms: false, passkey: s.allowedMfaMethods.passkey },
  };
}

export const allowedMethodList = (s: EffectiveSecurity) => MFA_METHODS.filter((m) => s.allowedMfaMethods[m]);

/** PATCH semantics for settings: keys given replace, keys left out stay (a partial update never drops requireMfa). */
export function mergeSettings(current: unknown, patch: TenantSettings): TenantSettings {
  const base = tenantSettingsSchema.safeParse(current ?? {});
  const cur = base.success ? base.data : {};
  if (patch.mspAccess) cur.mspAccess = patch.mspAccess;
  if (patch.jitApproval) cur.jitApproval = patch.jitApproval;
  if (patch.requireRelationships !== undefined) cur.requireRelationships = patch.requireRelationships;
  if (patch.governor) cur.governor = { ...cur.governor, ...patch.governor };
  if (!patch.security) return cur;
  return {
    ...cur,
    security: {
      ...cur.security,
      ...patch.security,
      ...(patch.security.allowedMfaMethods || cur.security?.allowedMfaMethods
        ? { allowedMfaMethods: { ...cur.security?.allowedMfaMethods, ...patch.security.allowedMfaMethods } }
        : {}),
    },
  };
}

/** Refresh tokens slide for REFRESH_TOKEN_TTL, but never past this from sign-in. */
export const ABSOLUTE_SESSION_MS = 30 * 24 * 3600 * 1000;

export interface SessionLimits {
  maxMs: number | null;
  idleMs: number | null;
}

const shorter = (a: number | null, b: number | null) => (a == null ? b : b == null ? a : Math.min(a, b));

/** The session and idle lifetimes of any number of levels (partner, organisation): the shortest wins. */
export function sessionLimitsOf(...levels: unknown[]): SessionLimits {
  let out: SessionLimits = { maxMs: null, idleMs: null };
  for (const level of levels) {
    const sec = read(level).security;
    out = {
      maxMs: shorter(out.maxMs, sec?.sessionMaxHours ? sec.sessionMaxHours * 3600_000 : null),
      idleMs: shorter(out.idleMs, sec?.idleTimeoutMinutes ? sec.idleTimeoutMinutes * 60_000 : null),
    };
  }
  return out;
}

/**
 * Why a session has ended under its tenant's lifetimes at `now`, or null while it may go on. Its sign-in is read
 * from the absolute expiry (always sign-in + ABSOLUTE_SESSION_MS); its last activity from last-seen.
 */
export function sessionEnded(
  limits: SessionLimits,
  session: { absoluteExpiresAt: Date; lastUsedAt: Date | null },
  now: number,
): 'session_lifetime' | 'idle_timeout' | null {
  const signedInAt = session.absoluteExpiresAt.getTime() - ABSOLUTE_SESSION_MS;
  if (limits.maxMs != null && now - signedInAt >= limits.maxMs) return 'session_lifetime';
  const lastSeen = session.lastUsedAt?.getTime() ?? signedInAt;
  if (limits.idleMs != null && now - lastSeen >= limits.idleMs) return 'idle_timeout';
  return null;
}

/** Role ids whose holders must use MFA under these levels (a requirement anywhere holds). */
export function forceMfaRoleIdsOf(...levels: unknown[]): Set<string> {
  return new Set(levels.flatMap((l) => read(l).security?.forceMfaRoleIds ?? []));
}

/** Whether any level asks administrators for phishing-resistant MFA. */
export const phishingResistantAdminsOf = (...levels: unknown[]): boolean =>
  levels.some((l) => read(l).security?.phishingResistantAdmins === true);

/** The tenant's own IP allow-list as stored ([] = any address). */
export function ipAllowlistOf(settings: unknown): string[] {
  return read(settings).security?.ipAllowlist ?? [];
}

/** The partner's designated break-glass account, if any. */
export const breakGlassUserOf = (partnerSettings: unknown): string | null =>
  read(partnerSettings).security?.breakGlassUserId ?? null;

/** Allow-list entries in their stored form. */
export function normaliseAllowlist(settings: TenantSettings): TenantSettings {
  const list = settings.security?.ipAllowlist;
  if (!list) return settings;
  return {
    ...settings,
    security: { ...settings.security, ipAllowlist: [...new Set(list.map((e) => allowlistEntry(e)!))] },
  };
}

/** The organisation's mspAccess (default allowed). */
export const mspAccessOf = (orgSettings: unknown): MspAccess => read(orgSettings).mspAccess ?? 'allowed';
export const mspStrictness = (m: MspAccess) => MSP_ACCESS.indexOf(m);

/**
 * The approval a just-in-time request to the organisation needs: its jitApproval (default auto), and always a customer
 * admin's under mspAccess approval_required (only a customer-approved grant lets a partner member in there).
 */
export const jitApprovalOf = (orgSettings: unknown): JitApproval =>
  mspAccessOf(orgSettings) === 'approval_required' ? 'customer_admin' : (read(orgSettings).jitApproval ?? 'auto');
export const jitStrictness = (a: JitApproval) => JIT_APPROVAL.indexOf(a);

/** The partner's longest just-in-time grant, in minutes. */
export const jitMaxMinutesOf = (partnerSettings: unknown): number =>
  read(partnerSettings).security?.jitMaxMinutes ?? JIT_MAX_MINUTES_DEFAULT;

/** The partner's standing-access lapse period in days, or null when off (the default). */
export const standingAccessLapseDaysOf = (partnerSettings: unknown): number | null =>
  read(partnerSettings).security?.standingAccessLapseDays ?? null;

/** Whether the partner's staff reach organisations only through active relationships (default off). */
export const requireRelationshipsOf = (partnerSettings: unknown): boolean =>
  read(partnerSettings).requireRelationships === true;

// Security settings of partners and organisations (spec 2.9, CONTRACT 7): the partner's value applies to
// every organisation and the strictest wins.
import { z } from 'zod';

export const MFA_METHODS = ['totp', 'sms', 'passkey'] as const;
export type MfaMethodName = (typeof MFA_METHODS)[number];

export const securitySettingsSchema = z.strictObject({
  requireMfa: z.boolean().optional(),
  /** Only passkeys satisfy MFA (implies requireMfa; TOTP, SMS and recovery codes do not count). */
  phishingResistantOnly: z.boolean().optional(),
  allowedMfaMethods: z
    .strictObject({ totp: z.boolean().optional(), sms: z.boolean().optional(), passkey: z.boolean().optional() })
    .optional(),
});
export const tenantSettingsSchema = z.strictObject({ security: securitySettingsSchema.optional() });
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
  const out: EffectiveSecurity = { requireMfa: false, allowedMfaMethods: { totp: true, sms: true, passkey: true }, phishingResistantOnly: false };
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
  return { requireMfa: true, phishingResistantOnly: true, allowedMfaMethods: { totp: false, sms: false, passkey: s.allowedMfaMethods.passkey } };
}

export const allowedMethodList = (s: EffectiveSecurity) => MFA_METHODS.filter((m) => s.allowedMfaMethods[m]);

/** PATCH semantics for settings: keys given replace, keys left out stay (a partial update never drops requireMfa). */
export function mergeSettings(current: unknown, patch: TenantSettings): TenantSettings {
  const base = tenantSettingsSchema.safeParse(current ?? {});
  const cur = base.success ? base.data : {};
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

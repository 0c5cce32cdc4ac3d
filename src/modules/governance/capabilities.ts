// What the caller may do on one tenant, for the console to hide or disable the rest with the reason: each answer is
// the decision GET /access/explain gives (decide: the policies authenticate applies, the permission, the record's
// scope), plus a route's own extra rule where it has one (creating and deleting organisations).
import { PERMISSIONS as P } from '../../access/catalog.js';
import { decide, type Owner, type PartnerOwned } from '../../access/decision.js';
import type { Deps } from '../../deps.js';
import type { Principal } from '../../http/context.js';
import { AppError, ERROR_CATALOG, notFound } from '../../http/errors.js';
import { assertFullOrgAccess } from '../../http/guards.js';
import { assertFullPartnerAccess, covers, ORGANIZATION } from '../tenants/index.js';

export const CAPABILITIES = [
  'organization.create',
  'organization.update',
  'organization.delete',
  'settings.update',
  'users.invite',
  'users.update',
  'users.delete',
  'roles.manage',
  'roles.delete',
  'audit.read',
  'sso.manage',
  'domains.manage',
  'webhooks.manage',
  'devices.update',
  'devices.delete',
  'enrollment_keys.manage',
] as const;
export type Capability = (typeof CAPABILITIES)[number];

const RULES: Record<
  Capability,
  { permission: string; on: 'partner' | 'tenant' | 'organization'; extra?: (p: Principal) => void }
> = {
  'organization.create': { permission: P.ORGS_WRITE, on: 'partner', extra: assertFullPartnerAccess },
  'organization.update': { permission: P.ORGS_WRITE, on: 'organization' },
  'organization.delete': { permission: P.ORGS_DELETE, on: 'organization', extra: assertFullPartnerAccess },
  'settings.update': { permission: P.SETTINGS_WRITE, on: 'tenant' },
  'users.invite': { permission: P.USERS_INVITE, on: 'tenant', extra: assertFullOrgAccess },
  'users.update': { permission: P.USERS_WRITE, on: 'tenant', extra: assertFullOrgAccess },
  'users.delete': { permission: P.USERS_DELETE, on: 'tenant', extra: assertFullOrgAccess },
  'roles.manage': { permission: P.USERS_WRITE, on: 'tenant', extra: assertFullOrgAccess },
  'roles.delete': { permission: P.USERS_DELETE, on: 'tenant', extra: assertFullOrgAccess },
  'audit.read': { permission: P.AUDIT_READ, on: 'tenant' },
  'sso.manage': { permission: P.SETTINGS_WRITE, on: 'tenant' },
  'domains.manage': { permission: P.SETTINGS_WRITE, on: 'tenant' },
  'webhooks.manage': { permission: P.AUDIT_MANAGE, on: 'tenant' },
  'devices.update': { permission: P.DEVICES_WRITE, on: 'organization' },
  'devices.delete': { permission: P.DEVICES_DELETE, on: 'organization' },
  'enrollment_keys.manage': { permission: P.DEVICES_WRITE, on: 'organization' },
};

/** The route's extra rule, as a reason: null when it passes. */
function extraReason(rule: (p: Principal) => void, p: Principal): string | null {
  try {
    rule(p);
    return null;
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return err.message || ERROR_CATALOG[err.code].message;
  }
}

export async function capabilities(deps: Deps, caller: Principal, orgId: string | undefined) {
  if (!caller.partnerId) throw new AppError('tenant_context_required');
  const id = orgId ?? caller.orgId;
  let org: Owner | null = null;
  if (id) {
    const found = await ORGANIZATION.load(deps.db, id);
    if (!found || !covers(caller, found.owner, ORGANIZATION.partnerOwned, ORGANIZATION.siteless))
      throw notFound('organization');
    org = found.owner;
  }
  const partner: Owner = { partnerId: caller.partnerId, orgId: null };
  const actions = CAPABILITIES.map((action) => {
    const rule = RULES[action];
    const owner = rule.on === 'partner' ? partner : rule.on === 'organization' ? org : (org ?? partner);
    if (!owner) return { action, allowed: false, reason: 'Choose an organisation first.' };
    const partnerOwned: PartnerOwned = owner.orgId ? 'never' : 'partner-only';
    const d = decide(caller, rule.permission, owner, partnerOwned, 'visible');
    const denied = d.reasons.find((r) => !r.allowed)?.detail ?? (rule.extra ? extraReason(rule.extra, caller) : null);
    return { action, allowed: denied === null, reason: denied };
  });
  return { orgId: org?.orgId ?? null, actions };
}

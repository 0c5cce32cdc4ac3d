// The one authorisation decision: whether a principal holds a permission and whether its scope covers a
// record, step by step, each step with its reason. The request pipeline (requirePermission, findInScope's covers,
// mayAccessOrg) and GET /access/explain and /access/who-can all call these functions: the answer and its explanation
// cannot drift apart.
import { ipAllowed } from '../platform/cidr.js';
import { freezeReason } from './freeze.js';
import type { Principal } from './principal.js';
import { hasPermission, type ResolvedRole } from './resolver.js';
import {
  type AccessDecision,
  type AccessReason,
  deny,
  type Owner,
  type PartnerOwned,
  pass,
  type Siteless,
} from './reasons.js';
import { groupReachReason, relationshipReachReasons, relationshipReason } from './relationships.js';
import { ipAllowlistOf, mspAccessOf } from './settings.js';

export {
  ACCESS_STEPS,
  ORG_ACCESS_VIAS,
  type AccessDecision,
  type AccessReason,
  type AccessStep,
  deny,
  type Owner,
  type PartnerOwned,
  type Siteless,
} from './reasons.js';

/**
 * Whether the permission set grants `required`; with the role's sources, which role of the chain grants it.
 * requirePermission calls this without sources (the set alone decides); explain passes them to name the role.
 */
export function permissionReason(
  permissions: ReadonlySet<string>,
  required: string,
  role?: Pick<ResolvedRole, 'sources' | 'roleId' | 'name'> | null,
): AccessReason {
  if (!hasPermission(permissions, required)) {
    return deny(
      'role',
      role ? `No role in the chain of ${role.name} grants ${required}.` : `Missing permission ${required}.`,
      role ? { roleId: role.roleId, roleName: role.name } : {},
    );
  }
  if (!role) return pass('role', `Holds ${required}.`);
  const [resource, action] = required.split(':');
  const direct = role.sources.find((s) => s.resource === resource && s.action === action);
  const src = direct ?? role.sources.find((s) => s.resource === '*' && s.action === '*');
  if (!src) return pass('role', `Holds ${required}.`, { roleId: role.roleId, roleName: role.name });
  const how = src.resource === '*' ? `*:* (every permission)` : required;
  const inherited =
    src.roleId === role.roleId
      ? `its role ${src.roleName}`
      : `${src.roleName}, inherited by ${role.name} (${src.depth} level${src.depth === 1 ? '' : 's'} up)`;
  return pass('role', `Granted ${how} by ${inherited}.`, { roleId: src.roleId, roleName: src.roleName });
}

/** A person's account must be active for any of its tokens to work (authenticate refuses the others with 401). */
export function accountReason(status: string): AccessReason {
  return status === 'active'
    ? pass('account', 'The account is active.')
    : deny('account', `The account is ${status}: its tokens are refused.`);
}

/**
 * The just-in-time grant of the principal in force on the organisation, a whole-organisation grant before
 * a one-site grant; `customerApproved`: only one an organisation admin approved (mspAccess approval_required).
 */
export function grantFor(p: Pick<Principal, 'grants'>, orgId: string, customerApproved = false) {
  const mine = (p.grants ?? []).filter(
    (g) => g.orgId === orgId && (!customerApproved || g.approval === 'customer_admin'),
  );
  return mine.find((g) => g.siteId === null) ?? mine[0] ?? null;
}

const grantDetail = (g: NonNullable<ReturnType<typeof grantFor>>) =>
  `Just-in-time grant ${g.id}${g.siteId ? ` (site ${g.siteId} only)` : ''}, approved ${g.approval === 'auto' ? 'automatically' : `by a ${g.approval === 'partner_admin' ? 'Partner Admin' : 'customer admin'}`}, until ${g.expiresAt.toISOString()}.`;

/** Whether the principal may act on the organisation, and how (mayAccessOrg is this, reduced to its answer). */
export function orgAccessReason(p: Principal, orgId: string): AccessReason {
  if (p.tenantKind === 'organization') {
    return p.orgId === orgId
      ? pass('organization_access', 'Member of this organisation.', { via: 'organization_member' })
      : deny('organization_access', 'Member of another organisation.');
  }
  // orgAccess `all`: that the organisation is the partner's is checked against the database by the caller.
  if (p.orgAccess === 'all')
    return pass('organization_access', 'Standing access to every organisation of the partner (orgAccess all).', {
      via: 'standing_all',
    });
  const excluded = p.orgAccess === 'all_except' && (p.excludedOrgIds ?? []).includes(orgId);
  if (p.orgAccess === 'all_except' && !excluded)
    return pass(
      'organization_access',
      `Standing access to every organisation of the partner except ${excludedCount(p)} (orgAccess all_except); this one is not excluded.`,
      { via: 'standing_all_except' },
    );
  if (p.orgAccess === 'selected' && p.orgIds.includes(orgId))
    return pass('organization_access', 'Standing access to selected organisations, this one among them.', {
      via: 'standing_selected',
    });
  // No standing access: a just-in-time grant in force widens the scope for its duration only.
  const grant = grantFor(p, orgId);
  if (grant)
    return pass('organization_access', grantDetail(grant), {
      via: 'grant',
      grantId: grant.id,
      until: grant.expiresAt.toISOString(),
    });
  // An explicit exclusion is not undone by an access group.
  const group = excluded ? null : groupReachReason(p, orgId);
  if (group) return group;
  if (excluded)
    return deny(
      'organization_access',
      `Standing access to every organisation of the partner except ${excludedCount(p)} (orgAccess all_except); this one is excluded, and no just-in-time grant is in force.`,
    );
  if (p.orgAccess === 'selected')
    return deny(
      'organization_access',
      'Standing access to selected organisations; this one is not among them, and no just-in-time grant is in force.',
    );
  if (p.orgAccess === 'eligible') {
    return deny(
      'organization_access',
      p.eligibleOrgIds?.includes(orgId)
        ? 'Eligible for just-in-time access to this organisation; no grant is in force.'
        : 'Eligible for just-in-time access to other organisations only.',
    );
  }
  return deny('organization_access', 'No access to any organisation (orgAccess none).');
}

const excludedCount = (p: Principal) => {
  const n = p.excludedOrgIds?.length ?? 0;
  return `${n} excluded organisation${n === 1 ? '' : 's'}`;
};

/** An IP allow-list against the request's address ([] = any; the break-glass account is exempt, and audited by the caller). */
export function ipListReason(
  list: readonly string[],
  ip: string | null | undefined,
  breakGlass: boolean,
  whose: string,
): AccessReason {
  if (list.length === 0) return pass('ip_allowlist', `No IP allow-list on ${whose}.`);
  if (ip == null) return pass('ip_allowlist', `${whose} allows only ${list.join(', ')} (no request address to test).`);
  if (ipAllowed(ip, list)) return pass('ip_allowlist', `${ip} is in the IP allow-list of ${whose}.`);
  if (breakGlass)
    return pass(
      'ip_allowlist',
      `${ip} is outside the IP allow-list of ${whose}; the break-glass account is exempt (audited).`,
      { breakGlass: true },
    );
  return deny('ip_allowlist', `${ip} is outside the IP allow-list of ${whose}.`);
}

/**
 * Organisation access and the policies the organisation sets on what speaks for its partner in it (its mspAccess and
 * IP allow-list): partner members and the partner's service accounts alike. mayAccessOrg, covers and the list
 * conditions (orgCondition) all reduce this.
 */
export function orgAccessReasons(
  p: Principal,
  orgId: string,
  asked: readonly string[] = p.asked ?? [],
): AccessReason[] {
  const access = orgAccessReason(p, orgId);
  if (!access.allowed) return [access];
  const out = [access];
  if (p.tenantKind === 'partner') {
    const related = relationshipReason(p, orgId, asked);
    if (related) out.push(related);
    if (related && !related.allowed) return out;
    const policy = p.orgPolicies?.[orgId];
    if (policy) out.push(...customerControlReasons(p, orgId, policy));
    if (out.some((r) => !r.allowed)) return out;
  }
  // A freeze of the partner or of the organisation stops destructive permissions (break-glass excepted).
  const frozen = freezeReason(p, asked, orgId);
  return frozen ? [...out, frozen] : out;
}

/** What a credential speaking for the partner in an organisation carries for the organisation's controls. */
export type PartnerCredential = Pick<Principal, 'ip' | 'grants' | 'breakGlass' | 'breakGlassReason' | 'breakGlassUsed'>;

/**
 * The customer's controls over everything that speaks for its partner in the organisation (a partner member, a partner
 * service account, a SCIM token or service account the partner made for the organisation): mspAccess, then the
 * organisation's IP allow-list. `orgSettings` are the organisation's settings.
 */
export function customerControlReasons(p: PartnerCredential, orgId: string, orgSettings: unknown): AccessReason[] {
  const out: AccessReason[] = [];
  const msp = mspAccessOf(orgSettings);
  const approved = msp === 'approval_required' ? grantFor(p, orgId, true) : null;
  if (approved) {
    out.push(
      pass('msp_access', `mspAccess is approval_required; ${grantDetail(approved)}`, {
        via: 'grant',
        grantId: approved.id,
        until: approved.expiresAt.toISOString(),
      }),
    );
  } else if (msp !== 'allowed') {
    if (p.breakGlass === true && p.breakGlassReason) {
      // Side effect on purpose: the one place every path passes, so no use of break-glass escapes the alert.
      p.breakGlassUsed?.add(orgId);
      out.push(
        pass(
          'msp_access',
          `mspAccess is ${msp}; the partner's break-glass account passes with a reason (audited, both sides' admins alerted).`,
          { breakGlass: true },
        ),
      );
    } else {
      out.push(
        deny(
          'msp_access',
          msp === 'suspended'
            ? "The organisation has suspended access by its partner's staff (mspAccess suspended): only the partner's break-glass account, with a reason."
            : "The organisation lets its partner's staff in only through a just-in-time grant one of its admins approved (mspAccess approval_required); none is in force.",
        ),
      );
    }
  }
  const list = ipAllowlistOf(orgSettings);
  if (list.length) out.push(ipListReason(list, p.ip, p.breakGlass === true, 'the organisation'));
  return out;
}

/** The organisations a partner caller may act on: all of the partner's, its selected ones, or none. */
export function mayAccessOrg(p: Principal, orgId: string): boolean {
  // Ownership by the partner (orgAccess all) is checked against the database by the callers.
  return orgAccessReasons(p, orgId).every((r) => r.allowed);
}

/** Whether the principal's scope covers a record (findInScope's `covers` is this, reduced to its answer). */
export function scopeReasons(
  p: Principal,
  o: Owner,
  partnerOwned: PartnerOwned,
  siteless: Siteless,
  asked: readonly string[] = p.asked ?? [],
): AccessReason[] {
  if (!p.tenantKind || !p.partnerId) return [deny('membership', 'No partner or organisation context.')];
  if (p.partnerId !== o.partnerId) return [deny('membership', 'The membership is in another partner.')];
  const member = pass(
    'membership',
    p.tenantKind === 'partner' ? 'Member of the partner.' : 'Member of an organisation of the partner.',
  );
  if (o.orgId === null) {
    // A partner record: only the partner's own freeze bears on it.
    const frozen = freezeReason(p, asked, null);
    const tail = frozen && p.tenantKind === 'partner' ? [frozen] : [];
    if (partnerOwned === 'shared')
      return [
        member,
        pass('organization_access', 'Partner-wide record, in force in every organisation.', { via: 'partner_wide' }),
        ...tail,
      ];
    if (partnerOwned === 'partner-only' && p.tenantKind === 'partner')
      return [
        member,
        pass('organization_access', 'Partner record, reached by partner members.', { via: 'partner_wide' }),
        ...tail,
      ];
    return [member, deny('organization_access', 'A partner record: organisation members do not reach it.')];
  }
  const org = orgAccessReasons(p, o.orgId, asked);
  if (!org.every((r) => r.allowed)) return [member, ...org];
  if (p.tenantKind !== 'organization') {
    const reach = relationshipReachReasons(p, org, o);
    // Reached through a one-site grant only: records of other sites (and without a site) stay out.
    const grantId = org.find((r) => r.via === 'grant' && r.step === 'organization_access')?.grantId;
    const grant = grantId ? p.grants?.find((g) => g.id === grantId) : undefined;
    if (grant?.siteId) {
      // Records with no site (the organisation, its settings, contacts and fields of no site) are organisation-level.
      return [
        member,
        ...org,
        ...reach,
        o.siteId === grant.siteId
          ? pass('site', 'The just-in-time grant covers this site.')
          : o.siteId === undefined || o.siteId === null
            ? deny('site', 'The just-in-time grant covers one site; it does not reach organisation-level records.')
            : deny('site', 'The just-in-time grant covers one site; the record is not in it.'),
      ];
    }
    return [member, ...org, ...reach];
  }
  const out = [member, ...org];
  if (p.siteIds && o.siteId !== undefined) {
    if (o.siteId === null)
      out.push(
        siteless === 'hidden'
          ? deny('site', 'Restricted to some sites; the record has no site.')
          : pass('site', 'Restricted to some sites; a record without a site is visible.'),
      );
    else
      out.push(
        p.siteIds.includes(o.siteId)
          ? pass('site', 'Restricted to some sites, this one among them.')
          : deny('site', 'Restricted to some sites; this one is not among them.'),
      );
  } else if (o.siteId !== undefined) out.push(pass('site', 'No site restriction.'));
  if (p.deviceGroupIds && o.groupIds !== undefined) {
    out.push(
      o.groupIds.some((g) => p.deviceGroupIds!.includes(g))
        ? pass('device_group', 'Restricted to some device groups; the record is in one of them.')
        : deny('device_group', 'Restricted to some device groups; the record is in none of them.'),
    );
  } else if (o.groupIds !== undefined) out.push(pass('device_group', 'No device-group restriction.'));
  return out;
}

/** The policies every request of the principal passes, as authenticate enforces them. */
export function policyReasons(p: Principal): AccessReason[] {
  if (p.actorType === 'service_account') {
    return [
      pass('ip_allowlist', "A service account's keys carry their own address lists."),
      pass('mfa', 'A service account authenticates with its key; Force MFA holds people, not keys.'),
    ];
  }
  return [ownIpReason(p), mfaReason(p)];
}

/** The own tenant's IP allow-list: the partner's for a partner member, the organisation's for its members. */
export const ownIpReason = (p: Principal): AccessReason =>
  ipListReason(
    p.ipAllowlist ?? [],
    p.ip,
    p.breakGlass === true,
    p.tenantKind === 'partner' ? 'the partner' : 'the organisation',
  );

function mfaReason(p: Principal): AccessReason {
  if (p.mfaEnrollmentRequired)
    return deny(
      'mfa',
      'The policy requires MFA and no factor is enrolled: every request is held at 428 mfa_enrollment_required.',
    );
  return pass(
    'mfa',
    p.security.requireMfa
      ? 'The policy requires MFA and a factor is enrolled (sessions verify it at sign-in).'
      : 'No MFA requirement.',
  );
}

export function decisionOf(reasons: AccessReason[]): AccessDecision {
  const denied = reasons.find((r) => !r.allowed);
  return { allowed: !denied, deniedBy: denied?.step ?? null, reasons };
}

/**
 * Everything a request of the principal for `permission` on the record passes, in the pipeline's order: the policies
 * authenticate applies, the permission, then the record's scope.
 */
export function decide(
  p: Principal,
  permission: string,
  o: Owner,
  partnerOwned: PartnerOwned,
  siteless: Siteless,
  role?: Pick<ResolvedRole, 'sources' | 'roleId' | 'name'> | null,
): AccessDecision {
  const scope = scopeReasons(p, o, partnerOwned, siteless, [permission]);
  const [membership, ...rest] = scope;
  return decisionOf([membership!, ...policyReasons(p), permissionReason(p.permissions, permission, role), ...rest]);
}

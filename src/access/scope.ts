// The caller's Scope: which tenant it acts in (its membership: a partner's or an organisation's), which organisations
// it may reach in lists, and its site and device-group restrictions. Resolved once per request: authenticate puts it on
// the request (req.scope, src/http/context.ts) and scopeOf(principal) answers with that same object; nothing else
// rebuilds it. The conditions that apply it to queries are the predicates of src/db/tenant-filter.ts. The reach row
// security enforces (rowReachOf) is derived here too, from the same facts.
import type { RowReach } from '../db/row-security.js';
import type { OrgReach, Reach } from '../db/tenant-filter.js';
import { mayAccessOrg } from './decision.js';
import type { Principal } from './principal.js';
import { groupReachedOrgIds, usableRelationships } from './relationships.js';

/** The membership the caller acts in (a service account: the tenant that owns it). */
export type Membership =
  | { kind: 'partner'; partnerId: string; orgId: null; roleId: string | null }
  | { kind: 'organization'; partnerId: string; orgId: string; roleId: string | null };

/** What the caller may see, as data for the predicates of src/db/tenant-filter.ts, with the membership it acts in. */
export interface Scope extends Reach {
  /** null: no tenant context (a person between memberships); such a caller reaches no organisation. */
  membership: Membership | null;
}

/** One Scope per principal, that is per request (a principal is built for one request and never outlives it). */
const resolved = new WeakMap<Principal, Scope>();

/** The caller's Scope: resolved on first use, then the same object for the rest of the request. */
export function scopeOf(p: Principal): Scope {
  let s = resolved.get(p);
  if (!s) {
    s = resolveScope(p);
    resolved.set(p, s);
  }
  return s;
}

function resolveScope(p: Principal): Scope {
  return {
    membership: membershipOf(p),
    partnerId: p.partnerId,
    orgs: orgReachOf(p),
    siteIds: siteRestriction(p),
    deviceGroupIds: groupRestriction(p),
  };
}

function membershipOf(p: Principal): Membership | null {
  if (!p.partnerId) return null;
  if (p.tenantKind === 'partner') return { kind: 'partner', partnerId: p.partnerId, orgId: null, roleId: p.roleId };
  if (p.tenantKind === 'organization' && p.orgId)
    return { kind: 'organization', partnerId: p.partnerId, orgId: p.orgId, roleId: p.roleId };
  return null;
}

function orgReachOf(p: Principal): OrgReach {
  if (p.tenantKind === 'organization') return { kind: 'one', orgId: p.orgId! };
  // Organisations whose policies on partner members refuse this request (their IP allow-list) are left out of lists.
  if (p.requireRelationships) {
    // Only organisations an active relationship opens whole (one limited to sites or device groups reaches their
    // records by id, not through lists), and only those the rest of the decision lets in.
    // (those of access groups the member is not in do not count).
    const orgIds = [...new Set((p.relationships ?? []).map((r) => r.orgId))];
    const whole = orgIds.filter((id) => usableRelationships(p, id).some((r) => !r.siteIds && !r.deviceGroupIds));
    return { kind: 'ids', ids: whole.filter((id) => mayAccessOrg(p, id)), except: [] };
  }
  const except = Object.keys(p.orgPolicies ?? {}).filter((id) => !mayAccessOrg(p, id));
  if (p.orgAccess === 'all') return { kind: 'partner', partnerId: p.partnerId!, except };
  // Every organisation but the excluded ones (a just-in-time grant to one of them opens it for its duration).
  if (p.orgAccess === 'all_except')
    return { kind: 'partner', partnerId: p.partnerId!, except: [...new Set([...except, ...excludedNow(p)])] };
  // Standing selected organisations, and those a whole-organisation just-in-time grant opens now (a one-site grant
  // reaches its site's records by id, not through lists). The grant's organisation is the partner's (it was checked
  // when requested; grants of a member of another partner are not read with this session).
  const granted = (p.grants ?? []).filter((g) => g.siteId === null && mayAccessOrg(p, g.orgId)).map((g) => g.orgId);
  return { kind: 'ids', ids: [...new Set([...standingOrgIds(p), ...granted])], except };
}

/** A partner member's organisations of standing access short of all of them (orgAccess `selected`). */
const standingOrgIds = (p: Principal): string[] => (p.orgAccess === 'selected' ? p.orgIds : []);

/** orgAccess `all_except`: the excluded organisations no just-in-time grant opens now. */
const excludedNow = (p: Principal): string[] =>
  (p.excludedOrgIds ?? []).filter((id) => !(p.grants ?? []).some((g) => g.orgId === id));

const rowReaches = new WeakMap<Principal, RowReach>();

/**
 * What row security lets the caller's statements see (src/db/row-security.ts): its partner, the organisations it
 * reaches and the acting person. Coarser than the Scope on purpose: the organisation is the wall's granularity, so a
 * one-site just-in-time grant opens its organisation here (the site is the repositories' concern), and organisations
 * whose policies refuse this request stay open here (the decision refuses them with its reason).
 */
export function rowReachOf(p: Principal): RowReach {
  let r = rowReaches.get(p);
  if (r) return r;
  const orgIds: RowReach['orgIds'] =
    p.tenantKind === 'organization'
      ? p.orgId
        ? [p.orgId]
        : []
      : p.orgAccess === 'all'
        ? 'all'
        : p.orgAccess === 'all_except'
          ? { except: excludedNow(p) }
          : [...new Set([...standingOrgIds(p), ...(p.grants ?? []).map((g) => g.orgId), ...groupReachedOrgIds(p)])];
  r = { partnerId: p.partnerId, orgIds, userId: p.actorType === 'user' ? p.userId : null };
  rowReaches.set(p, r);
  return r;
}

/** Site restriction of an organisation member (null = every site). */
export const siteRestriction = (p: Principal): string[] | null => (p.tenantKind === 'organization' ? p.siteIds : null);
export const groupRestriction = (p: Principal): string[] | null =>
  p.tenantKind === 'organization' ? p.deviceGroupIds : null;

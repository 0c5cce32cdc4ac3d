// Which organisations, sites and device groups a caller may see, resolved from the principal; the conditions that
// apply it to queries are in db/tenant-scope.ts.
import type { Executor } from '../../db/connect.js';
import type { OrgReach, TenantScope } from '../../db/tenant-scope.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { ORGANIZATION, findInScope } from './by-id.js';
import { mayAccessOrg } from './scope.js';

/** What the caller may see, as data for the predicates of db/tenant-scope.ts (the same answer mayAccessOrg gives, per organisation). */
export function scopeOf(p: Principal): TenantScope {
  return {
    partnerId: p.partnerId,
    orgs: orgReachOf(p),
    siteIds: siteRestriction(p),
    deviceGroupIds: groupRestriction(p),
  };
}

function orgReachOf(p: Principal): OrgReach {
  if (p.scope === 'organization') return { kind: 'one', orgId: p.orgId! };
  // Organisations whose policies on partner members refuse this request (their IP allow-list) are left out of lists.
  const except = Object.keys(p.orgPolicies ?? {}).filter((id) => !mayAccessOrg(p, id));
  if (p.orgAccess === 'all') return { kind: 'partner', partnerId: p.partnerId!, except };
  // Standing selected organisations, and those a whole-organisation just-in-time grant opens now (a one-site grant
  // reaches its site's records by id, not through lists). The grant's organisation is the partner's (it was checked
  // when requested; grants of a member of another partner are not read with this session).
  const granted = (p.grants ?? []).filter((g) => g.siteId === null && mayAccessOrg(p, g.orgId)).map((g) => g.orgId);
  return { kind: 'ids', ids: [...new Set([...(p.orgAccess === 'selected' ? p.orgIds : []), ...granted])], except };
}

/** The organisation, if the caller may act on it (404 otherwise, also for another partner's). */
export async function accessibleOrg(db: Executor, p: Principal, orgId: string) {
  if (!p.partnerId) throw new AppError('tenant_context_required');
  return (await findInScope(db, p, ORGANIZATION, orgId)).row;
}

/** Site restriction of an organisation member (null = every site). */
export const siteRestriction = (p: Principal): string[] | null => (p.scope === 'organization' ? p.siteIds : null);
export const groupRestriction = (p: Principal): string[] | null =>
  p.scope === 'organization' ? p.deviceGroupIds : null;

/** Partner callers with orgAccess other than `all` cannot create or delete organisations. */
export function assertFullPartnerAccess(p: Principal): void {
  if (p.scope !== 'partner') throw new AppError('forbidden', 'Only partner users create or delete organizations.');
  if (p.orgAccess !== 'all') throw new AppError('full_org_access_required');
}

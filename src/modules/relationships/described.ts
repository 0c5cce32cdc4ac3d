// A relationship as people read it: names, not ids. The organisation and partner by name, each role with its
// permissions (what the organisation signs), the sites and device groups by name; and its history, from the audit
// trail, with each actor's name and what a narrowing removed. Read for a whole page at once (one query per kind).
import type { Deps } from '../../deps.js';
import type { Principal } from '../../http/context.js';
import { listAuditLogs } from '../audit/index.js';
import { loadRoleChain } from '../roles/index.js';
import { AppError, notFound } from '../../http/errors.js';
import { isPartnerOrganization, namesOf, orgReachOptions } from './repo.js';
import { getRelationship } from './service.js';

interface RelationshipView {
  partnerId: string;
  orgId: string;
  roleIds: string[];
  siteIds: string[];
  deviceGroupIds: string[];
}

const named = (names: Map<string, string>, ids: string[]) =>
  ids.map((id) => ({ id, name: names.get(id) ?? 'Deleted' }));

/** Adds the names (and each role's permissions) to relationships as the service returns them. */
export async function describeAll<R extends RelationshipView>(deps: Deps, list: R[]) {
  const db = deps.db;
  const all = (f: (r: R) => string[]) => list.flatMap(f);
  const [orgs, partners, sites, groups] = await Promise.all([
    namesOf(
      db,
      'organization',
      all((r) => [r.orgId]),
    ),
    namesOf(
      db,
      'partner',
      all((r) => [r.partnerId]),
    ),
    namesOf(
      db,
      'site',
      all((r) => r.siteIds),
    ),
    namesOf(
      db,
      'deviceGroup',
      all((r) => r.deviceGroupIds),
    ),
  ]);
  const roles = new Map<string, { id: string; name: string; permissions: string[] }>();
  for (const id of new Set(all((r) => r.roleIds))) {
    const chain = await loadRoleChain(db, id);
    roles.set(id, { id, name: chain?.name ?? 'Deleted', permissions: [...(chain?.permissions ?? [])].sort() });
  }
  return list.map((r) => ({
    ...r,
    orgName: orgs.get(r.orgId) ?? 'Deleted',
    partnerName: partners.get(r.partnerId) ?? 'Deleted',
    roles: r.roleIds.map((id) => roles.get(id)!),
    sites: named(sites, r.siteIds),
    deviceGroups: named(groups, r.deviceGroupIds),
  }));
}

export async function describeOne<R extends RelationshipView>(deps: Deps, r: R) {
  return (await describeAll(deps, [r]))[0]!;
}

export async function describePage<R extends RelationshipView>(
  deps: Deps,
  page: { data: R[]; nextCursor: string | null },
) {
  return { data: await describeAll(deps, page.data), nextCursor: page.nextCursor };
}

const HISTORY_MAX = 200;
const idsIn = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/**
 * The relationship's events, oldest first, as its audit trail holds them (the caller sees the relationship, and the
 * records its audit scope shows): who acted, by name, and for a narrowing the roles, sites and device groups removed.
 */
export async function relationshipHistory(deps: Deps, p: Principal, id: string) {
  await getRelationship(deps, p, id);
  const records = (
    await listAuditLogs(deps, p, { resourceType: 'relationship', resourceId: id, limit: HISTORY_MAX })
  ).data.reverse();
  const removedIds = (key: 'roleIds' | 'siteIds' | 'deviceGroupIds') =>
    records.map((e) => {
      const before = idsIn((e.details.before as Record<string, unknown> | undefined)?.[key]);
      const after = new Set(idsIn(e.details[key]));
      // A list that became empty (null) reaches everything again: nothing was removed from it.
      return e.action === 'relationship.update' && after.size > 0 ? before.filter((x) => !after.has(x)) : [];
    });
  const removed = { roles: removedIds('roleIds'), sites: removedIds('siteIds'), groups: removedIds('deviceGroupIds') };
  const [people, roles, sites, groups] = await Promise.all([
    namesOf(
      deps.db,
      'user',
      records.flatMap((e) => (e.actorUserId ? [e.actorUserId] : [])),
    ),
    namesOf(deps.db, 'role', removed.roles.flat()),
    namesOf(deps.db, 'site', removed.sites.flat()),
    namesOf(deps.db, 'deviceGroup', removed.groups.flat()),
  ]);
  const words = (names: Map<string, string>, ids: string[]) => ids.map((x) => names.get(x) ?? 'Deleted');
  return {
    data: records.map((e, i) => ({
      id: e.id,
      at: e.at,
      action: e.action,
      actorName: e.actorUserId ? (people.get(e.actorUserId) ?? null) : null,
      actorEmail: e.actorEmail,
      side: typeof e.details.side === 'string' ? e.details.side : null,
      endsAt:
        typeof e.details.endsAt === 'string'
          ? e.details.endsAt
          : typeof e.details.to === 'string'
            ? e.details.to
            : null,
      removed: {
        roles: words(roles, removed.roles[i]!),
        sites: words(sites, removed.sites[i]!),
        deviceGroups: words(groups, removed.groups[i]!),
      },
    })),
  };
}

/**
 * The sites and device groups a relationship with one of the partner's organisations may name. Read from the
 * partner's side as what it may offer, not through its staff's own reach: once the partner requires relationships,
 * its admins reach no organisation without one, yet still draft the first.
 */
export async function reachOptions(deps: Deps, p: Principal, orgId: string) {
  if (p.tenantKind !== 'partner' || !p.partnerId)
    throw new AppError('forbidden', 'Relationships are drafted, requested and changed by the partner.');
  if (!(await isPartnerOrganization(deps.db, p.partnerId, orgId))) throw notFound('organization');
  return orgReachOptions(deps.db, orgId);
}

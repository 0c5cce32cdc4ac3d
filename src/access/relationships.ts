// Delegated-access relationships in the access decision. A partner that requires relationships
// (settings.requireRelationships) lets its staff into an organisation only through an active relationship with it:
// their effective permissions there are their role's within the union of the relationship roles' permissions, and
// their reach is the union of the relationships' sites and device groups (a relationship that lists none: the whole
// organisation). The relationships in force are read with the session on every request (RELATIONSHIPS_SQL) and
// compared with the service clock, so an end bites on the next request on every instance. A relationship with access
// groups attached is used only by members of one of them (read with the session too, so a removal bites at once);
// one with none, by every member the partner lets into the organisation.
import type { Principal } from './principal.js';
import { type AccessReason, deny, type Owner, pass } from './reasons.js';
import type { ResolvedRole } from './resolver.js';
import { hasPermission } from './resolver.js';

/** How long an auto-extension adds, each time a relationship set to extend reaches its end. */
export const AUTO_EXTEND_MS = 180 * 86_400_000;

/**
 * The active relationships of the session's partner when it requires relationships (none otherwise), as
 * JSON: read by the per-request liveness statement and by explain's subject reader.
 */
export const RELATIONSHIPS_SQL = (scope: string, partnerId: string, partnerSettings: string) =>
  `(select jsonb_agg(jsonb_build_object('id', r.id, 'org_id', r.org_id, 'name', r.name, 'role_ids', r.role_ids,
     'site_ids', r.site_ids, 'device_group_ids', r.device_group_ids, 'ends_at', r.ends_at, 'auto_extend', r.auto_extend,
     'groups_required', r.groups_required, 'groups', (select jsonb_agg(jsonb_build_object('id', g.id, 'name', g.name) order by g.name)
                  from relationship_access_groups rg join access_groups g on g.id = rg.group_id where rg.relationship_id = r.id)))
     from relationships r where ${scope} = 'partner' and r.partner_id = ${partnerId} and r.status = 'active'
       and coalesce((${partnerSettings}->>'requireRelationships')::boolean, false))`;

export interface RelationshipRow {
  id: string;
  org_id: string;
  name: string;
  role_ids: string[];
  site_ids: string[] | null;
  device_group_ids: string[] | null;
  ends_at: string;
  auto_extend: boolean;
  groups_required?: boolean;
  groups?: AccessGroupRef[] | null;
}

/** An access group, named. */
export interface AccessGroupRef {
  id: string;
  name: string;
}

/**
 * The partner member's access groups (by hand, or through the partner-level SCIM group a group is mapped to, while
 * that SCIM user is active), as JSON ids, when the partner requires relationships (null otherwise).
 */
export const ACCESS_GROUPS_SQL = (scope: string, partnerId: string, userId: string, partnerSettings: string) =>
  `(select jsonb_agg(g.id) from access_groups g where ${scope} = 'partner' and g.partner_id = ${partnerId}
     and coalesce((${partnerSettings}->>'requireRelationships')::boolean, false)
     and (exists (select 1 from access_group_members gm where gm.group_id = g.id and gm.user_id = ${userId})
       or exists (select 1 from scim_group_members sm join scim_users su on su.id = sm.scim_user_id
                  where sm.group_id = g.scim_group_id and su.user_id = ${userId} and su.active and su.org_id is null)))`;

/** A relationship in force: the permissions of its roles (their union), its reach, and its current end. */
export interface ActiveRelationship {
  id: string;
  orgId: string;
  name: string;
  permissions: ReadonlySet<string>;
  siteIds: string[] | null;
  deviceGroupIds: string[] | null;
  endsAt: Date;
  /** The access groups through which staff use it. */
  groups: AccessGroupRef[];
  /** Used only through its groups (one was once attached); false: by every member the partner lets in. */
  groupsRequired: boolean;
}

/** The end in force at `now`: an auto-extended relationship moves on by 180 days each time it reaches its end. */
export function currentEnd(endsAt: Date, autoExtend: boolean, now: number): Date {
  if (!autoExtend || endsAt.getTime() > now) return endsAt;
  const periods = Math.floor((now - endsAt.getTime()) / AUTO_EXTEND_MS) + 1;
  return new Date(endsAt.getTime() + periods * AUTO_EXTEND_MS);
}

/** The relationships of the row in force at `now`, each with the permissions of its roles. */
export async function relationshipsInForce(
  json: RelationshipRow[] | string | null | undefined,
  role: (roleId: string) => Promise<ResolvedRole | null>,
  now: number,
): Promise<ActiveRelationship[]> {
  const rows: RelationshipRow[] = json == null ? [] : typeof json === 'string' ? JSON.parse(json) : json;
  const out: ActiveRelationship[] = [];
  for (const r of rows) {
    const end = currentEnd(new Date(r.ends_at), r.auto_extend, now);
    if (end.getTime() <= now) continue;
    const permissions = new Set<string>();
    for (const id of r.role_ids) for (const k of (await role(id))?.permissions ?? []) permissions.add(k);
    out.push({
      id: r.id,
      orgId: r.org_id,
      name: r.name,
      permissions,
      siteIds: r.site_ids,
      deviceGroupIds: r.device_group_ids,
      endsAt: end,
      groups: r.groups ?? [],
      groupsRequired: r.groups_required === true || (r.groups?.length ?? 0) > 0,
    });
  }
  return out;
}

/** The relationships in force with one organisation. */
export const relationshipsWith = (rels: readonly ActiveRelationship[] | undefined, orgId: string) =>
  (rels ?? []).filter((r) => r.orgId === orgId);

/** The groups of the relationship the member belongs to. */
const groupsOfMember = (p: Pick<Principal, 'accessGroupIds'>, r: ActiveRelationship) =>
  r.groups.filter((g) => (p.accessGroupIds ?? []).includes(g.id));

/** The relationships with the organisation the member may use: those never bound to groups, and those of its groups. */
export const usableRelationships = (p: Principal, orgId: string) =>
  relationshipsWith(p.relationships, orgId).filter((r) => !r.groupsRequired || groupsOfMember(p, r).length > 0);

/** The relationships with the organisation the member reaches through one of its access groups. */
const groupRelationships = (p: Principal, orgId: string) =>
  relationshipsWith(p.relationships, orgId).filter((r) => groupsOfMember(p, r).length > 0);

/** The organisations the member reaches through its access groups (the partner requires relationships). */
export const groupReachedOrgIds = (p: Principal): string[] =>
  p.tenantKind === 'partner' && p.requireRelationships
    ? [...new Set((p.relationships ?? []).filter((r) => groupsOfMember(p, r).length > 0).map((r) => r.orgId))]
    : [];

const describeGroups = (groups: readonly AccessGroupRef[]) => groups.map((g) => `"${g.name}"`).join(', ');

/**
 * A partner that requires relationships lets a member of an access group attached to a relationship in force with the
 * organisation in through it, whatever the member's standing access (null: no such group).
 */
export function groupReachReason(p: Principal, orgId: string): AccessReason | null {
  if (p.tenantKind !== 'partner' || !p.requireRelationships) return null;
  const rels = groupRelationships(p, orgId);
  if (rels.length === 0) return null;
  const groups = [...new Map(rels.flatMap((r) => groupsOfMember(p, r)).map((g) => [g.id, g])).values()];
  return pass(
    'organization_access',
    `Member of the access group${groups.length > 1 ? 's' : ''} ${describeGroups(groups)}, attached to the relationship${rels.length > 1 ? 's' : ''} ${describeRelationships(rels)}.`,
    {
      via: 'access_group',
      relationshipIds: rels.map((r) => r.id),
      accessGroupIds: groups.map((g) => g.id),
    },
  );
}

/** Whether the union of the relationships' permissions covers `permission`. */
export const relationshipsGrant = (rels: readonly ActiveRelationship[], permission: string) =>
  rels.some((r) => hasPermission(r.permissions, permission));

/** The union of the relationships' reach in one dimension: null when any of them reaches the whole organisation. */
export function relationshipReach(
  rels: readonly ActiveRelationship[],
  key: 'siteIds' | 'deviceGroupIds',
): string[] | null {
  if (rels.some((r) => r[key] === null)) return null;
  return [...new Set(rels.flatMap((r) => r[key] ?? []))];
}

export const describeRelationships = (rels: readonly ActiveRelationship[]) =>
  rels.map((r) => `"${r.name}" (${r.id}, until ${r.endsAt.toISOString()})`).join(', ');

/** The relationships, each with the groups of the member it is used through. */
const describeUse = (p: Principal, rels: readonly ActiveRelationship[]) =>
  rels
    .map((r) => {
      const mine = groupsOfMember(p, r);
      return `"${r.name}" (${r.id}, until ${r.endsAt.toISOString()}${mine.length ? `, through the access group${mine.length > 1 ? 's' : ''} ${describeGroups(mine)}` : ''})`;
    })
    .join(', ');

/**
 * A partner that requires relationships: the organisation is reached only through an active relationship with it, and
 * every permission asked for must lie within the union of its roles (the role's permissions ∩ the relationships').
 * null when the partner does not require them.
 */
export function relationshipReason(p: Principal, orgId: string, asked: readonly string[]): AccessReason | null {
  if (p.tenantKind !== 'partner' || !p.requireRelationships) return null;
  const all = relationshipsWith(p.relationships, orgId);
  if (all.length === 0)
    return deny(
      'relationship',
      "The partner requires delegated-access relationships; none with this organisation is active: its partner's staff do not reach it.",
    );
  const rels = usableRelationships(p, orgId);
  if (rels.length === 0) {
    const groups = [...new Map(all.flatMap((r) => r.groups).map((g) => [g.id, g])).values()];
    return deny(
      'relationship',
      groups.length
        ? `The relationships with this organisation (${describeRelationships(all)}) are used through the access groups ${describeGroups(groups)}; the member is in none of them.`
        : `The relationships with this organisation (${describeRelationships(all)}) are used through access groups only, and none is attached.`,
      // No relationshipIds: the member does not reach the organisation at all (404, as without a relationship).
      { accessGroupIds: groups.map((g) => g.id) },
    );
  }
  const relationshipIds = rels.map((r) => r.id);
  const groupIds = [...new Set(rels.flatMap((r) => groupsOfMember(p, r).map((g) => g.id)))];
  const groupsOf = groupIds.length ? { accessGroupIds: groupIds } : {};
  const missing = asked.filter((k) => !relationshipsGrant(rels, k));
  if (missing.length)
    return deny(
      'relationship',
      `The roles of the relationships with this organisation (${describeUse(p, rels)}) do not include ${missing.join(', ')}: a member's permissions here are its role's within them.`,
      { relationshipIds, ...groupsOf },
    );
  return pass('relationship', `Through the relationship${rels.length > 1 ? 's' : ''} ${describeUse(p, rels)}.`, {
    relationshipIds,
    ...groupsOf,
    until: new Date(Math.max(...rels.map((r) => r.endsAt.getTime()))).toISOString(),
  });
}

/** Whether one relationship's reach covers the record (its sites, then its device groups; none listed: all). */
function relationshipCovers(r: ActiveRelationship, o: Owner): boolean {
  if (r.siteIds && o.siteId !== undefined && (o.siteId === null || !r.siteIds.includes(o.siteId))) return false;
  if (r.deviceGroupIds && o.groupIds !== undefined && !o.groupIds.some((g) => r.deviceGroupIds!.includes(g)))
    return false;
  // A relationship limited to sites or device groups does not reach organisation-level records.
  if ((r.siteIds || r.deviceGroupIds) && o.siteId === undefined && o.groupIds === undefined) return false;
  return true;
}

/** The reach of the relationships a partner member entered the organisation through, on a record of it. */
export function relationshipReachReasons(p: Principal, org: AccessReason[], o: Owner): AccessReason[] {
  const ids = org.find((r) => r.step === 'relationship')?.relationshipIds;
  if (!ids) return [];
  const rels = (p.relationships ?? []).filter((r) => ids.includes(r.id));
  if (rels.every((r) => !r.siteIds && !r.deviceGroupIds)) return [];
  return rels.some((r) => relationshipCovers(r, o))
    ? [pass('site', 'Within the sites and device groups of a relationship with the organisation.')]
    : [deny('site', 'Outside the sites and device groups the relationships with the organisation reach.')];
}

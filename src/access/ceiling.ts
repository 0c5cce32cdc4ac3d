// The one ceiling rule: whatever a caller creates or hands out (a role, an invitation, an SSO provider's
// auto-provisioning, a webhook, a SCIM token and what it provisions, a service account and its keys) reaches no further
// than the caller: no permission it does not hold, no site or device group outside its own, and nothing
// organisation-wide from a caller restricted to sites or device groups.
import { beyondCeiling } from './resolver.js';

/** How far a caller (or a credential's creator) reaches: its permissions and its site / device-group restriction. */
export interface Reach {
  permissions: ReadonlySet<string>;
  /** null: every site (and every device group) of the organisation, or no organisation restriction at all. */
  siteIds: readonly string[] | null;
  deviceGroupIds: readonly string[] | null;
}

/** What the created thing acts with or hands out; a field left undefined is not asked about. */
export interface Granted {
  permissions?: Iterable<string>;
  /** null: organisation-wide (every site); a list: those sites only. */
  siteIds?: readonly string[] | null;
  deviceGroupIds?: readonly string[] | null;
}

export interface BeyondReach {
  /** Permissions granted that the creator does not hold. */
  permissions: string[];
  /** Which restriction the grant exceeds: `siteIds`, `deviceGroupIds`. */
  reach: ('siteIds' | 'deviceGroupIds')[];
}

/** An organisation-wide grant (every site and device group): what SSO, SCIM, webhooks and service accounts reach. */
export const ORGANIZATION_WIDE = { siteIds: null, deviceGroupIds: null } as const satisfies Granted;

/** What `granted` holds beyond `creator`'s reach, or null when it lies within. */
export function beyondReach(creator: Reach, granted: Granted): BeyondReach | null {
  const permissions = granted.permissions ? beyondCeiling(creator.permissions, new Set(granted.permissions)) : [];
  const within = (mine: readonly string[] | null, theirs: readonly string[] | null | undefined) =>
    theirs === undefined || mine === null || theirs?.every((id) => mine.includes(id)) === true;
  const reach = [
    ...(within(creator.siteIds, granted.siteIds) ? [] : (['siteIds'] as const)),
    ...(within(creator.deviceGroupIds, granted.deviceGroupIds) ? [] : (['deviceGroupIds'] as const)),
  ];
  return permissions.length || reach.length ? { permissions, reach } : null;
}

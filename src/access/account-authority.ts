// Account-wide authority: whether an actor may change what belongs to the account rather than to one membership
// (its status, name, e-mail, password, factors, every session). An account may belong to several tenants; the actor's
// authority must cover every active membership of it, or the change would reach into tenants that never granted it.
import type { Executor } from '../db/connect.js';
import { asSystemWithin } from '../db/row-security.js';
import { orgAccessReasons } from './decision.js';
import type { Principal } from './principal.js';
import { activeMembershipRows, membershipPlaces } from './repo.js';
import { beyondCeiling, loadRoleChain } from './resolver.js';

/** Site and device-group restrictions (null = every one). */
export interface Restriction {
  siteIds: readonly string[] | null;
  deviceGroupIds: readonly string[] | null;
}

/** What an actor holds, as data: the tenant it acts in, its permissions, and its reach in that tenant. */
export interface Authority {
  kind: 'partner' | 'organization';
  partnerId: string;
  /** Organisation authority: its organisation. */
  orgId: string | null;
  permissions: ReadonlySet<string>;
  /** Organisation authority: its own restriction. */
  restriction: Restriction;
  /** Partner authority: the organisations it reaches standing, compared with a partner member's reach. */
  standingOrgs: StandingOrgs;
  /** Partner authority: whether it reaches the organisation now, and with what restriction there (null: not at all). */
  reachIn: (orgId: string) => Restriction | null;
}

export type AccountMembership =
  | { kind: 'partner'; partnerId: string; roleId: string; orgAccess: string; orgIds: readonly string[] }
  | ({ kind: 'organization'; partnerId: string; orgId: string; roleId: string } & Restriction);

/** Why one membership lies outside the authority. */
export type OutsideReason = 'other_tenant' | 'organization_access' | 'site_scope' | 'role_ceiling';

export interface AccountAuthorityDecision {
  covered: boolean;
  /** Memberships the authority does not cover, each with the first reason found. */
  outside: { membership: AccountMembership; reason: OutsideReason }[];
}

const NO_RESTRICTION: Restriction = { siteIds: null, deviceGroupIds: null };

/** A restriction lies within another: every site (group) it allows is allowed by the wider one. */
const listWithin = (wider: readonly string[] | null, narrower: readonly string[] | null) =>
  wider === null || narrower?.every((id) => wider.includes(id)) === true;
export const restrictionWithin = (wider: Restriction, narrower: Restriction) =>
  listWithin(wider.siteIds, narrower.siteIds) && listWithin(wider.deviceGroupIds, narrower.deviceGroupIds);

/** Organisations reached standing: all, all but some (those created later included), or some. */
export type StandingOrgs = 'all' | { except: readonly string[] } | readonly string[];

/** The organisations a partner membership reaches standing: all, all but the excluded, or its selected (or eligible) ones. */
const standingReach = (m: { orgAccess: string; orgIds: readonly string[] }): StandingOrgs =>
  m.orgAccess === 'all'
    ? 'all'
    : m.orgAccess === 'all_except'
      ? { except: m.orgIds }
      : m.orgAccess === 'none'
        ? []
        : m.orgIds;

/** Whether every organisation `theirs` reaches is one `mine` reaches. */
function standingWithin(mine: StandingOrgs, theirs: StandingOrgs): boolean {
  if (mine === 'all') return true;
  if ('except' in mine) {
    if (theirs === 'all') return mine.except.length === 0;
    if ('except' in theirs) return mine.except.every((id) => theirs.except.includes(id));
    return theirs.every((id) => !mine.except.includes(id));
  }
  if (theirs === 'all' || 'except' in theirs) return false;
  return theirs.every((id) => mine.includes(id));
}

/** The authority of the request's caller: its acting membership, permissions and reach (null: no tenant context). */
export function authorityOf(p: Principal): Authority | null {
  if (!p.partnerId || !p.tenantKind) return null;
  if (p.tenantKind === 'organization') {
    if (!p.orgId) return null;
    return {
      kind: 'organization',
      partnerId: p.partnerId,
      orgId: p.orgId,
      permissions: p.permissions,
      restriction: { siteIds: p.siteIds, deviceGroupIds: p.deviceGroupIds },
      standingOrgs: [],
      reachIn: () => null,
    };
  }
  return {
    kind: 'partner',
    partnerId: p.partnerId,
    orgId: null,
    permissions: p.permissions,
    restriction: NO_RESTRICTION,
    standingOrgs: standingReach({
      orgAccess: p.orgAccess ?? 'none',
      orgIds: p.orgAccess === 'all_except' ? (p.excludedOrgIds ?? []) : p.orgIds,
    }),
    reachIn: (orgId) => {
      // The same decision every by-id request passes (org access, mspAccess, the organisation's IP allow-list).
      const reasons = orgAccessReasons(p, orgId);
      if (!reasons.every((r) => r.allowed)) return null;
      const grantId = reasons.find((r) => r.step === 'organization_access' && r.via === 'grant')?.grantId;
      const siteId = grantId ? p.grants?.find((g) => g.id === grantId)?.siteId : null;
      return siteId ? { siteIds: [siteId], deviceGroupIds: null } : NO_RESTRICTION;
    },
  };
}

/**
 * The authority of a tenant-bound credential that is no person (a SCIM token): exactly its tenant, whole, within the
 * permissions it lends. A partner's credential covers the partner's staff, not the members of its organisations.
 */
export function tenantAuthority(
  t: { kind: 'partner' | 'organization'; partnerId: string; orgId: string | null },
  permissions: ReadonlySet<string>,
): Authority {
  return {
    kind: t.kind,
    partnerId: t.partnerId,
    orgId: t.kind === 'organization' ? t.orgId : null,
    permissions,
    restriction: NO_RESTRICTION,
    standingOrgs: 'all',
    reachIn: () => null,
  };
}

function outsideReason(
  a: Authority,
  m: AccountMembership,
  rolePermissions: ReadonlyMap<string, ReadonlySet<string>>,
): OutsideReason | null {
  if (m.partnerId !== a.partnerId) return 'other_tenant';
  if (m.kind === 'partner') {
    if (a.kind !== 'partner') return 'other_tenant';
    const theirs = standingReach(m);
    if (!standingWithin(a.standingOrgs, theirs)) return 'organization_access';
  } else if (a.kind === 'organization') {
    if (m.orgId !== a.orgId) return 'other_tenant';
    if (!restrictionWithin(a.restriction, m)) return 'site_scope';
  } else {
    const reach = a.reachIn(m.orgId);
    if (!reach) return 'organization_access';
    if (!restrictionWithin(reach, m)) return 'site_scope';
  }
  // A role that holds more than the actor is refused, and so is one that could not be read.
  const theirs = rolePermissions.get(m.roleId);
  if (!theirs || beyondCeiling(a.permissions, theirs).length) return 'role_ceiling';
  return null;
}

/**
 * The rule, on data: the authority covers the account when the account has at least one active membership and every
 * one lies in the actor's tenant, within its reach (organisations, sites, device groups) and under its ceiling.
 * An account with no active membership is nobody's to administer (its only ties are offers it has not accepted).
 */
export function decideAccountAuthority(
  a: Authority | null,
  memberships: readonly AccountMembership[],
  rolePermissions: ReadonlyMap<string, ReadonlySet<string>>,
): AccountAuthorityDecision {
  const outside = memberships.flatMap((membership) => {
    const reason = a ? outsideReason(a, membership, rolePermissions) : 'other_tenant';
    return reason ? [{ membership, reason }] : [];
  });
  return { covered: a !== null && memberships.length > 0 && outside.length === 0, outside };
}

/** The account's active memberships, as the rule reads them. */
export async function activeMembershipsOf(ex: Executor, userId: string): Promise<AccountMembership[]> {
  const rows = await activeMembershipRows(ex, userId);
  return [
    ...rows.partner.map((m) => ({ kind: 'partner' as const, ...m })),
    ...rows.organization.map((m) => ({ kind: 'organization' as const, ...m })),
  ];
}

/** Whether the authority covers every active membership of the account (read in the caller's transaction). */
export async function accountAuthority(
  ex: Executor,
  a: Authority | null,
  userId: string,
): Promise<AccountAuthorityDecision> {
  const memberships = await activeMembershipsOf(ex, userId);
  const rolePermissions = new Map<string, ReadonlySet<string>>();
  await asSystemWithin(ex, 'account-wide', async () => {
    for (const roleId of new Set(memberships.map((m) => m.roleId))) {
      const chain = await loadRoleChain(ex, roleId);
      if (chain) rolePermissions.set(roleId, chain.permissions);
    }
  });
  return decideAccountAuthority(a, memberships, rolePermissions);
}

/**
 * Whether every membership of the account, pending ones included, lies in exactly this tenant (the partner itself, or
 * one organisation). A tenant-bound credential (SCIM) may re-address an account only while this holds: an address is
 * the key to the account everywhere, so no tenant may move it once another one shares the account, or is offered it.
 */
/**
 * True when every membership of the account (pending ones included) lies inside the tenant: a partner covers its own
 * organisations, an organisation only itself. An administrator's request to re-address an account is checked again
 * with it when the link is opened: an account that joined another tenant meanwhile is no longer the admin's to move.
 */
export async function withinTenant(
  ex: Executor,
  tenant: { partnerId: string; orgId: string | null },
  userId: string,
): Promise<boolean> {
  const places = await membershipPlaces(ex, userId);
  return places.every((m) => m.partnerId === tenant.partnerId && (tenant.orgId === null || m.orgId === tenant.orgId));
}

export async function confinedToTenant(
  ex: Executor,
  tenant: { partnerId: string; orgId: string | null },
  userId: string,
): Promise<boolean> {
  const places = await membershipPlaces(ex, userId);
  return places.every((m) => m.partnerId === tenant.partnerId && m.orgId === tenant.orgId);
}

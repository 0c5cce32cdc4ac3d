// Tenant filtering in one place: every condition that limits a query to what a caller may see, or to
// what a target tenant owns. It takes data (the caller's Reach, a Target, an AuditVisibility), never a request: the
// access core resolves the caller's Scope (src/access/scope.ts, a Reach with its membership) once per request;
// repositories and services only apply it.
import { and, eq, inArray, isNull, notInArray, or, sql, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { auditLogs, deviceGroups, devices, roles } from './schema/index.js';

/** Matches no row: an empty allow-list stands for "none", never for "any". */
export const NONE = '00000000-0000-0000-0000-000000000000';
const orNone = (ids: readonly string[]) => (ids.length ? [...ids] : [NONE]);

/** Which organisations the caller may act on in lists. */
export type OrgReach =
  /** An organisation member: its own organisation. */
  | { kind: 'one'; orgId: string }
  /** A partner member with orgAccess `all`: every organisation of the partner, except those whose policies refuse this request. */
  | { kind: 'partner'; partnerId: string; except: string[] }
  /** Selected organisations and whole-organisation just-in-time grants ([] = none), except the refusing ones. */
  | { kind: 'ids'; ids: string[]; except: string[] };

/** What a caller may see: the partner, the organisations, sites and device groups it reaches (the Scope is one). */
export interface Reach {
  partnerId: string | null;
  orgs: OrgReach;
  /** An organisation member's site restriction; null = every site. */
  siteIds: string[] | null;
  /** An organisation member's device-group restriction; null = every group. */
  deviceGroupIds: string[] | null;
}

/** The tenant a management request acts on: the partner level, or one of its organisations (tenants/target.ts resolveTarget). */
export type Target =
  | { kind: 'partner'; partnerId: string; orgId: null }
  | { kind: 'organization'; partnerId: string; orgId: string };

/** Columns of a row owned by a partner (org_id null) or by one of its organisations. */
export interface OwnerColumns {
  partnerId: PgColumn;
  orgId: PgColumn;
}

/**
 * A condition on an org_id column: the organisations the caller may act on. `partnerColumn`: the row carries its
 * partner itself (the organizations table), so a partner-wide caller filters on it and the (partner, ...) indexes
 * give the page order, instead of a join through the partner's organisations.
 */
export function orgCondition(s: Reach, column: PgColumn, partnerColumn?: PgColumn): SQL | undefined {
  const o = s.orgs;
  if (o.kind === 'one') return eq(column, o.orgId);
  const notRefused = o.except.length ? notInArray(column, o.except) : undefined;
  if (o.kind === 'partner' && partnerColumn) return and(eq(partnerColumn, o.partnerId), notRefused);
  if (o.kind === 'partner')
    return and(inArray(column, sql`(select id from organizations where partner_id = ${o.partnerId})`), notRefused);
  if (o.ids.length) return and(inArray(column, o.ids), notRefused);
  return eq(column, NONE);
}

/** A condition on a site_id column for a site-restricted member (undefined: unrestricted); `siteless` rows pass or not. */
export function siteCondition(s: Reach, column: PgColumn, siteless: 'hidden' | 'visible' = 'hidden'): SQL | undefined {
  if (!s.siteIds) return undefined;
  const inSites = inArray(column, orNone(s.siteIds));
  return siteless === 'visible' ? or(isNull(column), inSites) : inSites;
}

/** A condition on a device group's id for a group-restricted member (undefined: unrestricted). */
export const groupCondition = (s: Reach, column: PgColumn): SQL | undefined =>
  s.deviceGroupIds ? inArray(column, orNone(s.deviceGroupIds)) : undefined;

/** Device groups the caller may see: its organisations, its groups, and groups of its sites or of no site. */
export const deviceGroupVisible = (s: Reach): SQL | undefined =>
  and(
    orgCondition(s, deviceGroups.orgId),
    groupCondition(s, deviceGroups.id),
    siteCondition(s, deviceGroups.siteId, 'visible'),
  );

/** Devices the caller may see: its organisations, its sites, and (group-restricted) a member of one of its groups. */
export function deviceVisible(s: Reach): SQL {
  const groups = s.deviceGroupIds;
  return and(
    orgCondition(s, devices.orgId, devices.partnerId),
    siteCondition(s, devices.siteId),
    groups
      ? sql`exists (select 1 from device_group_members m where m.device_id = ${devices.id} and m.group_id in ${sql`(${sql.join(
          orNone(groups).map((g) => sql`${g}`),
          sql`, `,
        )})`})`
      : undefined,
  )!;
}

/** Rows owned by exactly the target: the organisation's, or the partner's own (org_id null). */
export const ownedBy = (t: Target, cols: OwnerColumns): SQL =>
  t.orgId ? eq(cols.orgId, t.orgId) : and(eq(cols.partnerId, t.partnerId), isNull(cols.orgId))!;

/** Rows in force for a target: the partner-owned ones, plus the organisation's own when the target is one. */
export function effectiveFor(t: Target, cols: OwnerColumns): SQL {
  return and(
    eq(cols.partnerId, t.partnerId),
    t.orgId ? or(isNull(cols.orgId), eq(cols.orgId, t.orgId)) : isNull(cols.orgId),
  )!;
}

/** Roles usable in a target: the system roles of that membership kind and the owner's custom roles. */
export function rolesVisibleIn(t: Target): SQL {
  return t.kind === 'partner'
    ? or(
        and(eq(roles.isSystem, true), eq(roles.appliesTo, 'partner')),
        and(eq(roles.scope, 'partner'), eq(roles.partnerId, t.partnerId)),
      )!
    : or(
        and(eq(roles.isSystem, true), eq(roles.appliesTo, 'organization')),
        and(eq(roles.scope, 'organization'), eq(roles.orgId, t.orgId)),
      )!;
}

/** Which audit records a caller may see: resolved once from the principal (audit/service.ts visibilityOf). */
export type AuditVisibility =
  | { kind: 'organization'; partnerId: string; orgId: string }
  /**
   * `orgIds`: the organisations besides the partner's own events; `all` for full access, [] for none. `except`:
   * organisations whose controls hold the caller out now; `partnerView`: the caller speaks for the partner, so records
   * an organisation wrote while it suspended its partner's access stay out (the operator's CLI sees everything).
   */
  | { kind: 'partner'; partnerId: string; orgIds: 'all' | string[]; except?: string[]; partnerView?: boolean };

export function auditVisible(v: AuditVisibility): SQL {
  if (v.kind === 'organization') return and(eq(auditLogs.partnerId, v.partnerId), eq(auditLogs.orgId, v.orgId))!;
  const held = and(
    v.partnerView ? eq(auditLogs.partnerHidden, false) : undefined,
    v.except?.length ? or(isNull(auditLogs.orgId), notInArray(auditLogs.orgId, v.except)) : undefined,
  );
  if (v.orgIds === 'all') return and(eq(auditLogs.partnerId, v.partnerId), held)!;
  const orgs = v.orgIds.length
    ? or(isNull(auditLogs.orgId), inArray(auditLogs.orgId, v.orgIds))!
    : isNull(auditLogs.orgId);
  return and(eq(auditLogs.partnerId, v.partnerId), orgs, held)!;
}

// Which organisations, sites and device groups a caller may see: applied once, in the query.
import { and, eq, inArray, notInArray, sql, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { Executor } from '../../db/connect.js';
import { organizations } from '../../db/schema/index.js';
import type { Principal } from '../../http/context.js';
import { AppError, notFound } from '../../http/errors.js';
import { ORGANIZATION, findInScope } from './by-id.js';
import { mayAccessOrg } from './scope.js';

/** A condition on an org_id column: the organisations the caller may act on. */
export function orgCondition(p: Principal, column: PgColumn): SQL | undefined {
  if (p.scope === 'organization') return eq(column, p.orgId!);
  // Organisations whose policies on partner members refuse this request (their IP allow-list) are left out of lists.
  const refused = Object.keys(p.orgPolicies ?? {}).filter((id) => !mayAccessOrg(p, id));
  const notRefused = refused.length ? notInArray(column, refused) : undefined;
  if (p.orgAccess === 'all') return and(inArray(column, orgIdsOfPartnerSubquery(p.partnerId!)), notRefused);
  // Standing selected organisations, and those a whole-organisation just-in-time grant opens now (a one-site grant
  // reaches its site's records by id, not through lists). The grant's organisation is the partner's (it was checked
  // when requested; grants of a member of another partner are not read with this session).
  const granted = (p.grants ?? []).filter((g) => g.siteId === null && mayAccessOrg(p, g.orgId)).map((g) => g.orgId);
  const ids = [...new Set([...(p.orgAccess === 'selected' ? p.orgIds : []), ...granted])];
  if (ids.length) return and(inArray(column, ids), notRefused);
  return eq(column, '00000000-0000-0000-0000-000000000000'); // none
}

const orgIdsOfPartnerSubquery = (partnerId: string) => sql`(select id from organizations where partner_id = ${partnerId})`;

/** The organisation, if the caller may act on it (404 otherwise, also for another partner's). */
export async function accessibleOrg(db: Executor, p: Principal, orgId: string) {
  if (!p.partnerId) throw new AppError('tenant_context_required');
  return (await findInScope(db, p, ORGANIZATION, orgId)).row;
}

/** Site restriction of an organisation member (null = every site). */
export const siteRestriction = (p: Principal): string[] | null => (p.scope === 'organization' ? p.siteIds : null);
export const groupRestriction = (p: Principal): string[] | null => (p.scope === 'organization' ? p.deviceGroupIds : null);

/** Partner callers with orgAccess other than `all` cannot create or delete organisations. */
export function assertFullPartnerAccess(p: Principal): void {
  if (p.scope !== 'partner') throw new AppError('forbidden', 'Only partner users create or delete organizations.');
  if (p.orgAccess !== 'all') throw new AppError('full_org_access_required');
}

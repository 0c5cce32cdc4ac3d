// Which tenant a management request acts on: the caller's own scope, or, for a partner
// caller, one of its organisations named by orgId. Anything outside is 404, never 403: it does not exist here.
import type { Executor } from '../../db/connect.js';
import type { Target } from '../../db/tenant-scope.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { orgAccessReasons } from '../../access/decision.js';
import { refusalOf } from '../../http/refusal.js';
import { partnerOrgId, partnerOrgRows } from './repo.js';

export type TargetScope = Target;

/** The organisations a partner caller may act on: all of the partner's, its selected ones, or none. */
export function mayAccessOrg(p: Principal, orgId: string): boolean {
  // Ownership by the partner (orgAccess all) is checked against the database by the callers.
  return orgAccessReasons(p, orgId).every((r) => r.allowed);
}

export async function resolveTarget(db: Executor, p: Principal, orgId: string | undefined): Promise<TargetScope> {
  if (!p.scope || !p.partnerId) throw new AppError('tenant_context_required');
  if (p.scope === 'organization') {
    if (orgId !== undefined && orgId !== p.orgId) throw new AppError('not_found', 'The organization was not found.');
    return { kind: 'organization', partnerId: p.partnerId, orgId: p.orgId! };
  }
  if (orgId === undefined) return { kind: 'partner', partnerId: p.partnerId, orgId: null };
  const refusal = refusalOf(orgAccessReasons(p, orgId), 'organization');
  if (refusal) throw refusal;
  if (!(await partnerOrgId(db, p.partnerId, orgId))) throw new AppError('not_found', 'The organization was not found.');
  return { kind: 'organization', partnerId: p.partnerId, orgId };
}

/** Organisation ids of the partner among `ids`; used to validate orgIds of a partner membership. */
export async function partnerOrgIds(db: Executor, partnerId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await partnerOrgRows(db, partnerId, ids);
  return new Set(rows.map((r) => r.id));
}

export const auditTenant = (target: TargetScope) => ({ partnerId: target.partnerId, orgId: target.orgId });

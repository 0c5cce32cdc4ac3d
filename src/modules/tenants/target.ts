// Which tenant a management request acts on (its Target): the caller's own membership, or, for a partner caller, one
// of its organisations named by orgId. Anything outside is 404, never 403: it does not exist here.
import type { Executor } from '../../db/connect.js';
import type { Target } from '../../db/tenant-filter.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { orgAccessReasons } from '../../access/decision.js';
import { refusalOf } from '../../http/refusal.js';
import { partnerOrgId, partnerOrgRows } from './repo.js';

export async function resolveTarget(db: Executor, p: Principal, orgId: string | undefined): Promise<Target> {
  if (!p.tenantKind || !p.partnerId) throw new AppError('tenant_context_required');
  if (p.tenantKind === 'organization') {
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

export const auditTenant = (target: Target) => ({ partnerId: target.partnerId, orgId: target.orgId });

// An organisation the caller may act on, and who may create or delete organisations. The caller's Scope (which
// organisations, sites and device groups it may see) is resolved once per request in src/access/scope.ts.
import type { Executor } from '../../db/connect.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { ORGANIZATION, findInScope } from './by-id.js';

/** The organisation, if the caller may act on it (404 otherwise, also for another partner's). */
export async function accessibleOrg(db: Executor, p: Principal, orgId: string) {
  if (!p.partnerId) throw new AppError('tenant_context_required');
  return (await findInScope(db, p, ORGANIZATION, orgId)).row;
}

/** Partner callers with orgAccess other than `all` cannot create or delete organisations. */
export function assertFullPartnerAccess(p: Principal): void {
  if (p.tenantKind !== 'partner') throw new AppError('forbidden', 'Only partner users create or delete organizations.');
  if (p.orgAccess !== 'all') throw new AppError('full_org_access_required');
}

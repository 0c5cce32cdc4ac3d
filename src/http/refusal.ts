// An access decision's denial as the answer of a by-id route (src/access/decision.ts reasons, HTTP errors here).
import { type Authority, accountAuthority } from '../access/account-authority.js';
import { beyondReach, type Granted, type Reach } from '../access/ceiling.js';
import type { AccessReason } from '../access/decision.js';
import type { Executor } from '../db/connect.js';
import { AppError, notFound } from './errors.js';

/** The answer a by-id route gives when the scope denies: an address outside a list is 403, anything else 404. */
export function refusalOf(reasons: AccessReason[], what: string): AppError | null {
  const denied = reasons.find((r) => !r.allowed);
  if (!denied) return null;
  if (denied.step === 'msp_access') return new AppError('msp_access_denied');
  if (denied.step === 'ip_allowlist')
    return new AppError('ip_not_allowed', 'This address is outside the IP allow-list of the organization.');
  return notFound(what);
}

/**
 * Refuses an account-wide change (status, name, e-mail, password, factors, every session) unless the authority covers
 * every active membership of the account. Which memberships lie outside is not said: they are other tenants' facts.
 */
export async function assertAccountAuthority(ex: Executor, a: Authority | null, userId: string): Promise<void> {
  if (!(await accountAuthority(ex, a, userId)).covered) throw new AppError('account_outside_authority');
}

/**
 * The ceiling rule's answer (src/access/ceiling.ts): 403 permission_ceiling naming what lies beyond the caller's reach
 * (`missing`: the permissions, then `siteIds` / `deviceGroupIds`).
 */
export function assertWithinReach(creator: Reach, granted: Granted): void {
  const beyond = beyondReach(creator, granted);
  if (!beyond) return;
  throw new AppError(
    'permission_ceiling',
    beyond.permissions.length
      ? undefined
      : 'You cannot grant or administer access to sites or device groups beyond your own.',
    { missing: [...beyond.permissions, ...beyond.reach] },
  );
}

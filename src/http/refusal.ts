// An access decision's denial as the answer of a by-id route (src/access/decision.ts reasons, HTTP errors here).
import { type Authority, accountAuthority } from '../access/account-authority.js';
import { beyondReach, type Granted, type Reach } from '../access/ceiling.js';
import { type AccessReason, customerControlReasons } from '../access/decision.js';
import { membershipTenantSettings } from '../access/repo.js';
import { mspAccessOf } from '../access/settings.js';
import type { Executor } from '../db/connect.js';
import { AppError, notFound } from './errors.js';

/** The answer a by-id route gives when the scope denies: an address outside a list (or an action outside the relationships) is 403, anything else 404. */
export function refusalOf(reasons: AccessReason[], what: string): AppError | null {
  const denied = reasons.find((r) => !r.allowed);
  if (!denied) return null;
  if (denied.step === 'msp_access') return new AppError('msp_access_denied');
  if (denied.step === 'freeze') return new AppError('frozen', denied.detail, { freeze: denied.freeze });
  if (denied.step === 'budget')
    return new AppError('budget_exceeded', denied.detail, { requires: denied.requires, budget: denied.budget });
  // Reached through relationships whose roles do not cover what is asked: the record is in reach, the action is not.
  if (denied.step === 'relationship' && denied.relationshipIds?.length) return new AppError('forbidden', denied.detail);
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

/**
 * What someone acting for the partner made for an organisation and that lets people in (an invitation link, an SSO
 * provider) is held by the organisation's controls while it suspends its partner (customerControlReasons, as SCIM
 * tokens and service accounts are): 403 msp_access_denied. Under approval_required it is not: that policy admits the
 * partner's staff one approved grant at a time, and the people these let in are the organisation's own, whom no grant
 * could approve. The person let in meets the organisation's IP allow-list at sign-in, as every member does.
 */
export async function partnerMadeRefusal(ex: Executor, orgId: string, what: string): Promise<AppError | null> {
  const settings = await membershipTenantSettings(ex, { scope: 'organization', partnerId: null, orgId });
  if (mspAccessOf(settings) !== 'suspended') return null;
  return refusalOf(customerControlReasons({}, orgId, settings), what);
}

// A user's memberships: which one a sign-in lands in (the SQL is in repo.ts).
import type { MembershipRow } from './repo.js';
import type { SessionContext } from './sessions.js';

export type Membership = MembershipRow;

/** The most recently used membership; on a tie (or none used yet) a partner membership first. */
export function pickDefault(memberships: Membership[]): SessionContext {
  const sorted = [...memberships].sort((a, b) => {
    const ta = a.lastUsedAt?.getTime() ?? 0;
    const tb = b.lastUsedAt?.getTime() ?? 0;
    if (ta !== tb) return tb - ta;
    return a.scope === b.scope ? 0 : a.scope === 'partner' ? -1 : 1;
  });
  const m = sorted[0];
  return m
    ? { scope: m.scope, partnerId: m.partnerId, orgId: m.orgId, roleId: m.roleId }
    : { scope: null, partnerId: null, orgId: null, roleId: null };
}

/** Where a password or passkey sign-in lands: the default among the memberships SSO enforcement does not hold. */
export const pickPasswordDefault = (memberships: Membership[]): SessionContext =>
  pickDefault(memberships.filter((m) => !m.ssoOnly));

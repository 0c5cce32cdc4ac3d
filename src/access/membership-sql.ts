// SQL read with a person's session on every request (and by the explain and service-account readers): the
// organisation policies that hold partner members, and the just-in-time grants in force.

/**
 * A partner's organisations that set policies on partner members acting in them (an IP allow-list, mspAccess), as
 * id → settings: usually none, so the aggregate is empty; read with the session, so a change bites on the next request.
 */
export const ORG_POLICIES_SQL = (scope: string, partnerId: string) =>
  `(select jsonb_object_agg(po.id, po.settings) from organizations po where ${scope} = 'partner' and po.partner_id = ${partnerId}
     and po.sets_partner_policies)`;

export interface GrantRow {
  id: string;
  org_id: string;
  site_id: string | null;
  expires_at: string;
  approval: 'auto' | 'partner_admin' | 'customer_admin';
}

/**
 * A partner member's just-in-time grants not revoked and not yet seen expired, read with the session on
 * every request: a grant ends on the next request, on every instance. Which of them are still in force is decided
 * against the service clock (grantsInForce), and the expired ones are recorded once (recordExpiredGrants).
 */
export const GRANTS_SQL = (scope: string, partnerId: string, userId: string) =>
  `(select jsonb_agg(jsonb_build_object('id', g.id, 'org_id', g.org_id, 'site_id', g.site_id, 'expires_at', g.expires_at, 'approval', g.approval))
     from access_grants g where ${scope} = 'partner' and g.partner_id = ${partnerId} and g.user_id = ${userId} and g.revoked_at is null and g.expired_at is null)`;

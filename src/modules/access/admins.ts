// Who "both sides' admins" are (issue 18 §2): the partner's active Partner Admins and the organisation's active
// Organization Admins (the system admin roles), whom mspAccess changes and break-glass uses are mailed to.
import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/connect.js';
import type { Principal } from '../../http/context.js';
import { ORG_ADMIN_ROLE_ID, PARTNER_ADMIN_ROLE_ID } from '../../access/catalog.js';

export async function adminsOfBothSides(tx: Executor, partnerId: string, orgId: string) {
  const res = await tx.execute(sql`
    select u.email from partner_users pu join users u on u.id = pu.user_id
      where pu.partner_id = ${partnerId} and pu.role_id = ${PARTNER_ADMIN_ROLE_ID} and u.status = 'active'
    union
    select u.email from organization_users ou join users u on u.id = ou.user_id
      where ou.org_id = ${orgId} and ou.role_id = ${ORG_ADMIN_ROLE_ID} and u.status = 'active'
    order by 1 limit 500`);
  const names = await tx.execute(
    sql`select o.name as org_name, p.name as partner_name from organizations o join partners p on p.id = o.partner_id where o.id = ${orgId}`,
  );
  const n = (names as unknown as { rows: { org_name: string; partner_name: string }[] }).rows[0];
  return {
    emails: (res as unknown as { rows: { email: string }[] }).rows.map((r) => r.email),
    orgName: n?.org_name ?? 'the organisation',
    partnerName: n?.partner_name ?? 'the partner',
  };
}

/** A Partner Admin acting in the partner (approves just-in-time requests whose organisation's policy is partner_admin). */
export const isPartnerAdmin = (p: Principal) =>
  p.actorType === 'user' && p.scope === 'partner' && p.roleId === PARTNER_ADMIN_ROLE_ID;
/** An Organization Admin of that organisation (approves customer_admin requests, sees and revokes grants in it). */
export const isOrgAdmin = (p: Principal, orgId: string) =>
  p.actorType === 'user' && p.scope === 'organization' && p.orgId === orgId && p.roleId === ORG_ADMIN_ROLE_ID;

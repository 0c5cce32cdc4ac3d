// Who approves and sees just-in-time access: the partner's Partner Admins and an organisation's
// Organization Admins (the system admin roles). Both sides' admins, whom mspAccess changes and break-glass uses are
// mailed to, are read by adminsOfBothSides in src/access/repo.ts.
import type { Principal } from '../../http/context.js';
import { PARTNER_ADMIN_ROLE_ID, ORG_ADMIN_ROLE_ID } from '../../access/catalog.js';

/** A Partner Admin acting in the partner (approves just-in-time requests whose organisation's policy is partner_admin). */
export const isPartnerAdmin = (p: Principal) =>
  p.actorType === 'user' && p.tenantKind === 'partner' && p.roleId === PARTNER_ADMIN_ROLE_ID;
/** An Organization Admin of that organisation (approves customer_admin requests, sees and revokes grants in it). */
export const isOrgAdmin = (p: Principal, orgId: string) =>
  p.actorType === 'user' && p.tenantKind === 'organization' && p.orgId === orgId && p.roleId === ORG_ADMIN_ROLE_ID;

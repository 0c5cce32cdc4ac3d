// Who an explanation is about: a person's memberships (or a service account) read as the request pipeline reads them,
// turned into the same Principal by the same builders (userPrincipal, serviceAccountPrincipal).
import type { Executor } from '../../db/connect.js';
import { membershipRoleId, userPrincipal } from '../../access/caller.js';
import type { Principal } from '../../http/context.js';
import { relationshipsInForce } from '../../access/relationships.js';
import type { ResolvedRole, RoleCache } from '../roles/index.js';
import { serviceAccountPrincipal } from '../service-accounts/index.js';
import { type AccountSubjectRow, serviceAccountSubjectRows, type SubjectFactsRow, userSubjectRows } from './repo.js';

export interface Subject {
  principal: Principal;
  role: ResolvedRole | null;
  /** The account's status (a person) or `disabled`/`active` (a service account). */
  status: string;
}

/**
 * The memberships of the users that bear on a record of `partnerId` (and `orgId`): their partner membership there and
 * their membership of that organisation (userSubjectRows), each turned into the principal the pipeline would build.
 */
export async function userSubjects(
  db: Executor,
  roles: RoleCache,
  enable2fa: boolean,
  userIds: string[],
  partnerId: string,
  orgId: string | null,
  now: number,
  ip: string | null = null,
): Promise<Map<string, Subject[]>> {
  if (userIds.length === 0) return new Map();
  return userSubjectsOf(await userSubjectRows(db, userIds, partnerId, orgId), roles, enable2fa, now, ip);
}

/** The subjects of membership rows (userSubjectRows) as of `now`: the rows may be older than the request (cached). */
export async function userSubjectsOf(
  rows: SubjectFactsRow[],
  roles: RoleCache,
  enable2fa: boolean,
  now: number,
  ip: string | null,
): Promise<Map<string, Subject[]>> {
  const out = new Map<string, Subject[]>();
  for (const row of rows) {
    const roleId = membershipRoleId(row);
    const role = roleId ? await roles.get(roleId, Number(row.epoch)) : null;
    const relationships = await relationshipsInForce(row.relationships, (id) => roles.get(id, Number(row.epoch)), now);
    const principal = userPrincipal(row, role, { enable2fa, ip, now, relationships });
    const subject = { principal, role, status: row.user_status };
    out.set(row.user_id, [...(out.get(row.user_id) ?? []), subject]);
  }
  return out;
}

/** Service accounts of the partner (partner-wide, or of `orgId`) among `ids`. */
export async function serviceAccountSubjects(
  db: Executor,
  roles: RoleCache,
  ids: string[],
  partnerId: string,
  orgId: string | null,
  now: number,
): Promise<Map<string, Subject>> {
  if (ids.length === 0) return new Map();
  return serviceAccountSubjectsOf(await serviceAccountSubjectRows(db, ids, partnerId, orgId), roles, now);
}

/** The subjects of service-account rows (serviceAccountSubjectRows) as of `now`. */
export async function serviceAccountSubjectsOf(
  rows: AccountSubjectRow[],
  roles: RoleCache,
  now: number,
): Promise<Map<string, Subject>> {
  const out = new Map<string, Subject>();
  for (const row of rows) {
    const role = await roles.get(row.role_id, Number(row.epoch));
    if (!role) continue;
    const relationships = await relationshipsInForce(row.relationships, (id) => roles.get(id, Number(row.epoch)), now);
    out.set(row.account_id, {
      principal: serviceAccountPrincipal(row, role, relationships),
      role,
      status: row.disabled ? 'disabled' : 'active',
    });
  }
  return out;
}

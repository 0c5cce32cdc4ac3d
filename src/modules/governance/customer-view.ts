// The customer's view: every partner member and partner service account that can reach the organisation, how, and
// what they (and staff who have since left) did there.
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import type { Principal } from '../../http/context.js';
import { decodeCursor, encodeCursor } from '../../http/pagination.js';
import { findInScope, ORGANIZATION } from '../tenants/index.js';
import { mspAccessOf } from '../../access/settings.js';
import { customerControlReasons, orgAccessReasons } from '../../access/decision.js';
import { partnerActivityRows, partnerMemberIdsReaching, partnerServiceAccountsReaching } from './repo.js';
import { userSubjects } from './subjects.js';
import type { FreezeInfo } from '../../access/principal.js';

const memberCursor = z.object({ id: z.uuid() });
const seqCursor = z.object({ seq: z.number().int() });
/** The partner's service accounts answered on the first page (a partner has few; more are not listed). */
export const SERVICE_ACCOUNTS_LISTED = 200;

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/**
 * Partner members whose standing access covers the organisation, in id order, each with the decision the organisation's
 * controls give; on the first page, the service accounts that speak for the partner there, with the same decision.
 */
export async function partnerAccess(
  deps: Deps,
  caller: Principal,
  orgId: string,
  q: { limit: number; cursor?: string },
) {
  const { row: org } = await findInScope(deps.db, caller, ORGANIZATION, orgId);
  const after = decodeCursor(q.cursor, memberCursor);
  const ids = await partnerMemberIdsReaching(deps.db, org, after?.id ?? null, q.limit + 1);
  const page = ids.slice(0, q.limit);
  const subjects = await userSubjects(
    deps.db,
    deps.roleCache,
    deps.config.enable2fa,
    page,
    org.partnerId,
    null,
    deps.clock.now().getTime(),
  );
  const data = page.flatMap((id) => {
    const s = subjects.get(id)?.find((x) => x.principal.tenantKind === 'partner');
    if (!s) return [];
    const p = s.principal;
    const reasons = orgAccessReasons(p, org.id);
    const denied = reasons.find((r) => !r.allowed);
    return [
      {
        userId: id,
        email: p.email,
        name: p.user?.name ?? '',
        roleId: p.roleId!,
        roleName: p.roleName ?? '',
        access: reasons[0]?.via === 'access_group' ? ('access_group' as const) : ('standing' as const),
        orgAccess: p.orgAccess!,
        until: null,
        reachesNow: !denied,
        blockedBy: denied?.step ?? null,
        breakGlass: p.breakGlass === true,
      },
    ];
  });
  const accounts = after ? [] : await partnerServiceAccountsReaching(deps.db, org, SERVICE_ACCOUNTS_LISTED);
  const g = await deps.governor.cache.of(org.partnerId, caller.epoch);
  const view = (f: FreezeInfo | null | undefined) =>
    f ? { side: f.side, reason: f.reason, byName: f.byName, at: f.at } : null;
  return {
    mspAccess: mspAccessOf(org.settings),
    freezes: { partner: view(g.partner), organization: view(g.orgs.get(org.id)) },
    data,
    serviceAccounts: accounts.map((a) => {
      // A key carries no grant and its address is the request's: the organisation's controls as they hold every key.
      const denied = a.disabled ? null : customerControlReasons({}, org.id, org.settings).find((r) => !r.allowed);
      return {
        id: a.id,
        name: a.name,
        owner: a.org_id === null ? ('partner' as const) : ('organization' as const),
        roleId: a.role_id,
        roleName: a.role_name,
        disabled: a.disabled,
        lastUsedAt: iso(a.last_used_at),
        reachesNow: !a.disabled && !denied,
        blockedBy: denied?.step ?? null,
      };
    }),
    nextCursor: ids.length > q.limit ? encodeCursor({ id: page[page.length - 1]! }) : null,
  };
}

/**
 * The organisation's audit records whose actor spoke for its partner, newest first: its members, service accounts and
 * SCIM tokens, and staff who have since left (marked formerStaff).
 */
export async function partnerActivity(
  deps: Deps,
  caller: Principal,
  orgId: string,
  q: { limit: number; cursor?: string },
) {
  const { row: org } = await findInScope(deps.db, caller, ORGANIZATION, orgId);
  const after = decodeCursor(q.cursor, seqCursor);
  const rows = await partnerActivityRows(deps.db, org, after ? after.seq : null, q.limit + 1);
  const page = rows.slice(0, q.limit);
  return {
    data: page.map((r) => ({
      id: r.id,
      at: new Date(r.at).toISOString(),
      action: r.action,
      result: r.result,
      actorUserId: r.actor_user_id,
      actorEmail: r.actor_email,
      actorType: r.actor_type,
      actorName: r.actor_name,
      formerStaff: r.former === true,
      resourceType: r.resource_type,
      resourceId: r.resource_id,
      ip: r.ip,
    })),
    nextCursor: rows.length > q.limit ? encodeCursor({ seq: Number(page[page.length - 1]!.seq) }) : null,
  };
}

// An admin's view of a member's sessions: the member must be in the target scope, within the caller's ceiling
// and site scope, as for the other /users/:id actions.
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import type { Principal } from '../../http/context.js';
import type { AuditRequestMeta } from '../audit/index.js';
import { endMemberSession, listMemberSessions } from '../auth/index.js';
import type { Target } from '../../db/tenant-filter.js';
import { assertMemberWithinReach, assertTargetWithinCeiling, consented } from './guards.js';
import { findMember } from './repo.js';

async function administrableMember(db: Executor, caller: Principal, target: Target, userId: string) {
  const member = consented(await findMember(db, target, userId));
  await assertTargetWithinCeiling(db, caller, member.roleId);
  assertMemberWithinReach(caller, member);
}

export async function memberSessions(deps: Deps, caller: Principal, target: Target, userId: string) {
  await administrableMember(deps.db, caller, target, userId);
  return listMemberSessions(deps, target, userId);
}

export async function endMemberSessionAsAdmin(
  deps: Deps,
  caller: Principal,
  target: Target,
  userId: string,
  sessionId: string,
  meta: AuditRequestMeta,
) {
  await deps.db.transaction(async (tx) => {
    await administrableMember(tx, caller, target, userId);
    await endMemberSession(deps, caller, target, userId, sessionId, meta, tx);
  });
}

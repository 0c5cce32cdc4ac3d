// The blast-radius governor behind the authorization API: the rest of the RMM asks before it acts, so an evaluation
// that allows a destructive permission is charged to the SUBJECT's budgets (its partner's and the record's
// organisation's, the stricter wins), in the same counts the API's own routes charge. Over a budget the answer is
// `decision: false` with the `budget` step and what unlocks it. An evaluation that only asks (`dry_run`) counts and
// never marks. A batch is one use of destructive permissions per subject, each device in it one device affected.
// The subject has no session here, so no step-up of it is ever fresh: a co-signature approved for it unlocks it.
import { randomUUID } from 'node:crypto';
import type { Deps } from '../../deps.js';
import type { Principal } from '../../http/context.js';
import { isDestructive } from '../../access/catalog.js';
import { decisionOf, type AccessDecision } from '../../access/decision.js';
import type { AccessReason } from '../../access/reasons.js';
import type { Subject } from './subjects.js';

/** A decision, with the membership (or account) that allows it. */
export interface Decided {
  decision: AccessDecision;
  by?: Subject;
}

/** One evaluation, decided (null: a record not the caller's to ask about). */
export interface Evaluation {
  subject: { type: string; id: string };
  permission: string;
  target: { type: string; id: string; owner: { orgId: string | null } };
  dryRun: boolean;
  decided: Decided;
}

/** Puts the freezes in force on each subject's principal, as authenticate does for a caller (the `freeze` step). */
export async function attachFreezes(deps: Deps, subjects: Iterable<Subject>): Promise<void> {
  for (const s of subjects) await deps.governor.cache.attach(s.principal);
}

/**
 * Adds the `budget` step to each allowed decision of a destructive permission, in order. `stopOn`: the batch ends at
 * the first answer that is this (deny_on_first_deny: false), and what is not answered is not charged.
 * Trips and co-signature unlocks go on the caller's audit events, naming the subject they were charged to.
 */
export async function weighBudgets(
  deps: Deps,
  caller: Principal,
  evaluations: (Evaluation | null | undefined)[],
  stopOn?: boolean,
): Promise<void> {
  const useIds = new Map<string, string>();
  for (const e of evaluations) {
    const by = e?.decided.by;
    if (e && by && isDestructive(e.permission)) {
      const step = await weigh(deps, caller, e, by.principal, useIds);
      if (step) e.decided.decision = decisionOf([...e.decided.decision.reasons, step]);
    }
    if (stopOn !== undefined && (e?.decided.decision.allowed ?? false) === stopOn) return;
  }
}

async function weigh(
  deps: Deps,
  caller: Principal,
  e: Evaluation,
  p: Principal,
  useIds: Map<string, string>,
): Promise<AccessReason | null> {
  const target = { orgId: e.target.owner.orgId, deviceIds: e.target.type === 'device' ? [e.target.id] : [] };
  if (e.dryRun) return deps.governor.peek(deps.db, p, e.permission, target);
  // One use per subject in the request, whichever of its memberships allows each evaluation.
  const key = `${e.subject.type}:${e.subject.id}`;
  let useId = useIds.get(key);
  if (!useId) useIds.set(key, (useId = randomUUID()));
  p.governorUseId = useId;
  p.governorEvents = [];
  const step = await deps.governor.charge(deps.db, p, [e.permission], target);
  const subject = { type: e.subject.type, id: e.subject.id };
  for (const ev of p.governorEvents) (caller.governorEvents ??= []).push({ ...ev, subject });
  p.governorEvents = [];
  return step;
}

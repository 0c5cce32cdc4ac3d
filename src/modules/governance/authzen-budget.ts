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

/** An evaluation the decision allowed, with the membership (or account) that allows it. */
export interface AllowedEvaluation {
  subject: { type: string; id: string };
  principal: Subject['principal'];
  permission: string;
  target: { type: string; id: string; owner: { orgId: string | null } };
  dryRun: boolean;
}

/** Puts the freezes in force on each subject's principal, as authenticate does for a caller (the `freeze` step). */
export async function attachFreezes(deps: Deps, subjects: Iterable<Subject>): Promise<void> {
  for (const s of subjects) await deps.governor.cache.attach(s.principal);
}

/**
 * The `budget` step of each allowed evaluation of a destructive permission (in order; absent: no budget bears on it).
 * Trips and co-signature unlocks go on the caller's audit events, naming the subject they were charged to.
 */
export async function chargeEvaluations(
  deps: Deps,
  caller: Principal,
  allowed: AllowedEvaluation[],
): Promise<(AccessReason | null)[]> {
  const useIds = new Map<string, string>();
  const out: (AccessReason | null)[] = [];
  for (const e of allowed) {
    if (!isDestructive(e.permission)) {
      out.push(null);
      continue;
    }
    const p = e.principal;
    const target = { orgId: e.target.owner.orgId, deviceIds: e.target.type === 'device' ? [e.target.id] : [] };
    if (e.dryRun) {
      out.push(await deps.governor.peek(deps.db, p, e.permission, target));
      continue;
    }
    // One use per subject in the request, whichever of its memberships allows each evaluation.
    const key = `${e.subject.type}:${e.subject.id}`;
    let useId = useIds.get(key);
    if (!useId) useIds.set(key, (useId = randomUUID()));
    p.governorUseId = useId;
    p.governorEvents = [];
    out.push(await deps.governor.charge(deps.db, p, [e.permission], target));
    for (const ev of p.governorEvents)
      (caller.governorEvents ??= []).push({ ...ev, subject: { type: e.subject.type, id: e.subject.id } });
    p.governorEvents = [];
  }
  return out;
}

/** Adds the `budget` step to each allowed decision it bears on (null: a record not the caller's to ask about). */
export async function weighBudgets(
  deps: Deps,
  caller: Principal,
  evaluations: (
    | {
        subject: AllowedEvaluation['subject'];
        permission: string;
        target: AllowedEvaluation['target'];
        dryRun: boolean;
        decided: Decided;
      }
    | null
    | undefined
  )[],
): Promise<void> {
  const allowed = evaluations.flatMap((e) => (e?.decided.by ? [{ ...e, principal: e.decided.by.principal }] : []));
  const steps = await chargeEvaluations(deps, caller, allowed);
  allowed.forEach((e, k) => {
    const step = steps[k];
    if (step) e.decided.decision = decisionOf([...e.decided.decision.reasons, step]);
  });
}

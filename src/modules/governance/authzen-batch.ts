// How a batch of evaluations ends: all of them (execute_all), or at the first deny (deny_on_first_deny) or permit
// (permit_on_first_permit), whose context names the semantic. What is not answered is not charged to any budget.

export type Semantic = 'execute_all' | 'deny_on_first_deny' | 'permit_on_first_permit';

/** The answer that ends the batch (undefined: none does). */
export const stopOnOf = (semantic: Semantic): boolean | undefined =>
  semantic === 'execute_all' ? undefined : semantic === 'permit_on_first_permit';

/** The batch's answers under its semantic: all of them, or up to the first deny (or permit), which says so. */
export function applySemantic<A extends { decision: boolean; context: { reason?: string } }>(
  answers: A[],
  semantic: Semantic,
): A[] {
  const stopOn = stopOnOf(semantic);
  if (stopOn === undefined) return answers;
  const i = answers.findIndex((a) => a.decision === stopOn);
  if (i < 0) return answers;
  const out = answers.slice(0, i + 1);
  out[i] = { ...out[i]!, context: { ...out[i]!.context, reason: semantic } };
  return out;
}

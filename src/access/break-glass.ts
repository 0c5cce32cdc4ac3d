// Break-glass into an organisation that suspended partner access: the partner's designated account passes
// only with a stated reason (header x-break-glass-reason). authenticate arms the principal here; the decision
// (decision.ts orgAccessReasons) notes each organisation reached so, and the governance module's installBreakGlassAlerts
// audits and mails each use once the answer is sent.
import type { Principal } from './principal.js';

export const BREAK_GLASS_REASON_HEADER = 'x-break-glass-reason';

/** Arms the principal of the partner's break-glass account when the request states a reason. */
export function armBreakGlass(p: Principal, headers: Record<string, string | string[] | undefined>): void {
  if (!p.breakGlass) return;
  const reason = headers[BREAK_GLASS_REASON_HEADER];
  if (typeof reason !== 'string' || !reason.trim()) return;
  p.breakGlassReason = reason.trim().slice(0, 500);
  p.breakGlassUsed = new Set();
  p.freezePassed = new Set();
}

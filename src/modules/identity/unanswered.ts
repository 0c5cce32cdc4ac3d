// A single-use link (first-run setup, invitation) spent by a sign-in whose answer never reached the person: it
// failed after the commit, so they were told nothing and will submit the same form again. That second submission
// finishes it, once the person proves the password the first one set.
import type { Deps } from '../../deps.js';
import { verifyPassword } from './passwords.js';
import { type FlowKind, findUnansweredFlow, findUser, type Flow, type UserRow } from './repo.js';

/**
 * The flow and account to sign in again, or null. Only within the link's lifetime, only until an answer went out,
 * only for the e-mail the account was created with (when the form names one), only with its password, and never once
 * the account has a second factor (a password alone would then be less than a sign-in asks).
 */
export async function finishUnanswered(
  deps: Pick<Deps, 'db' | 'clock'>,
  kind: Extract<FlowKind, 'first_run_setup' | 'invite'>,
  token: string,
  proof: { email?: string; password: string },
): Promise<{ flow: Flow; user: UserRow } | null> {
  const flow = await findUnansweredFlow(deps.db, kind, token, deps.clock.now());
  // No password check without such a link: a refused link costs no hash, and the link itself is the secret.
  const user = flow?.userId ? await findUser(deps.db, flow.userId) : undefined;
  if (!flow || !user || user.status !== 'active' || user.mfaEnabled) return null;
  if (proof.email !== undefined && proof.email.toLowerCase() !== user.email.toLowerCase()) return null;
  if (!(await verifyPassword(user.passwordHash, proof.password))) return null;
  return { flow, user };
}

// First run: while no partner exists, a single-use setup link (1 hour, stored as its SHA-256) lets whoever started
// the service create the first partner and its administrator. Any partner, however created, ends setup.
import type { Executor } from '../../db/connect.js';
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import type { AuditRequestMeta } from '../audit/index.js';
import {
  consumeFlow,
  createFlow,
  finishUnanswered,
  type IssuedSession,
  listMemberships,
  noteFlowOutcome,
  startSession,
} from '../identity/index.js';
import { registerPartner } from '../auth/index.js';
import { anyPartnerExists, tryXactLock } from './repo.js';

export const SETUP_TTL_MS = 60 * 60 * 1000;
/** Serialises setups across instances: two valid links cannot both create a "first" partner. */
const SETUP_LOCK = 7242003;

export async function setupNeeded(db: Executor): Promise<boolean> {
  return !(await anyPartnerExists(db));
}

/**
 * Takes the setup lock and refuses when a partner exists; call first inside the setup transaction. A setup already
 * running elsewhere is refused at once (409) rather than waited for: only one of them can be the first.
 */
export async function assertSetupOpen(tx: Executor): Promise<void> {
  if (!(await tryXactLock(tx, SETUP_LOCK))) throw new AppError('setup_completed', 'Another setup is in progress.');
  if (!(await setupNeeded(tx))) throw new AppError('setup_completed');
}

export const setupUrl = (appUrl: string, token: string) => `${appUrl}/setup?token=${encodeURIComponent(token)}`;

/** A new setup link when setup is still needed (each start prints one; every unexpired one stays valid). */
export async function issueSetupLink(deps: Pick<Deps, 'db' | 'clock' | 'config'>): Promise<string | null> {
  if (!(await setupNeeded(deps.db))) return null;
  const { token } = await createFlow(deps.db, {
    kind: 'first_run_setup',
    userId: null,
    ttlMs: SETUP_TTL_MS,
    now: deps.clock.now(),
  });
  return setupUrl(deps.config.appUrl, token);
}

type SetupInput = { token: string; companyName: string; email: string; password: string; name: string };
type SetupResult = { issued: IssuedSession; partner: { id: string; name: string; slug: string } };

/**
 * Creates the first partner with the link. The link is closed for good once the answer went out (respondWithTokens);
 * if the answer failed after the commit, the same person submitting the same link again is signed in as setup did.
 */
export async function completeSetup(deps: Deps, input: SetupInput, meta: AuditRequestMeta): Promise<SetupResult> {
  const { token, ...partner } = input;
  let flowId: string | undefined;
  try {
    const done = await registerPartner(deps, partner, meta, {
      before: async (tx) => {
        await assertSetupOpen(tx);
        const flow = await consumeFlow(tx, 'first_run_setup', token, deps.clock.now());
        if (!flow) throw new AppError('invalid_setup_token');
        flowId = flow.id;
      },
      after: (tx, created) => noteFlowOutcome(tx, flowId!, created.userId, { partner: created.partner }),
    });
    return { ...done, issued: { ...done.issued, spentFlowId: flowId } };
  } catch (err) {
    if (!(err instanceof AppError) || (err.code !== 'setup_completed' && err.code !== 'invalid_setup_token')) throw err;
    const again = await finishSetupAgain(deps, input, meta);
    if (!again) throw err;
    return again;
  }
}

/** The second submission of a link whose setup committed but whose answer failed: a sign-in, answered as setup. */
async function finishSetupAgain(deps: Deps, input: SetupInput, meta: AuditRequestMeta): Promise<SetupResult | null> {
  const found = await finishUnanswered(deps, 'first_run_setup', input.token, input);
  if (!found) return null;
  const { flow, user } = found;
  const partner = (flow.data as { partner: SetupResult['partner'] }).partner;
  const membership = (await listMemberships(deps.db, user.id)).find(
    (m) => m.scope === 'partner' && m.partnerId === partner.id,
  );
  if (!membership) return null;
  const ctx = { scope: 'partner' as const, partnerId: partner.id, orgId: null, roleId: membership.roleId };
  const issued = await deps.db.transaction((tx) =>
    startSession(deps, tx, user, ctx, { mfa: false, method: 'setup', meta }),
  );
  return { issued: { ...issued, spentFlowId: flow.id }, partner };
}

// First run: while no partner exists, a single-use setup link (1 hour, stored as its SHA-256) lets whoever started
// the service create the first partner and its administrator. Any partner, however created, ends setup.
import type { Executor } from '../../db/connect.js';
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import type { AuditRequestMeta } from '../audit/index.js';
import { consumeFlow, createFlow } from '../identity/index.js';
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

export async function completeSetup(
  deps: Deps,
  input: { token: string; companyName: string; email: string; password: string; name: string },
  meta: AuditRequestMeta,
) {
  const { token, ...partner } = input;
  return registerPartner(deps, partner, meta, async (tx) => {
    await assertSetupOpen(tx);
    if (!(await consumeFlow(tx, 'first_run_setup', token, deps.clock.now()))) throw new AppError('invalid_setup_token');
  });
}

// ENABLE_2FA=false turns second factors off: every MFA, phone and passkey route then answers 404.
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';

/** The onRequest hook of those routes. */
export const twoFactorOn = (deps: Pick<Deps, 'config'>) => async () => {
  if (!deps.config.enable2fa) throw new AppError('not_found', 'Multi-factor authentication is turned off.');
};

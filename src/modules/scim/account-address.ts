// A SCIM write that names a new address for an account the token provisioned. The address is the account's key
// everywhere (sign-in, reset links, invitations): SCIM moves it only while every membership of the account lies in
// the token's tenant, and only once the new address opens the link mailed to it.
import { confinedToTenant } from '../../access/account-authority.js';
import type { Tx } from '../../db/connect.js';
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { requestEmailChange } from '../auth/index.js';
import type { Target } from '../../db/tenant-filter.js';

/** The address now waiting for its proof (null: none; the address asked for is the current one). */
export async function readdressAccount(
  deps: Deps,
  tx: Tx,
  t: Target,
  account: { id: string; email: string },
  address: string,
): Promise<string | null> {
  if (account.email.toLowerCase() !== address && !(await confinedToTenant(tx, t, account.id)))
    throw new AppError(
      'account_outside_authority',
      'The account also belongs to another tenant: its e-mail address cannot be changed from here.',
    );
  return requestEmailChange(deps, tx, account, address, { kind: 'scim', partnerId: t.partnerId, orgId: t.orgId });
}

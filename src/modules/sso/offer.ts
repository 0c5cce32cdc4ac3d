// SSO auto-provisioning of an address whose account exists: the account is offered the membership (pending), never
// made a member by the identity provider's word alone.
import type { Tx } from '../../db/connect.js';
import type { Deps } from '../../deps.js';
import type { SsoFailureCode } from '../../http/errors.js';
import type { AuditRequestMeta } from '../audit/index.js';
import { offerMembership } from '../invitations/index.js';
import { orgExists, pendingMembershipAt, type ProviderRow, providerTenantName } from './repo.js';

type Provider = ProviderRow;

/**
 * An existing account that is no member of the provider's tenant: auto-provisioning (a proven domain, a default role)
 * offers it the membership, pending until the account itself accepts it; the sign-in ends until then.
 */
export async function offerToExisting(
  deps: Deps,
  tx: Tx,
  provider: Provider,
  account: { id: string; email: string; status: string },
  proven: boolean,
  meta: AuditRequestMeta,
): Promise<'offered' | SsoFailureCode> {
  if (await pendingMembershipAt(tx, provider, account.id)) return 'invitation_pending';
  if (!provider.autoProvision || !proven || !provider.defaultRoleId || account.status === 'disabled')
    return 'no_org_access';
  if (provider.orgId && !(await orgExists(tx, provider.orgId))) return 'provider_not_found';
  const notice = {
    userId: account.id,
    email: account.email,
    inviterName: `Single sign-on of ${await providerTenantName(tx, provider)}`,
    tenantName: await providerTenantName(tx, provider),
    byPartner: provider.madeByPartner === true,
  };
  await offerMembership(
    deps,
    tx,
    provider.orgId
      ? {
          kind: 'organization',
          orgId: provider.orgId,
          roleId: provider.defaultRoleId,
          siteIds: null,
          deviceGroupIds: null,
        }
      : {
          kind: 'partner',
          partnerId: provider.partnerId,
          roleId: provider.defaultRoleId,
          orgAccess: 'none',
          orgIds: [],
        },
    notice,
  );
  await deps.audit.record(
    tx,
    {
      action: 'user.sso.provision',
      actor: { userId: account.id, email: account.email },
      partnerId: provider.partnerId,
      orgId: provider.orgId,
      resourceType: 'user',
      resourceId: account.id,
      details: { providerId: provider.id, roleId: provider.defaultRoleId, existingAccount: true, pending: true },
    },
    meta,
  );
  return 'offered';
}

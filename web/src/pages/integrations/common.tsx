// Shared parts of the integrations pages: whose records a page shows (the partner's own or one organisation's),
// and the roles of that owner. (Paging, the "shown once" box and the confirm dialog are in components/.)
import { useState } from 'react';
import { TenantSelect } from '../../components/TenantSelect';
import { useAllRoles } from '../roles/data';
import { useMe } from '../Shell';

/**
 * The owner a page acts on: a partner member picks the partner itself (null) or one of its organisations; an
 * organisation member acts in their own organisation (the API's default, so no orgId is sent).
 */
export function useOwner(label: string) {
  const me = useMe();
  const partner = me.data?.scope === 'partner';
  const [orgId, setOrgId] = useState<string | null>(null);
  const picker = partner ? <TenantSelect label={label} partnerLabel="The partner itself" value={orgId} onChange={setOrgId} /> : null;
  return { orgId: partner ? (orgId ?? undefined) : undefined, picker, partner };
}

/** The roles a new record of this owner may hold, for a Select. */
export function useRoleOptions(orgId: string | undefined, enabled: boolean) {
  const roles = useAllRoles(orgId, enabled);
  return { options: (roles.data ?? []).map((r) => ({ value: r.id, label: r.name })), loading: roles.isPending && enabled, error: roles.isError ? roles.error : null };
}

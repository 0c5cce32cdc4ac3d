// Shared parts of the integrations pages: whose records a page shows (the partner's own or one organisation's),
// and the roles of that owner. (Paging, the "shown once" box and the confirm dialog are in components/.)
import { Alert, Select } from '@mantine/core';
import { useState } from 'react';
import { TenantSelect } from '../../components/TenantSelect';
import { useAllRoles } from '../../hooks/roles';
import { explain } from '../../lib/errors';
import { useMe } from '../../hooks/me';

/**
 * The owner a page acts on: a partner member picks the partner itself (null) or one of its organisations; an
 * organisation member acts in their own organisation (the API's default, so no orgId is sent).
 */
export function useOwner(label: string) {
  const me = useMe();
  const partner = me.data?.scope === 'partner';
  const [orgId, setOrgId] = useState<string | null>(null);
  const picker = partner ? (
    <TenantSelect label={label} partnerLabel="The partner itself" value={orgId} onChange={setOrgId} />
  ) : null;
  return { orgId: partner ? (orgId ?? undefined) : undefined, picker, partner };
}

/** The role a new record of this owner will hold: the owner's roles, loaded while `enabled`, refusals in words. */
export function RoleSelect(p: {
  orgId: string | undefined;
  enabled: boolean;
  label: string;
  description: string;
  value: string | null;
  onChange: (v: string | null) => void;
}) {
  const roles = useAllRoles(p.orgId, p.enabled);
  return (
    <>
      <Select
        label={p.label}
        description={p.description}
        data={(roles.data ?? []).map((r) => ({ value: r.id, label: r.name }))}
        value={p.value}
        onChange={p.onChange}
        required
        placeholder={roles.isPending && p.enabled ? 'Loading…' : 'Choose a role'}
      />
      {roles.isError && (
        <Alert color="red" role="alert">
          {explain(roles.error)}
        </Alert>
      )}
    </>
  );
}

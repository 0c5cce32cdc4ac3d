// "Of the partner, or of one of its organisations": the owner picker of the roles, SSO and audit pages.
import { Select } from '@mantine/core';
import { useOrganizations } from '../pages/users/Users';

export function TenantSelect({ label, partnerLabel, value, onChange, enabled = true }: { label: string; partnerLabel: string; value: string | null; onChange: (orgId: string | null) => void; enabled?: boolean }) {
  const orgs = useOrganizations(enabled);
  return (
    <Select
      label={label}
      data={[{ value: '', label: partnerLabel }, ...(orgs.data ?? []).map((o) => ({ value: o.id, label: o.name }))]}
      value={value ?? ''}
      onChange={(v) => onChange(v || null)}
      allowDeselect={false}
      w={280}
    />
  );
}

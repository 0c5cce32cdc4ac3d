// "Of the partner, or of one of its organisations": the owner picker of the users, roles, SSO, audit, onboarding and
// integrations pages. The empty value stands for the partner itself (onChange gives null).
import { Select } from '@mantine/core';
import { useOrganizations } from '../hooks/organizations';

export function TenantSelect({
  label,
  partnerLabel,
  value,
  onChange,
  enabled = true,
  description,
  orgLabel = (name) => name,
  w = 280,
}: {
  label: string;
  partnerLabel: string;
  value: string | null;
  onChange: (orgId: string | null) => void;
  enabled?: boolean;
  description?: string;
  /** How an organisation is named in the list. */
  orgLabel?: (name: string) => string;
  w?: number;
}) {
  const orgs = useOrganizations(enabled);
  return (
    <Select
      label={label}
      description={description}
      data={[
        { value: '', label: partnerLabel },
        ...(orgs.data ?? []).map((o) => ({ value: o.id, label: orgLabel(o.name) })),
      ]}
      value={value ?? ''}
      onChange={(v) => onChange(v || null)}
      allowDeselect={false}
      w={w}
    />
  );
}

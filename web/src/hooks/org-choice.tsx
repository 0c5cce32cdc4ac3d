// The organisation a page acts on, with its picker for partner members.
import { Select, Text } from '@mantine/core';
import { useState } from 'react';
import { useMe } from './me';
import { useOrganizations } from './organizations';

/**
 * The organisation a page acts on: an organisation member's own, or the one a partner member picks (the first
 * visible organisation until then).
 */
export function useOrgChoice() {
  const me = useMe();
  const partner = me.data?.scope === 'partner';
  const orgs = useOrganizations(partner);
  const [picked, setPicked] = useState<string | null>(null);
  const orgId = partner ? (picked ?? orgs.data?.[0]?.id ?? null) : (me.data?.orgId ?? null);
  const picker = partner ? (
    <Select
      label="Organisation"
      data={(orgs.data ?? []).map((o) => ({ value: o.id, label: o.name }))}
      value={orgId}
      onChange={(v) => v && setPicked(v)}
      allowDeselect={false}
      placeholder={orgs.isPending ? 'Loading…' : 'No organisation yet'}
      disabled={!orgs.data?.length}
      w={280}
    />
  ) : null;
  const noOrg = partner && orgs.isSuccess && orgs.data.length === 0;
  return {
    orgId,
    picker,
    noOrg,
    partner,
    orgsError: orgs.isError ? orgs.error : null,
    orgsLoading: partner && orgs.isPending,
    orgName: orgs.data?.find((o) => o.id === orgId)?.name,
  };
}

export function NoOrganisation() {
  return (
    <Text c="dimmed">
      No organisation yet. Create one on the Tenants page first: onboarding acts inside an organisation.
    </Text>
  );
}

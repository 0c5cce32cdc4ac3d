// Shared parts of the onboarding pages: the organisation they act on, notices, and the CSV header reader of the
// import wizards. (The "load / empty / error" frame is components/Loaded.tsx.)
import { Select, Text } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useState } from 'react';
import { explain } from '../../lib/errors';
import { useMe } from '../Shell';
import { useOrganizations } from '../../lib/organizations';

export const done = (message: string) => notifications.show({ color: 'green', message });
export const failed = (err: unknown) => notifications.show({ color: 'red', title: 'Not done', message: explain(err) });

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

/** The column names of a CSV's first record (quoted names and a UTF-8 BOM handled; the API parses the rest). */
export function csvHeader(text: string): string[] {
  const s = text.replace(/^\uFEFF/, '');
  const out: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (quoted) {
      if (c === '"' && s[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      out.push(cell.trim());
      cell = '';
    } else if (c === '\n' || c === '\r') break;
    else cell += c;
  }
  out.push(cell.trim());
  return out.filter((h, i) => h !== '' || i < out.length - 1);
}

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

// Shared parts of the integrations pages: whose records a page shows (the partner's own or one organisation's),
// keyset paging, the roles of that owner, and the "shown once" box of a new secret.
import { Alert, Button, Code, CopyButton, Group, Stack } from '@mantine/core';
import type { ReactNode } from 'react';
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

/** Keyset paging: the cursors walked so far; the last one is the page shown. */
export function usePaging(key: unknown) {
  const [state, setState] = useState<{ key: string; cursors: (string | undefined)[] }>({ key: JSON.stringify(key), cursors: [undefined] });
  const k = JSON.stringify(key);
  const cursors = state.key === k ? state.cursors : [undefined];
  return {
    cursor: cursors[cursors.length - 1],
    pager: (next: string | null | undefined) =>
      cursors.length > 1 || next ? (
        <Group>
          <Button variant="default" disabled={cursors.length < 2} onClick={() => setState({ key: k, cursors: cursors.slice(0, -1) })}>
            Previous
          </Button>
          <Button variant="default" disabled={!next} onClick={() => next && setState({ key: k, cursors: [...cursors, next] })}>
            Next
          </Button>
        </Group>
      ) : null,
  };
}

/** The roles a new record of this owner may hold, for a Select. */
export function useRoleOptions(orgId: string | undefined, enabled: boolean) {
  const roles = useAllRoles(orgId, enabled);
  return { options: (roles.data ?? []).map((r) => ({ value: r.id, label: r.name })), loading: roles.isPending && enabled, error: roles.isError ? roles.error : null };
}

/** A secret shown once, with a copy button and a Done button. */
export function ShownOnce({ what, value, testId, children, onDone }: { what: string; value: string; testId: string; children?: ReactNode; onDone: () => void }) {
  return (
    <Stack>
      <Alert color="yellow" title="Copy it now">
        This is the only time the {what} is shown. Gatehouse keeps only a fingerprint of it.
      </Alert>
      <Code block data-testid={testId} style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all' }}>
        {value}
      </Code>
      {children}
      <Group justify="space-between">
        <CopyButton value={value}>
          {({ copied, copy }) => (
            <Button variant="default" onClick={copy}>
              {copied ? 'Copied' : `Copy ${what}`}
            </Button>
          )}
        </CopyButton>
        <Button onClick={onDone}>Done</Button>
      </Group>
    </Stack>
  );
}

// Audit: the records of the caller's scope, newest first, filtered by action, actor, organisation, result and time
// range, paged with the API's keyset cursors; a record's details; CSV and JSON Lines export; chain verification.
import { Button, Group, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { CursorPager, useCursorList } from '../../components/CursorPager';
import { DataTable } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { TenantSelect } from '../../components/TenantSelect';
import { can, useMe } from '../../hooks/me';
import { useOrganizations } from '../../hooks/organizations';
import { AuditDetails, type AuditRecord } from './AuditDetails';
import { ExportButtons, VerifyChain, type AuditFilters } from './AuditTools';

const PAGE = 50;
const RESULTS = [
  { value: '', label: 'Any result' },
  { value: 'success', label: 'Success' },
  { value: 'failure', label: 'Failure' },
  { value: 'denied', label: 'Denied' },
];

/** `datetime-local` value (the browser's time zone) → an instant the API accepts. */
const instant = (local: string) =>
  local && !Number.isNaN(Date.parse(local)) ? new Date(local).toISOString() : undefined;

interface Actor {
  id: string;
  label: string;
}

export default function Audit() {
  const me = useMe();
  const partner = me.data?.scope === 'partner';
  const orgs = useOrganizations(partner);
  const [action, setAction] = useState('');
  const [debouncedAction] = useDebouncedValue(action.trim(), 300);
  const [result, setResult] = useState('');
  const [orgId, setOrgId] = useState<string | null>(null);
  const [actor, setActor] = useState<Actor | null>(null);
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [open, setOpen] = useState<AuditRecord | null>(null);

  const filters: AuditFilters = {
    action: debouncedAction || undefined,
    result: (result || undefined) as AuditFilters['result'],
    orgId: orgId ?? undefined,
    actorUserId: actor?.id,
    from: instant(from),
    to: instant(to),
  };
  const { pages, list } = useCursorList(['audit', filters], (cursor) =>
    call(api.GET('/api/v1/audit-logs', { params: { query: { ...filters, cursor, limit: PAGE } } })),
  );
  const reset = pages.reset;
  const orgName = (id: string | null) =>
    id
      ? (orgs.data?.find((o) => o.id === id)?.name ?? (id === me.data?.orgId ? 'Your organisation' : id))
      : 'The partner';
  const filtered = Object.values(filters).some(Boolean);

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1} size="h2">
          Audit
        </Title>
        <Group gap="xs">{can(me.data, 'audit:export') && <ExportButtons filters={filters} />}</Group>
      </Group>
      <VerifyChain />
      <Group align="end" gap="sm" role="search" aria-label="Filter audit records">
        <TextInput
          label="Action"
          description="Exact, or a prefix: auth.*"
          placeholder="auth.login"
          value={action}
          onChange={(e) => {
            setAction(e.currentTarget.value);
            reset();
          }}
          w={220}
        />
        <ActorSelect
          orgId={orgId ?? undefined}
          value={actor}
          onChange={(a) => {
            setActor(a);
            reset();
          }}
        />
        {partner && (
          <TenantSelect
            label="Organisation"
            description="Records of one organisation"
            partnerLabel="All I can see"
            value={orgId}
            onChange={(v) => {
              setOrgId(v);
              reset();
            }}
            w={220}
          />
        )}
        <Select
          label="Result"
          description="Any outcome, or one"
          data={RESULTS}
          value={result}
          onChange={(v) => {
            setResult(v ?? '');
            reset();
          }}
          allowDeselect={false}
          w={150}
        />
        <TextInput
          type="datetime-local"
          label="From"
          description="Inclusive, your time"
          value={from}
          onChange={(e) => {
            setFrom(e.currentTarget.value);
            reset();
          }}
          w={210}
        />
        <TextInput
          type="datetime-local"
          label="To"
          description="Exclusive, your time"
          value={to}
          onChange={(e) => {
            setTo(e.currentTarget.value);
            reset();
          }}
          w={210}
        />
        {filtered && (
          <Button
            variant="subtle"
            onClick={() => {
              setAction('');
              setResult('');
              setOrgId(null);
              setActor(null);
              setFrom('');
              setTo('');
              reset();
            }}
          >
            Clear filters
          </Button>
        )}
      </Group>
      <Loaded
        q={list}
        what="audit records"
        isEmpty={(d) => d.data.length === 0}
        empty={filtered ? 'No record matches these filters.' : 'No audit record yet.'}
      >
        {(d) => (
          <DataTable
            testId="audit-table"
            highlightOnHover
            columns={['Time', 'Action', 'Result', 'Actor', partner && 'Organisation', 'Resource']}
            hidden="Details"
            rows={d.data}
          >
            {(r) => (
              <>
                <Table.Td>{new Date(r.at).toLocaleString()}</Table.Td>
                <Table.Td>
                  <Text ff="monospace" size="sm">
                    {r.action}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Text size="sm" fw={r.result === 'success' ? 400 : 700}>
                    {r.result}
                  </Text>
                </Table.Td>
                <Table.Td>{r.actorEmail ?? (r.actorUserId ? 'A removed user' : 'The system')}</Table.Td>
                {partner && <Table.Td>{orgName(r.orgId)}</Table.Td>}
                <Table.Td>{r.resourceType ?? '—'}</Table.Td>
                <Table.Td>
                  <Button
                    size="xs"
                    variant="default"
                    onClick={() => setOpen(r)}
                    aria-label={`Details of ${r.action} at ${new Date(r.at).toLocaleString()}`}
                  >
                    Details
                  </Button>
                </Table.Td>
              </>
            )}
          </DataTable>
        )}
      </Loaded>
      <CursorPager pages={pages} next={list.data?.nextCursor} numbered />
      <AuditDetails
        record={open}
        orgName={orgName}
        onClose={() => setOpen(null)}
        onFilter={(f) => {
          if (f.action) setAction(f.action);
          if (f.actorUserId) setActor({ id: f.actorUserId, label: f.actorEmail ?? f.actorUserId });
          reset();
          setOpen(null);
        }}
      />
    </Stack>
  );
}

/** The actor filter: a member of the partner (or of the chosen organisation), found by name or e-mail. */
function ActorSelect({
  orgId,
  value,
  onChange,
}: {
  orgId?: string;
  value: Actor | null;
  onChange: (a: Actor | null) => void;
}) {
  const me = useMe();
  const [search, setSearch] = useState('');
  const [debounced] = useDebouncedValue(search.trim(), 250);
  const mayList = can(me.data, 'users:read');
  const users = useQuery({
    queryKey: ['users', orgId, debounced, 'actor-picker'],
    enabled: mayList,
    queryFn: async () =>
      (
        await call(
          api.GET('/api/v1/users', {
            params: {
              query: { orgId, search: debounced && debounced !== value?.label ? debounced : undefined, limit: 20 },
            },
          }),
        )
      ).data,
  });
  const options = new Map<string, string>((users.data ?? []).map((u) => [u.id, u.email]));
  if (value) options.set(value.id, value.label);
  return (
    <Select
      label="Actor"
      description={mayList ? 'Who did it' : 'Pick from a record’s details'}
      placeholder="Anyone"
      searchable
      clearable
      nothingFoundMessage={users.isPending ? 'Loading…' : 'Nobody found'}
      data={[...options].map(([id, label]) => ({ value: id, label }))}
      value={value?.id ?? null}
      onChange={(id) => onChange(id ? { id, label: options.get(id) ?? id } : null)}
      searchValue={search}
      onSearchChange={setSearch}
      w={240}
    />
  );
}

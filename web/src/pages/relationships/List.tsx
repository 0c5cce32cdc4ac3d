// The relationships a caller sees: a partner's with its organisations (filters by organisation and state), or an
// organisation's with its partner; and the expiring list (organisation, expiring or expired) with its CSV export.
// Organisation admins terminate from here; the partner drafts a new one.
import { Badge, Button, Group, Select, Stack, Table, Text, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api, call } from '../../api/client';
import { CursorPager, useCursorList } from '../../components/CursorPager';
import { DataTable } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { saveBlob } from '../../lib/download';
import { explain } from '../../lib/errors';
import { can, useMe } from '../../hooks/me';
import { useOrganizations } from '../../hooks/organizations';
import {
  isOpen,
  reachWords,
  type Relationship,
  type RelationshipStatus,
  STATUS_WORDS,
} from '../../hooks/relationships';
import { when } from '../onboarding/common';
import { RequireRelationshipsSwitch } from './RequireSwitch';
import { useTerminate } from './Terminate';

const ALL = '';

const daysLeft = (iso: string) => {
  const d = Math.max(0, Math.ceil((Date.parse(iso) - Date.now()) / 86_400_000));
  return `${d} day${d === 1 ? '' : 's'}`;
};

export function StatusBadge({ status }: { status: RelationshipStatus }) {
  const s = STATUS_WORDS[status];
  return (
    <Badge
      color={s.color}
      c="dark.9"
      variant="filled"
      style={{ minWidth: 'max-content' }}
      data-testid="relationship-status"
    >
      {s.label}
    </Badge>
  );
}

export function RelationshipList({ expiring = false }: { expiring?: boolean }) {
  const me = useMe();
  const partner = me.data?.scope === 'partner';
  const orgs = useOrganizations(partner);
  const [orgId, setOrgId] = useState(ALL);
  const [status, setStatus] = useState<string>(expiring ? 'expiring' : ALL);
  const query = {
    orgId: orgId || undefined,
    status: (status || undefined) as RelationshipStatus | undefined,
  };
  const { pages, list } = useCursorList(
    ['relationships', 'list', query],
    (cursor) => call(api.GET('/api/v1/relationships', { params: { query: { ...query, cursor, limit: 50 } } })),
    { resetOn: query },
  );
  const terminate = useTerminate();
  // The organisation's admins end relationships from their side; the partner's writers from theirs.
  const mayEnd = can(me.data, 'users:write');
  const exp = useMutation({
    mutationFn: async () => {
      const res = await api.GET('/api/v1/relationships/export', { params: { query }, parseAs: 'blob' });
      const blob = await call(Promise.resolve(res));
      saveBlob(blob as Blob, 'relationships.csv');
    },
    onSuccess: () => notifications.show({ color: 'green', message: 'Exported to relationships.csv.' }),
    onError: (err) => notifications.show({ color: 'red', title: 'Export failed', message: explain(err) }),
  });
  const statuses = expiring
    ? [
        { value: 'expiring', label: 'Ending within 30 days' },
        { value: 'expired', label: 'Expired' },
      ]
    : [
        { value: ALL, label: 'Every state' },
        ...Object.entries(STATUS_WORDS).map(([value, s]) => ({ value, label: s.label })),
      ];
  return (
    <Stack>
      <Group justify="space-between" align="start">
        <Title order={1} size="h2">
          {expiring ? 'Expiring relationships' : 'Relationships'}
        </Title>
        <Group>
          <Button component={Link} to={expiring ? '/relationships' : '/relationships/expiring'} variant="default">
            {expiring ? 'Every relationship' : 'Expiring'}
          </Button>
          {partner && !expiring && can(me.data, 'users:read') && (
            <Button component={Link} to="/relationships/groups" variant="default">
              Access groups
            </Button>
          )}
          {partner && !expiring && can(me.data, 'users:write') && (
            <Button component={Link} to="/relationships/new">
              New relationship
            </Button>
          )}
        </Group>
      </Group>
      <Text size="sm" maw={760}>
        {partner
          ? 'What your staff may do in each organisation, where, and until when, as its admins approved it. Approved relationships only narrow; anything wider is a new relationship and a new approval.'
          : 'What your managing partner’s staff may do in this organisation, where, and until when, as its admins approved it. An admin of the organisation ends any of them at once.'}
        {expiring && ' Both sides are mailed 30, 7 and 1 days before the end, and at the end.'}
      </Text>
      {partner && !expiring && <RequireRelationshipsSwitch />}
      <Group align="end">
        {partner && (
          <Select
            label="Organisation"
            data={[
              { value: ALL, label: 'Every organisation' },
              ...(orgs.data ?? []).map((o) => ({ value: o.id, label: o.name })),
            ]}
            value={orgId}
            onChange={(v) => setOrgId(v ?? ALL)}
            allowDeselect={false}
            w={260}
          />
        )}
        <Select
          label="State"
          data={statuses}
          value={status}
          onChange={(v) => setStatus(v ?? ALL)}
          allowDeselect={false}
          w={240}
        />
        {expiring && (
          <Button variant="default" loading={exp.isPending} onClick={() => exp.mutate()}>
            Export CSV
          </Button>
        )}
      </Group>
      <Loaded
        q={list}
        what="relationships"
        isEmpty={(d) => d.data.length === 0}
        empty={expiring ? 'No relationship in this state.' : 'No relationship yet.'}
      >
        {(d) => (
          <DataTable
            testId="relationships-table"
            columns={['Name', partner ? 'Organisation' : 'Partner', 'State', 'Roles', 'Reach', 'Ends']}
            hidden="Actions"
            rows={d.data}
          >
            {(r: Relationship) => (
              <>
                <Table.Td>
                  <Link to={`/relationships/${r.id}`}>{r.name}</Link>
                </Table.Td>
                <Table.Td>{partner ? r.orgName : r.partnerName}</Table.Td>
                <Table.Td>
                  <StatusBadge status={r.status} />
                </Table.Td>
                <Table.Td>{r.roles.map((x) => x.name).join(', ')}</Table.Td>
                <Table.Td>{reachWords(r)}</Table.Td>
                <Table.Td>
                  {when(r.endsAt)}
                  {r.endsAt && r.autoExtend ? ' (extends)' : ''}
                  {r.endsAt && r.status === 'expiring' ? ` (in ${daysLeft(r.endsAt)})` : ''}
                </Table.Td>
                <Table.Td>
                  {mayEnd && isOpen(r.status) && (
                    <Button
                      size="xs"
                      variant="default"
                      color="red"
                      onClick={() => terminate.ask(r)}
                      aria-label={`Terminate ${r.name}`}
                    >
                      Terminate
                    </Button>
                  )}
                </Table.Td>
              </>
            )}
          </DataTable>
        )}
      </Loaded>
      <CursorPager pages={pages} next={list.data?.nextCursor} />
      {terminate.dialog}
    </Stack>
  );
}

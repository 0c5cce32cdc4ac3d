// "Why can X do Y on Z?": a person, a permission of the catalogue, a record; the answer is allowed or
// denied with each step the service walked (account → membership → policies → role → organisation access → site →
// device group), the step that denies named. The API answers from the resolver the request pipeline itself runs.
import { Alert, Badge, Button, Group, List, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import type { components, operations } from '../../api/schema';
import { DataTable } from '../../components/DataTable';
import { TenantSelect } from '../../components/TenantSelect';
import { explain } from '../../lib/errors';
import { permKey, resourceLabel, useCatalog } from '../../hooks/roles';
import { useMe } from '../../hooks/me';
import { RelationshipLinks } from '../relationships/Links';
import { useOrgNames } from './common';

type Query = operations['explainAccess']['parameters']['query'];
type Reason = components['schemas']['AccessReason'];

const TYPES: { value: Query['resourceType']; label: string }[] = [
  { value: 'organization', label: 'Organisation' },
  { value: 'site', label: 'Site' },
  { value: 'device_group', label: 'Device group' },
  { value: 'device', label: 'Device' },
  { value: 'partner', label: 'Partner' },
];
const STEP_WORDS: Record<Reason['step'], string> = {
  account: 'Account',
  membership: 'Membership',
  ip_allowlist: 'IP allow-list',
  mfa: 'Two-step verification',
  role: 'Role',
  organization_access: 'Organisation access',
  msp_access: 'Partner access policy (mspAccess)',
  relationship: 'Delegated-access relationship',
  site: 'Site restriction',
  device_group: 'Device-group restriction',
  freeze: 'Freeze of destructive permissions',
  budget: 'Blast-radius budget',
};

export default function Explain() {
  const me = useMe();
  const partner = me.data?.scope === 'partner';
  const [peopleOf, setPeopleOf] = useState<string | null>(null);
  const [userId, setUserId] = useState<string | null>(null);
  const [permission, setPermission] = useState<string | null>('devices:read');
  const [resourceType, setResourceType] = useState<Query['resourceType']>('organization');
  const [resourceId, setResourceId] = useState('');
  const catalog = useCatalog();
  const { orgs } = useOrgNames();
  const people = useQuery({
    queryKey: ['users', peopleOf ?? undefined, 'explain'],
    queryFn: () => call(api.GET('/api/v1/users', { params: { query: { orgId: peopleOf ?? undefined, limit: 200 } } })),
  });
  const ask = useMutation({
    mutationFn: () =>
      call(
        api.GET('/api/v1/access/explain', {
          params: {
            query: {
              userId: userId!,
              permission: permission as Query['permission'],
              resourceType,
              resourceId: resourceId.trim(),
            },
          },
        }),
      ),
  });
  const answer = ask.data;
  return (
    <Stack>
      <Text size="sm" maw={720}>
        Why can a person do something on a record, or why not? The answer walks the same checks every request passes and
        names the one that refuses.
      </Text>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          ask.mutate();
        }}
      >
        <Stack maw={520}>
          {partner && (
            <TenantSelect
              label="People of"
              partnerLabel="The partner itself"
              value={peopleOf}
              onChange={(v) => {
                setPeopleOf(v);
                setUserId(null);
              }}
            />
          )}
          <Select
            label="Person"
            searchable
            required
            data={(people.data?.data ?? []).map((u) => ({
              value: u.id,
              label: 'name' in u ? `${u.name} (${u.email})` : `${u.email} (invited)`,
            }))}
            value={userId}
            onChange={setUserId}
            placeholder={people.isPending ? 'Loading…' : 'Choose a person'}
          />
          {people.isError && (
            <Alert color="red" role="alert">
              {explain(people.error)}
            </Alert>
          )}
          <Select
            label="Permission"
            searchable
            required
            data={(catalog.data ?? []).map((p) => ({
              value: permKey(p),
              label: `${resourceLabel(p.resource)}: ${p.action} (${permKey(p)})`,
            }))}
            value={permission}
            onChange={setPermission}
            allowDeselect={false}
          />
          <Group grow align="start">
            <Select
              label="Record type"
              data={TYPES}
              value={resourceType}
              onChange={(v) => v && setResourceType(v as Query['resourceType'])}
              allowDeselect={false}
            />
            {resourceType === 'organization' && orgs.length > 0 ? (
              <Select
                label="Organisation"
                required
                data={orgs.map((o) => ({ value: o.id, label: o.name }))}
                value={resourceId || null}
                onChange={(v) => setResourceId(v ?? '')}
              />
            ) : (
              <TextInput
                label="Record ID"
                required
                value={resourceId}
                onChange={(e) => setResourceId(e.currentTarget.value)}
              />
            )}
          </Group>
          <Group>
            <Button type="submit" loading={ask.isPending} disabled={!userId || !permission || !resourceId.trim()}>
              Explain
            </Button>
          </Group>
        </Stack>
      </form>
      {ask.isError && (
        <Alert color="red" role="alert">
          {explain(ask.error)}
        </Alert>
      )}
      {answer && (
        <Stack data-testid="explanation">
          <Group>
            <Title order={2} size="h4">
              {answer.subject.name} {answer.allowed ? 'can' : 'cannot'} use {answer.permission} on this{' '}
              {(TYPES.find((x) => x.value === answer.resource.type)?.label ?? answer.resource.type).toLowerCase()}
            </Title>
            <Badge color={answer.allowed ? 'teal.9' : 'red'} variant="filled" data-testid="verdict">
              {answer.allowed ? 'Allowed' : 'Denied'}
            </Badge>
          </Group>
          {answer.deniedBy && (
            <Text size="sm" fw={700} data-testid="denied-by">
              Refused at: {STEP_WORDS[answer.deniedBy]}
            </Text>
          )}
          <Steps reasons={answer.reasons} testId="reason-steps" />
          {answer.memberships.length > 1 && (
            <>
              <Title order={3} size="h5">
                Each membership, decided separately
              </Title>
              <List size="sm">
                {answer.memberships.map((m) => (
                  <List.Item key={`${m.scope}-${m.orgId ?? m.partnerId}`}>
                    {m.scope === 'partner' ? 'Partner membership' : 'Organisation membership'} as {m.roleName}:{' '}
                    {m.allowed ? 'allows' : `refused at ${STEP_WORDS[m.deniedBy!]}`}
                  </List.Item>
                ))}
              </List>
            </>
          )}
        </Stack>
      )}
    </Stack>
  );
}

function Steps({ reasons, testId }: { reasons: Reason[]; testId: string }) {
  return (
    <DataTable
      testId={testId}
      columns={['Step', 'Result', 'What it found']}
      hidden="More"
      rows={reasons.map((r, i) => ({ ...r, id: String(i) }))}
      striped={false}
    >
      {(r) => (
        <>
          <Table.Td>{STEP_WORDS[r.step]}</Table.Td>
          <Table.Td>
            <Text size="sm" fw={700}>
              {r.allowed ? 'Passes' : 'Denies'}
            </Text>
          </Table.Td>
          <Table.Td>{r.detail}</Table.Td>
          <Table.Td>
            {r.relationshipIds?.length ? <RelationshipLinks ids={r.relationshipIds} /> : null}
            {r.relationshipIds?.length && (r.roleName || r.via || r.until) ? ' · ' : null}
            {[
              r.roleName && `Role: ${r.roleName}`,
              r.via && `Via: ${r.via.replace(/_/g, ' ')}`,
              r.until && `Until ${new Date(r.until).toLocaleString()}`,
              r.breakGlass && 'Break-glass account',
            ]
              .filter(Boolean)
              .join(' · ')}
          </Table.Td>
        </>
      )}
    </DataTable>
  );
}

// The partner's access groups: which of its staff use which relationships. The list with each group's members and
// relationships, and a new group (optionally following a partner-level SCIM group). Writers only see the form.
import { Button, Group, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, call } from '../../api/client';
import { DataTable } from '../../components/DataTable';
import { FormError } from '../../components/FormError';
import { Loaded } from '../../components/Loaded';
import { type AccessGroup, useAccessGroups, useGroupsChanged, useScimGroups } from '../../hooks/access-groups';
import { can, useMe } from '../../hooks/me';
import { fieldsNamed, useFieldErrors } from '../../hooks/useFieldErrors';
import { done } from '../onboarding/common';

export const GROUPS_EFFECT =
  'While relationships are required, a member of a group attached to an active relationship reaches its organisation through it, within the relationship’s roles and reach. Once a relationship has a group, only the members of its groups reach the organisation through it.';

const NONE = '';

/** The SCIM group picker: "none" and the partner's partner-level groups; hidden when the partner has none. */
export function ScimGroupSelect({
  value,
  onChange,
  error,
}: {
  value: string;
  onChange: (v: string) => void;
  error?: string;
}) {
  const scim = useScimGroups();
  const groups = scim.data?.data ?? [];
  if (!groups.length) return null;
  return (
    <Select
      label="Members of a SCIM group too"
      description="Its active members at your identity provider are members of this group as well"
      data={[{ value: NONE, label: 'None' }, ...groups.map((g) => ({ value: g.id, label: g.name }))]}
      value={value}
      onChange={(v) => onChange(v ?? NONE)}
      allowDeselect={false}
      error={error}
      w={320}
    />
  );
}

function NewGroup() {
  const navigate = useNavigate();
  const changed = useGroupsChanged();
  const [name, setName] = useState('');
  const [scimGroupId, setScim] = useState(NONE);
  const fe = useFieldErrors(fieldsNamed('name', 'scimGroupId'), { name, scimGroupId });
  const create = useMutation({
    mutationFn: () =>
      call(api.POST('/api/v1/access-groups', { body: { name, ...(scimGroupId ? { scimGroupId } : {}) } })),
    onSuccess: (g) => {
      done(`“${g.name}” is created: add its members and attach it to relationships.`);
      changed();
      navigate(`/relationships/groups/${g.id}`);
    },
    onError: fe.show,
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        create.mutate();
      }}
    >
      <Stack gap="xs">
        <Title order={2} size="h4">
          New access group
        </Title>
        <FormError text={fe.form} />
        <Group align="start">
          <TextInput
            label="Name"
            required
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            error={fe.fields.name}
            w={320}
          />
          <ScimGroupSelect value={scimGroupId} onChange={setScim} error={fe.fields.scimGroupId} />
        </Group>
        <Group>
          <Button type="submit" loading={create.isPending}>
            Create the group
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

export default function Groups() {
  const me = useMe();
  const list = useAccessGroups();
  const writer = can(me.data, 'users:write');
  return (
    <Stack>
      <Group justify="space-between" align="start">
        <Title order={1} size="h2">
          Access groups
        </Title>
        <Button component={Link} to="/relationships" variant="default">
          Every relationship
        </Button>
      </Group>
      <Text size="sm" maw={760}>
        Groups of your staff, attached to relationships: adding a person to a group attached to a relationship lets them
        in, removing them takes it away on their next request. {GROUPS_EFFECT}
      </Text>
      {writer && <NewGroup />}
      <Loaded q={list} what="access groups" isEmpty={(d) => d.data.length === 0} empty="No access group yet.">
        {(d) => (
          <DataTable
            testId="access-groups-table"
            columns={['Name', 'Members added by hand', 'SCIM group', 'Relationships']}
            hidden="Actions"
            rows={d.data}
          >
            {(g: AccessGroup) => (
              <>
                <Table.Td>
                  <Link to={`/relationships/groups/${g.id}`}>{g.name}</Link>
                </Table.Td>
                <Table.Td>{g.memberCount}</Table.Td>
                <Table.Td>{g.scimGroupName ?? '—'}</Table.Td>
                <Table.Td>
                  {g.relationships.length
                    ? g.relationships.map((r) => `${r.name} (${r.orgName})`).join(', ')
                    : 'None yet'}
                </Table.Td>
                <Table.Td>
                  <Button
                    component={Link}
                    to={`/relationships/groups/${g.id}`}
                    size="xs"
                    variant="default"
                    aria-label={`Open ${g.name}`}
                  >
                    Open
                  </Button>
                </Table.Td>
              </>
            )}
          </DataTable>
        )}
      </Loaded>
    </Stack>
  );
}

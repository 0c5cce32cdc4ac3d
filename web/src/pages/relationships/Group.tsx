// One access group: its name and SCIM group (changed beside their fields), its members by name (added from the
// partner's staff, removed after a confirmation), the relationships it is attached to, and its deletion.
import { Alert, Anchor, Button, Group, List, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, call } from '../../api/client';
import { ConfirmDialog, useConfirmed } from '../../components/ConfirmDialog';
import { DataTable } from '../../components/DataTable';
import { FormError } from '../../components/FormError';
import { Loaded } from '../../components/Loaded';
import { Loading } from '../../components/Loading';
import {
  type AccessGroup,
  type AccessGroupMember,
  useAccessGroup,
  useGroupMembers,
  useGroupsChanged,
  usePartnerStaff,
} from '../../hooks/access-groups';
import { can, useMe } from '../../hooks/me';
import { fieldsNamed, useFieldErrors } from '../../hooks/useFieldErrors';
import { explain } from '../../lib/errors';
import { done } from '../onboarding/common';
import { ScimGroupSelect } from './Groups';
import { StatusBadge } from './List';
import type { RelationshipStatus } from '../../hooks/relationships';

export default function AccessGroupPage() {
  const { groupId } = useParams();
  const g = useAccessGroup(groupId);
  if (g.isPending) return <Loading />;
  if (g.isError)
    return (
      <Alert color="red" role="alert">
        {explain(g.error)}
      </Alert>
    );
  return <View g={g.data} />;
}

function Settings({ g }: { g: AccessGroup }) {
  const changed = useGroupsChanged();
  const [name, setName] = useState(g.name);
  const [scimGroupId, setScim] = useState(g.scimGroupId ?? '');
  const fe = useFieldErrors(fieldsNamed('name', 'scimGroupId'), { name, scimGroupId });
  const save = useMutation({
    mutationFn: () =>
      call(
        api.PATCH('/api/v1/access-groups/{id}', {
          params: { path: { id: g.id } },
          body: { name, scimGroupId: scimGroupId || null },
        }),
      ),
    onSuccess: (x) => {
      done(`Saved: “${x.name}”.`);
      changed();
    },
    onError: fe.show,
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate();
      }}
    >
      <Stack gap="xs">
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
          <Button type="submit" variant="default" loading={save.isPending}>
            Save
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

function AddMember({ g, members }: { g: AccessGroup; members: readonly AccessGroupMember[] }) {
  const changed = useGroupsChanged();
  const staff = usePartnerStaff();
  const [userId, setUserId] = useState<string | null>(null);
  const fe = useFieldErrors(fieldsNamed('userId'), { userId });
  const inGroup = new Set(members.filter((m) => m.source === 'direct').map((m) => m.userId));
  const add = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/v1/access-groups/{id}/members', { params: { path: { id: g.id } }, body: { userId: userId! } }),
      ),
    onSuccess: (m) => {
      done(`${m.name} is a member of “${g.name}”: the group’s relationships serve them from their next request.`);
      setUserId(null);
      changed();
    },
    onError: fe.show,
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (userId) add.mutate();
      }}
    >
      <Stack gap="xs">
        <FormError text={fe.form} />
        <Group align="start">
          <Select
            label="Person"
            searchable
            data={(staff.data ?? [])
              .filter((u) => !inGroup.has(u.id))
              .map((u) => ({ value: u.id, label: `${u.name} (${u.email})` }))}
            value={userId}
            onChange={setUserId}
            placeholder={staff.isPending ? 'Loading…' : 'Choose a member of your staff'}
            error={fe.fields.userId}
            w={360}
          />
          <Button type="submit" mt={25} disabled={!userId} loading={add.isPending}>
            Add to the group
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

function View({ g }: { g: AccessGroup }) {
  const me = useMe();
  const navigate = useNavigate();
  const changed = useGroupsChanged();
  const writer = can(me.data, 'users:write');
  const members = useGroupMembers(g.id);
  const remove = useConfirmed(
    (m: AccessGroupMember) =>
      call(
        api.DELETE('/api/v1/access-groups/{id}/members/{userId}', { params: { path: { id: g.id, userId: m.userId } } }),
      ),
    (m) => {
      done(`${m.name} is no longer a member of “${g.name}”.`);
      changed();
    },
  );
  const del = useConfirmed(
    (x: AccessGroup) => call(api.DELETE('/api/v1/access-groups/{id}', { params: { path: { id: x.id } } })),
    (x) => {
      done(`“${x.name}” is deleted.`);
      changed();
      navigate('/relationships/groups');
    },
  );
  return (
    <Stack>
      <Group justify="space-between" align="start">
        <Stack gap={4}>
          <Title order={1} size="h2">
            {g.name}
          </Title>
          {g.scimGroupName && <Text size="sm">Also every active member of the SCIM group “{g.scimGroupName}”.</Text>}
        </Stack>
        <Group>
          <Button component={Link} to="/relationships/groups" variant="default">
            Every access group
          </Button>
          {writer && (
            <Button variant="default" color="red" onClick={() => del.ask(g)}>
              Delete the group
            </Button>
          )}
        </Group>
      </Group>
      {writer && <Settings key={g.updatedAt} g={g} />}
      <Title order={2} size="h4">
        Members
      </Title>
      <Loaded q={members} what="members" isEmpty={() => false} empty="">
        {(d) => (
          <Stack gap="xs">
            {writer && <AddMember g={g} members={d.data} />}
            {d.data.length === 0 ? (
              <Text size="sm">No member yet.</Text>
            ) : (
              <DataTable
                testId="access-group-members"
                columns={['Name', 'E-mail', 'How']}
                hidden="Actions"
                rows={d.data.map((m) => ({ ...m, id: `${m.userId}-${m.source}` }))}
              >
                {(m) => (
                  <>
                    <Table.Td>{m.name}</Table.Td>
                    <Table.Td>{m.email}</Table.Td>
                    <Table.Td>{m.source === 'direct' ? 'Added by hand' : 'Through the SCIM group'}</Table.Td>
                    <Table.Td>
                      {writer && m.source === 'direct' && (
                        <Button
                          size="xs"
                          variant="default"
                          color="red"
                          onClick={() => remove.ask(m)}
                          aria-label={`Remove ${m.name}`}
                        >
                          Remove
                        </Button>
                      )}
                    </Table.Td>
                  </>
                )}
              </DataTable>
            )}
          </Stack>
        )}
      </Loaded>
      <Title order={2} size="h4">
        Relationships
      </Title>
      {g.relationships.length === 0 ? (
        <Text size="sm">Not attached to any relationship yet: attach it from a relationship’s page.</Text>
      ) : (
        <List data-testid="access-group-relationships">
          {g.relationships.map((r) => (
            <List.Item key={r.id}>
              <Group gap="xs">
                <Anchor component={Link} to={`/relationships/${r.id}`}>
                  {r.name}
                </Anchor>
                <Text size="sm">with {r.orgName}</Text>
                <StatusBadge status={r.status as RelationshipStatus} />
              </Group>
            </List.Item>
          ))}
        </List>
      )}
      {remove.target && (
        <ConfirmDialog title={`Remove ${remove.target.name}?`} action="Remove" {...remove.dialog}>
          {remove.target.name} no longer reaches organisations through “{g.name}” from their next request.
        </ConfirmDialog>
      )}
      {del.target && (
        <ConfirmDialog title={`Delete “${g.name}”?`} action="Delete" {...del.dialog}>
          Its members lose what it gives them on their next request.
          {g.relationships.length > 0 &&
            ` It is detached from ${g.relationships.map((r) => r.name).join(', ')}; a relationship left without groups serves nobody until another is attached.`}
        </ConfirmDialog>
      )}
    </Stack>
  );
}

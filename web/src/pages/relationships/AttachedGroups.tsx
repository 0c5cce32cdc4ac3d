// A relationship's access groups, on its page (the partner's side): which groups' members use it, attach another,
// detach one after a confirmation. Once it has a group, only the members of its groups reach through it.
import { Anchor, Button, Group, Select, Stack, Table, Text, Title } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api, call } from '../../api/client';
import { ConfirmDialog, useConfirmed } from '../../components/ConfirmDialog';
import { DataTable } from '../../components/DataTable';
import { FormError } from '../../components/FormError';
import { Loaded } from '../../components/Loaded';
import { type AccessGroup, useAccessGroups, useGroupsChanged } from '../../hooks/access-groups';
import { can, useMe } from '../../hooks/me';
import { isOpen, type Relationship } from '../../hooks/relationships';
import { useFieldErrors } from '../../hooks/useFieldErrors';
import { done } from '../onboarding/common';

function Attach({ r, attached }: { r: Relationship; attached: readonly AccessGroup[] }) {
  const all = useAccessGroups();
  const changed = useGroupsChanged();
  const [groupId, setGroupId] = useState<string | null>(null);
  const fe = useFieldErrors((path) => (path === 'relationshipId' ? null : 'groupId'), { groupId });
  const on = new Set(attached.map((g) => g.id));
  const choices = (all.data?.data ?? []).filter((g) => !on.has(g.id));
  const attach = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/v1/access-groups/{id}/relationships', {
          params: { path: { id: groupId! } },
          body: { relationshipId: r.id },
        }),
      ),
    onSuccess: (a) => {
      done(`“${a.groupName}” is attached: its members use “${a.relationshipName}”.`);
      setGroupId(null);
      changed();
    },
    onError: fe.show,
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (groupId) attach.mutate();
      }}
    >
      <Stack gap="xs">
        <FormError text={fe.form} />
        <Group align="start">
          <Select
            label="Access group"
            searchable
            data={choices.map((g) => ({ value: g.id, label: g.name }))}
            value={groupId}
            onChange={setGroupId}
            placeholder={all.isPending ? 'Loading…' : choices.length ? 'Choose a group' : 'No other group'}
            error={fe.fields.groupId}
            w={320}
          />
          <Button type="submit" mt={25} disabled={!groupId} loading={attach.isPending}>
            Attach
          </Button>
          <Button component={Link} to="/relationships/groups" variant="subtle" mt={25}>
            Manage access groups
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

export function AttachedGroups({ r }: { r: Relationship }) {
  const me = useMe();
  const changed = useGroupsChanged();
  const writer = can(me.data, 'users:write');
  const groups = useAccessGroups(r.id);
  const detach = useConfirmed(
    (g: AccessGroup) =>
      call(
        api.DELETE('/api/v1/access-groups/{id}/relationships/{relationshipId}', {
          params: { path: { id: g.id, relationshipId: r.id } },
        }),
      ),
    (g) => {
      done(`“${g.name}” is detached from “${r.name}”.`);
      changed();
    },
  );
  return (
    <Stack gap="xs" data-testid="relationship-groups">
      <Title order={2} size="h4">
        Access groups
      </Title>
      <Text size="sm" maw={760}>
        Once a relationship has a group, only the members of its groups reach {r.orgName} through it, whatever their
        standing access; detaching or deleting a group only narrows it (with none left, it serves nobody). Without a
        group, every member of your staff you let into {r.orgName} uses it.
      </Text>
      <Loaded
        q={groups}
        what="access groups"
        size="sm"
        isEmpty={(d) => d.data.length === 0}
        empty="No group: every member of your staff you let in uses it."
      >
        {(d) => (
          <DataTable
            testId="relationship-groups-table"
            columns={['Group', 'Members added by hand']}
            hidden="Actions"
            rows={d.data}
          >
            {(g: AccessGroup) => (
              <>
                <Table.Td>
                  <Anchor component={Link} to={`/relationships/groups/${g.id}`}>
                    {g.name}
                  </Anchor>
                </Table.Td>
                <Table.Td>{g.memberCount}</Table.Td>
                <Table.Td>
                  {writer && (
                    <Button
                      size="xs"
                      variant="default"
                      color="red"
                      onClick={() => detach.ask(g)}
                      aria-label={`Detach ${g.name}`}
                    >
                      Detach
                    </Button>
                  )}
                </Table.Td>
              </>
            )}
          </DataTable>
        )}
      </Loaded>
      {writer && isOpen(r.status) && groups.data && <Attach r={r} attached={groups.data.data} />}
      {detach.target && (
        <ConfirmDialog title={`Detach “${detach.target.name}”?`} action="Detach" {...detach.dialog}>
          Its members no longer reach {r.orgName} through “{r.name}” from their next request. The relationship stays
          bound to groups: with none left, it serves nobody until another is attached.
        </ConfirmDialog>
      )}
    </Stack>
  );
}

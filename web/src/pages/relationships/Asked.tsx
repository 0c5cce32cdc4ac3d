// What a relationship gives, as the organisation signs it: who asks, each role with its permissions in plain words,
// the reach by name, the duration and whether it extends itself; and its history.
import { List, Stack, Table, Text, Title } from '@mantine/core';
import { Loaded } from '../../components/Loaded';
import {
  durationWords,
  eventWords,
  reachWords,
  type Relationship,
  usePermissionWords,
  useRelationshipHistory,
} from '../../hooks/relationships';
import { when } from '../onboarding/common';

export function Asked({ r }: { r: Relationship }) {
  const words = usePermissionWords();
  return (
    <Stack gap="sm" data-testid="relationship-terms">
      <Table variant="vertical" withTableBorder maw={860}>
        <Table.Tbody>
          <Table.Tr>
            <Table.Th w={200}>Partner</Table.Th>
            <Table.Td>{r.partnerName}</Table.Td>
          </Table.Tr>
          <Table.Tr>
            <Table.Th>Organisation</Table.Th>
            <Table.Td>{r.orgName}</Table.Td>
          </Table.Tr>
          <Table.Tr>
            <Table.Th>Where</Table.Th>
            <Table.Td data-testid="relationship-reach">{reachWords(r)}</Table.Td>
          </Table.Tr>
          <Table.Tr>
            <Table.Th>For how long</Table.Th>
            <Table.Td>
              {durationWords(r.duration)}
              {r.startsAt ? `, from ${when(r.startsAt)} to ${when(r.endsAt)}` : ', from the approval'}
              {r.status === 'terminated' ? `; terminated on ${when(r.updatedAt)}` : ''}
            </Table.Td>
          </Table.Tr>
          <Table.Tr>
            <Table.Th>Extends itself</Table.Th>
            <Table.Td>
              {r.autoExtend
                ? 'Yes: by 180 days each time it reaches its end, until either side ends it'
                : 'No: it ends, and a new relationship is approved to continue'}
            </Table.Td>
          </Table.Tr>
        </Table.Tbody>
      </Table>
      <Title order={2} size="h4">
        What the partner’s staff may do
      </Title>
      <Text size="sm" c="dimmed" maw={760}>
        A member of the partner’s staff may do here what their own role allows, and only within these roles.
      </Text>
      {r.roles.map((role) => (
        <Stack key={role.id} gap={4} data-testid="relationship-role">
          <Title order={3} size="h5">
            {role.name}
          </Title>
          {role.permissions.length === 0 ? (
            <Text size="sm">No permission.</Text>
          ) : (
            <List size="sm">
              {role.permissions.map((k) => (
                <List.Item key={k}>{words(k)}</List.Item>
              ))}
            </List>
          )}
        </Stack>
      ))}
    </Stack>
  );
}

export function History({ id }: { id: string }) {
  const h = useRelationshipHistory(id);
  return (
    <Stack gap="xs">
      <Title order={2} size="h4">
        History
      </Title>
      <Loaded q={h} what="the history" size="sm" isEmpty={(d) => d.data.length === 0} empty="Nothing happened yet.">
        {(d) => (
          <List size="sm" data-testid="relationship-history">
            {d.data.map((e) => (
              <List.Item key={e.id}>
                {when(e.at)}: {eventWords(e)}
              </List.Item>
            ))}
          </List>
        )}
      </Loaded>
    </Stack>
  );
}

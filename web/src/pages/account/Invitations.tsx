// Pending invitations: memberships offered to your account (by an invitation, SCIM or single sign-on) that grant
// nothing until you accept them. The mailed link opens /invitations?token=, which accepts on a click (never on
// load: a mail scanner that opens the link must not answer for you) and proves your address.
import { Alert, Badge, Button, Group, Stack, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import { api, call } from '../../api/client';
import type { components } from '../../api/schema';
import { Loaded } from '../../components/Loaded';
import { explain } from '../../lib/errors';
import { ok, Section } from './Section';

type Invitation = components['schemas']['Invitation'];

const label = (i: Invitation) => `${i.tenantName} (${i.kind === 'partner' ? 'partner' : 'organisation'})`;

/** Everything an answer changes: the offers, the memberships to switch to, and the caller's context. */
function useAnswered() {
  const qc = useQueryClient();
  return () => {
    void qc.invalidateQueries({ queryKey: ['invitations'] });
    void qc.invalidateQueries({ queryKey: ['memberships'] });
  };
}

/** The section of My account (and of the /invitations page): the list with Accept and Decline. */
export function PendingInvitations() {
  const answered = useAnswered();
  const list = useQuery({
    queryKey: ['invitations'],
    queryFn: async () => (await call(api.GET('/api/v1/auth/invitations'))).data,
  });
  const answer = useMutation({
    mutationFn: (v: { i: Invitation; accept: boolean }) =>
      call(
        api.POST(v.accept ? '/api/v1/auth/invitations/{id}/accept' : '/api/v1/auth/invitations/{id}/decline', {
          params: { path: { id: v.i.id } },
        }),
      ),
    onSuccess: (_r, v) => {
      ok(v.accept ? `You joined ${label(v.i)}: switch to it under Where you act.` : `Declined ${label(v.i)}.`);
      answered();
    },
  });
  return (
    <Section title="Pending invitations">
      <Loaded
        q={list}
        what="your invitations"
        size="sm"
        isEmpty={(d) => d.length === 0}
        empty="No invitation is waiting for your answer."
      >
        {(d) => (
          <Stack>
            <Table data-testid="invitations">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Partner or organisation</Table.Th>
                  <Table.Th>Role offered</Table.Th>
                  <Table.Th>Invited</Table.Th>
                  <Table.Th>
                    <span className="gh-visually-hidden">Answer</span>
                  </Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {d.map((i) => (
                  <Table.Tr key={i.id}>
                    <Table.Td>
                      {i.tenantName}{' '}
                      <Badge variant="light" color="gray">
                        {i.kind === 'partner' ? 'partner' : 'organisation'}
                      </Badge>
                    </Table.Td>
                    <Table.Td>{i.roleName}</Table.Td>
                    <Table.Td>
                      {i.invitedAt ? new Date(i.invitedAt).toLocaleString() : ''}
                      {i.invitedBy ? ` by ${i.invitedBy}` : ''}
                    </Table.Td>
                    <Table.Td>
                      <Group gap="xs" wrap="nowrap">
                        <Button
                          size="xs"
                          onClick={() => answer.mutate({ i, accept: true })}
                          loading={answer.isPending && answer.variables?.i === i && answer.variables.accept}
                          aria-label={`Accept ${label(i)}`}
                        >
                          Accept
                        </Button>
                        <Button
                          size="xs"
                          variant="default"
                          color="red"
                          onClick={() => answer.mutate({ i, accept: false })}
                          loading={answer.isPending && answer.variables?.i === i && !answer.variables.accept}
                          aria-label={`Decline ${label(i)}`}
                        >
                          Decline
                        </Button>
                      </Group>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
            {answer.isError && (
              <Alert color="red" role="alert">
                {explain(answer.error)}
              </Alert>
            )}
          </Stack>
        )}
      </Loaded>
    </Section>
  );
}

/** The mailed link's invitation, accepted on a click. */
function LinkedInvitation({ token, done }: { token: string; done: () => void }) {
  const answered = useAnswered();
  const accept = useMutation({
    mutationFn: () => call(api.POST('/api/v1/auth/invitations/accept-link', { body: { token } })),
    onSuccess: () => {
      ok('Invitation accepted: switch to it under My account → Where you act.');
      answered();
      done();
    },
  });
  return (
    <Section title="The invitation you followed">
      <Stack>
        <Text size="sm">
          Accepting gives your account the role offered there. The link was mailed to your address, so accepting also
          confirms that the address is yours.
        </Text>
        {accept.isError && (
          <Alert color="red" role="alert">
            {explain(accept.error)}
          </Alert>
        )}
        <Group>
          <Button onClick={() => accept.mutate()} loading={accept.isPending}>
            Accept the invitation
          </Button>
        </Group>
      </Stack>
    </Section>
  );
}

/** /invitations: the mailed link lands here (signed in first), then the pending list. */
export default function Invitations() {
  const [params, setParams] = useSearchParams();
  const token = params.get('token');
  return (
    <Stack maw={860}>
      <Title order={1} size="h2">
        Pending invitations
      </Title>
      {token && <LinkedInvitation token={token} done={() => setParams({}, { replace: true })} />}
      <PendingInvitations />
    </Stack>
  );
}

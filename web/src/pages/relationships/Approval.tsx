// The organisation's admins decide a request from the link they were mailed: exactly what is asked (who asks, each
// role with its permissions in plain words, where, for how long, whether it extends itself), then Approve or Decline.
// Both ask for a fresh proof of presence first (the step-up prompt of the signed-in frame).
import { Alert, Button, Group, Stack, Text, Title } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { api, call } from '../../api/client';
import { ConfirmDialog, useConfirmed } from '../../components/ConfirmDialog';
import { Loading } from '../../components/Loading';
import { useMe } from '../../hooks/me';
import { durationWords, type Relationship, useRelationship, useRelationshipHistory } from '../../hooks/relationships';
import { explain } from '../../lib/errors';
import { done, failed, when } from '../onboarding/common';
import { Asked, History } from './Asked';
import { StatusBadge } from './List';

export default function Approval() {
  const { id } = useParams();
  const r = useRelationship(id);
  if (r.isPending) return <Loading />;
  if (r.isError)
    return (
      <Stack>
        <Title order={1} size="h2">
          Approve delegated access
        </Title>
        <Alert color="red" role="alert">
          {explain(r.error)} Sign in with an account of the organisation that was asked.
        </Alert>
      </Stack>
    );
  return <Decide r={r.data} />;
}

function Decide({ r }: { r: Relationship }) {
  const me = useMe();
  const qc = useQueryClient();
  const history = useRelationshipHistory(r.id);
  const asker = [...(history.data?.data ?? [])].reverse().find((e) => e.action === 'relationship.request');
  const refresh = () => void qc.invalidateQueries({ queryKey: ['relationships'] });
  const approve = useMutation({
    mutationFn: () => call(api.POST('/api/v1/relationships/{id}/approve', { params: { path: { id: r.id } } })),
    onSuccess: (x) => {
      done(`Approved: ${x.partnerName}’s staff may work in ${x.orgName} as it says, until ${when(x.endsAt)}.`);
      refresh();
    },
    onError: failed,
  });
  const decline = useConfirmed(
    (x: Relationship) => call(api.POST('/api/v1/relationships/{id}/decline', { params: { path: { id: x.id } } })),
    () => {
      done(`Declined: ${r.partnerName} gets no access through “${r.name}”.`);
      refresh();
    },
  );
  const pending = r.status === 'approval_pending';
  const customer = me.data?.scope === 'organization';
  return (
    <Stack>
      <Title order={1} size="h2">
        {r.partnerName} asks for delegated access to {r.orgName}
      </Title>
      <Group gap="xs">
        <StatusBadge status={r.status} />
        <Text size="sm" fw={700}>
          “{r.name}”
        </Text>
      </Group>
      <Text size="sm" maw={760} data-testid="asked-by">
        {asker
          ? `Asked by ${asker.actorName ?? asker.actorEmail ?? 'the partner'}${asker.actorEmail && asker.actorName ? ` (${asker.actorEmail})` : ''} of ${r.partnerName} on ${when(asker.at)}. `
          : `Asked by ${r.partnerName}. `}
        If approved, it lasts {durationWords(r.duration)} from now
        {r.autoExtend ? ' and extends itself by 180 days at each end' : ''}. Either side may end it at any time; it
        never widens without a new approval.
      </Text>
      <Asked r={r} />
      {pending && customer && (
        <Group>
          <Button onClick={() => approve.mutate()} loading={approve.isPending}>
            Approve
          </Button>
          <Button variant="default" color="red" onClick={() => decline.ask(r)}>
            Decline
          </Button>
          <Text size="sm" c="dimmed">
            Both ask you to confirm it is you.
          </Text>
        </Group>
      )}
      {pending && !customer && (
        <Text size="sm">
          The organisation’s admins approve or decline it (the request lapses on {when(r.requestExpiresAt)}).
        </Text>
      )}
      {!pending && (
        <Group>
          <Text size="sm">There is nothing to decide: the relationship is {r.status.replace('_', ' ')}.</Text>
          <Button component={Link} to={`/relationships/${r.id}`} variant="default">
            Open the relationship
          </Button>
        </Group>
      )}
      <History id={r.id} />
      {decline.target !== null && (
        <ConfirmDialog title={`Decline “${r.name}”?`} action="Decline" {...decline.dialog}>
          {r.partnerName}’s staff get no access to {r.orgName} through it. The partner may ask again with a new
          relationship.
        </ConfirmDialog>
      )}
    </Stack>
  );
}

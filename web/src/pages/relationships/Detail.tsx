// One relationship, for either side: its state and terms, the partner's actions (change the draft, send it for
// approval and hand over the link, narrow it, attach its access groups, terminate it), the organisation's (review a request, terminate),
// and its history.
import { Alert, Badge, Button, Code, CopyButton, Group, Stack, Text, Title } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, call } from '../../api/client';
import { Loading } from '../../components/Loading';
import { can, useMe } from '../../hooks/me';
import { isOpen, type Relationship, useRelationship } from '../../hooks/relationships';
import { explain } from '../../lib/errors';
import { done, failed, when } from '../onboarding/common';
import { Asked, History } from './Asked';
import { AttachedGroups } from './AttachedGroups';
import { StatusBadge } from './List';
import { Narrow } from './Narrow';
import { useTerminate } from './Terminate';

export default function Detail() {
  const { id } = useParams();
  const r = useRelationship(id);
  if (r.isPending) return <Loading />;
  if (r.isError)
    return (
      <Alert color="red" role="alert">
        {explain(r.error)}
      </Alert>
    );
  return <View r={r.data} />;
}

export function ApprovalLink({ url }: { url: string }) {
  return (
    <Stack gap={4} data-testid="approval-link">
      <Text size="sm">
        The organisation’s admins were mailed this link. It stays open for 90 days; you may also hand it over yourself.
      </Text>
      <Group gap="xs" wrap="nowrap">
        <Code style={{ wordBreak: 'break-all' }}>{url}</Code>
        <CopyButton value={url}>
          {({ copied, copy }) => (
            <Button size="xs" variant="default" onClick={copy}>
              {copied ? 'Copied' : 'Copy link'}
            </Button>
          )}
        </CopyButton>
      </Group>
    </Stack>
  );
}

function View({ r }: { r: Relationship }) {
  const me = useMe();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const partner = me.data?.scope === 'partner';
  const writer = can(me.data, 'users:write');
  const [narrowing, setNarrowing] = useState(false);
  const terminate = useTerminate();
  const send = useMutation({
    mutationFn: () => call(api.POST('/api/v1/relationships/{id}/request', { params: { path: { id: r.id } } })),
    onSuccess: (x) => {
      done(`Sent: ${x.orgName}’s admins were mailed the approval link.`);
      void qc.invalidateQueries({ queryKey: ['relationships'] });
    },
    onError: failed,
  });
  const frozen = r.status === 'approval_pending' || r.status === 'active' || r.status === 'expiring';
  return (
    <Stack>
      <Group justify="space-between" align="start">
        <Stack gap={4}>
          <Title order={1} size="h2">
            {r.name}
          </Title>
          <Group gap="xs">
            <StatusBadge status={r.status} />
            {r.status === 'approval_pending' && r.requestExpiresAt && (
              <Text size="sm">The request lapses on {when(r.requestExpiresAt)}.</Text>
            )}
            {r.autoExtend && <Badge variant="outline">Extends itself</Badge>}
          </Group>
        </Stack>
        <Button component={Link} to="/relationships" variant="default">
          Every relationship
        </Button>
      </Group>
      {r.approvalUrl && partner && <ApprovalLink url={r.approvalUrl} />}
      {r.status === 'approval_pending' && !partner && (
        <Alert color="blue" title="Waiting for your organisation’s decision">
          <Group justify="space-between">
            <Text size="sm">
              {r.partnerName} asks for this access. An admin of the organisation approves or declines it.
            </Text>
            <Button component={Link} to={`/relationships/${r.id}/approval`}>
              Review the request
            </Button>
          </Group>
        </Alert>
      )}
      {writer && isOpen(r.status) && (
        <Group>
          {partner && r.status === 'draft' && (
            <>
              <Button onClick={() => send.mutate()} loading={send.isPending}>
                Send for approval
              </Button>
              <Button variant="default" onClick={() => navigate(`/relationships/${r.id}/edit`)}>
                Change the draft
              </Button>
            </>
          )}
          {partner && frozen && (
            <Button variant="default" onClick={() => setNarrowing(true)}>
              Narrow
            </Button>
          )}
          <Button variant="default" color="red" onClick={() => terminate.ask(r)}>
            Terminate
          </Button>
        </Group>
      )}
      <Asked r={r} />
      {partner && can(me.data, 'users:read') && <AttachedGroups r={r} />}
      <History id={r.id} />
      {narrowing && <Narrow r={r} onClose={() => setNarrowing(false)} />}
      {terminate.dialog}
    </Stack>
  );
}

// Just-in-time access: a partner member requests access to one organisation (optionally one site) for
// a while, with a reason and a ticket; the approver the organisation's policy names approves or denies the pending
// requests; grants in force are listed and may be revoked (confirm). The API decides who sees and decides what.
import {
  Alert,
  Badge,
  Button,
  Group,
  Modal,
  Select,
  Stack,
  Table,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import type { components } from '../../api/schema';
import { ConfirmDialog, useConfirmed } from '../../components/ConfirmDialog';
import { DataTable } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { explain } from '../../lib/errors';
import { done, failed, when } from '../onboarding/common';
import { useMe } from '../../hooks/me';
import { APPROVAL_WORDS, minutesText, useOrgNames } from './common';

type Request = components['schemas']['AccessRequest'];
type Grant = components['schemas']['AccessGrant'];

const BY_ID = '__by_id';
const DURATIONS = [15, 30, 60, 120, 240, 480].map((m) => ({ value: String(m), label: minutesText(m) }));

export default function Requests() {
  const me = useMe();
  const qc = useQueryClient();
  const partner = me.data?.scope === 'partner';
  const { name } = useOrgNames();
  // The person by name (the API names them); an id only where their name is not visible to the caller.
  const who = (x: { userId: string; userName?: string | null; userEmail?: string | null }) =>
    x.userId === me.data?.id ? 'You' : (x.userName ?? x.userEmail ?? 'A partner member');
  const [requesting, setRequesting] = useState(false);
  const refresh = () => void qc.invalidateQueries({ queryKey: ['access'] });

  const approvable = useQuery({
    queryKey: ['access', 'requests', 'approvable'],
    queryFn: () =>
      call(
        api.GET('/api/v1/access/requests', {
          params: { query: { view: 'approvable', status: 'pending', limit: 200 } },
        }),
      ),
  });
  const own = useQuery({
    queryKey: ['access', 'requests', 'own'],
    enabled: partner,
    queryFn: () => call(api.GET('/api/v1/access/requests', { params: { query: { view: 'own', limit: 50 } } })),
  });
  const grants = useQuery({
    queryKey: ['access', 'grants'],
    queryFn: () => call(api.GET('/api/v1/access/grants', { params: { query: { state: 'active', limit: 200 } } })),
  });

  const approve = useMutation({
    mutationFn: (r: Request) =>
      call(api.POST('/api/v1/access/requests/{id}/approve', { params: { path: { id: r.id } }, body: {} })),
    onSuccess: (r) => {
      done(`Approved: access to ${r.orgName ?? name(r.orgId)} until ${when(r.grant?.expiresAt)}.`);
      refresh();
    },
    onError: failed,
  });
  const deny = useConfirmed(
    (r: Request) => call(api.POST('/api/v1/access/requests/{id}/deny', { params: { path: { id: r.id } }, body: {} })),
    (r) => {
      done(`Denied: ${who(r)} gets no access to ${r.orgName ?? name(r.orgId)}.`);
      refresh();
    },
  );
  const revoke = useConfirmed(
    (g: Grant) => call(api.DELETE('/api/v1/access/grants/{id}', { params: { path: { id: g.id } } })),
    (g) => {
      done(`Grant to ${g.orgName ?? name(g.orgId)} revoked.`);
      refresh();
    },
  );

  return (
    <Stack>
      <Group justify="space-between" align="start">
        <Text size="sm" maw={720}>
          Partner staff without standing access to an organisation request it for a while, with a reason. The
          organisation’s policy says who approves: nobody (granted at once), a Partner Admin, or one of the
          organisation’s own admins.
        </Text>
        {partner && <Button onClick={() => setRequesting(true)}>Request access</Button>}
      </Group>

      <Title order={2} size="h4">
        Waiting for your approval
      </Title>
      <Loaded
        q={approvable}
        what="requests"
        size="sm"
        isEmpty={(d) => d.data.length === 0}
        empty="No request waits for your approval."
      >
        {(d) => (
          <DataTable
            testId="approvable-requests"
            columns={['Requested by', 'Organisation', 'For', 'Reason', 'Ticket', 'Asked']}
            hidden="Decision"
            rows={d.data}
          >
            {(r) => (
              <>
                <Table.Td>{who(r)}</Table.Td>
                <Table.Td>
                  {r.orgName ?? name(r.orgId)}
                  {r.siteId ? ` (site ${r.siteId})` : ''}
                </Table.Td>
                <Table.Td>{minutesText(r.durationMinutes)}</Table.Td>
                <Table.Td>{r.reason}</Table.Td>
                <Table.Td>{r.ticketRef ?? '—'}</Table.Td>
                <Table.Td>{when(r.createdAt)}</Table.Td>
                <Table.Td>
                  <Group gap="xs" wrap="nowrap">
                    <Button
                      size="xs"
                      loading={approve.isPending && approve.variables?.id === r.id}
                      onClick={() => approve.mutate(r)}
                      aria-label={`Approve ${r.reason}`}
                    >
                      Approve
                    </Button>
                    <Button size="xs" variant="default" onClick={() => deny.ask(r)} aria-label={`Deny ${r.reason}`}>
                      Deny
                    </Button>
                  </Group>
                </Table.Td>
              </>
            )}
          </DataTable>
        )}
      </Loaded>

      <Title order={2} size="h4">
        Grants in force
      </Title>
      <Loaded
        q={grants}
        what="grants"
        size="sm"
        isEmpty={(d) => d.data.length === 0}
        empty="No just-in-time grant is in force."
      >
        {(d) => (
          <DataTable
            testId="access-grants"
            columns={['Who', 'Organisation', 'Until', 'Approval', 'Reason', 'Ticket']}
            hidden="Actions"
            rows={d.data}
          >
            {(g) => (
              <>
                <Table.Td>{who(g)}</Table.Td>
                <Table.Td>
                  {g.orgName ?? name(g.orgId)}
                  {g.siteId ? ` (site ${g.siteId})` : ''}
                </Table.Td>
                <Table.Td>{when(g.expiresAt)}</Table.Td>
                <Table.Td>{APPROVAL_WORDS[g.approval]}</Table.Td>
                <Table.Td>{g.reason}</Table.Td>
                <Table.Td>{g.ticketRef ?? '—'}</Table.Td>
                <Table.Td>
                  <Button
                    size="xs"
                    variant="default"
                    color="red"
                    onClick={() => revoke.ask(g)}
                    aria-label={`Revoke ${g.reason}`}
                  >
                    Revoke
                  </Button>
                </Table.Td>
              </>
            )}
          </DataTable>
        )}
      </Loaded>

      {partner && (
        <>
          <Title order={2} size="h4">
            Your requests
          </Title>
          <Loaded
            q={own}
            what="your requests"
            size="sm"
            isEmpty={(d) => d.data.length === 0}
            empty="You have not requested access yet."
          >
            {(d) => (
              <DataTable
                testId="own-requests"
                columns={['Organisation', 'For', 'Reason', 'Asked', 'Approval', 'Status']}
                hidden="Note"
                rows={d.data}
              >
                {(r) => (
                  <>
                    <Table.Td>{r.orgName ?? name(r.orgId)}</Table.Td>
                    <Table.Td>{minutesText(r.durationMinutes)}</Table.Td>
                    <Table.Td>{r.reason}</Table.Td>
                    <Table.Td>{when(r.createdAt)}</Table.Td>
                    <Table.Td>{APPROVAL_WORDS[r.approval]}</Table.Td>
                    <Table.Td>
                      {/* the word as a badge sized to its text (a narrow column cut it to "WAITI…"), the end beside it */}
                      <Badge
                        variant="light"
                        color={r.status === 'approved' ? 'green' : r.status === 'denied' ? 'red' : 'gray'}
                        c="dark"
                        styles={{ root: { overflow: 'visible' }, label: { overflow: 'visible' } }}
                      >
                        {r.status === 'pending' ? 'Waiting' : r.status === 'approved' ? 'Approved' : 'Denied'}
                      </Badge>
                      {r.status === 'approved' && <Text size="xs">until {when(r.grant?.expiresAt)}</Text>}
                    </Table.Td>
                    <Table.Td>{r.decisionNote ?? ''}</Table.Td>
                  </>
                )}
              </DataTable>
            )}
          </Loaded>
        </>
      )}

      {requesting && <RequestAccess onClose={() => setRequesting(false)} />}
      <ConfirmDialog {...deny.dialog} title="Deny this request?" action="Deny">
        {deny.target
          ? `${who(deny.target)} gets no access to ${name(deny.target.orgId)} (“${deny.target.reason}”). The denial is audited.`
          : ''}
      </ConfirmDialog>
      <ConfirmDialog {...revoke.dialog} title="Revoke this grant?" action="Revoke">
        {revoke.target
          ? `${who(revoke.target)} loses access to ${name(revoke.target.orgId)} from the next request, on every instance.`
          : ''}
      </ConfirmDialog>
    </Stack>
  );
}

function RequestAccess({ onClose }: { onClose: () => void }) {
  const qc = useQueryClient();
  const { orgs, name } = useOrgNames();
  const [choice, setChoice] = useState<string | null>(null);
  const [typedOrg, setTypedOrg] = useState('');
  const [siteId, setSiteId] = useState('');
  const [duration, setDuration] = useState<string | null>('60');
  const [reason, setReason] = useState('');
  const [ticket, setTicket] = useState('');
  const orgId = choice === BY_ID ? typedOrg.trim() : (choice ?? '');
  const create = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/v1/access/requests', {
          body: {
            orgId,
            siteId: siteId.trim() || undefined,
            durationMinutes: Number(duration),
            reason: reason.trim(),
            ticketRef: ticket.trim() || undefined,
          },
        }),
      ),
    onSuccess: (r) => {
      done(
        r.status === 'approved'
          ? `Access to ${r.orgName ?? name(r.orgId)} granted until ${when(r.grant?.expiresAt)}.`
          : `Request sent. ${APPROVAL_WORDS[r.approval]}; you reach the organisation once approved.`,
      );
      void qc.invalidateQueries({ queryKey: ['access'] });
      void qc.invalidateQueries({ queryKey: ['organizations'] });
      onClose();
    },
  });
  return (
    <Modal opened onClose={onClose} title="Request access">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate();
        }}
      >
        <Stack>
          <Select
            label="Organisation"
            description="Organisations you are eligible for but cannot reach yet are not listed: give their ID."
            data={[
              ...orgs.map((o) => ({ value: o.id, label: o.name })),
              { value: BY_ID, label: 'Another organisation, by its ID' },
            ]}
            value={choice}
            onChange={setChoice}
            required
            placeholder="Choose"
            data-autofocus
          />
          {choice === BY_ID && (
            <TextInput
              label="Organisation ID"
              required
              value={typedOrg}
              onChange={(e) => setTypedOrg(e.currentTarget.value)}
            />
          )}
          <TextInput
            label="Site ID"
            description="Optional: one site of the organisation only."
            value={siteId}
            onChange={(e) => setSiteId(e.currentTarget.value)}
          />
          <Select
            label="For how long"
            description="At most what your partner allows (8 h unless it says otherwise)."
            data={DURATIONS}
            value={duration}
            onChange={setDuration}
            allowDeselect={false}
            required
          />
          <Textarea
            label="Reason"
            description="Shown to the approver and kept in the audit trail."
            required
            value={reason}
            onChange={(e) => setReason(e.currentTarget.value)}
            autosize
            minRows={2}
          />
          <TextInput
            label="Ticket"
            description="Optional ticket reference."
            value={ticket}
            onChange={(e) => setTicket(e.currentTarget.value)}
          />
          {create.isError && (
            <Alert color="red" role="alert">
              {explain(create.error)}
            </Alert>
          )}
          <Button type="submit" loading={create.isPending} disabled={!orgId || !reason.trim() || !duration}>
            Send request
          </Button>
        </Stack>
      </form>
    </Modal>
  );
}

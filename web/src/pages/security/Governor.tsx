// The brake on mass actions, on the security policy page: the freeze switch (with a reason, confirmed), the
// blast-radius budget of the tenant, and (for the partner) the co-sign requests waiting for another admin.
import { Alert, Button, Card, Group, NumberInput, Stack, Table, Text, Textarea, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { explain } from '../../lib/errors';

interface Budget {
  windowMinutes: number;
  maxOrganizations?: number;
  maxDevices?: number;
  maxDestructive?: number;
}
interface Freeze {
  side: 'partner' | 'organization';
  reason: string;
  byName: string;
  at: string;
}

/** The tenant's freeze and budget: the partner's governor view, or the organisation's own settings and freeze. */
function useGovernorState(orgId: string | null) {
  return useQuery({
    queryKey: ['governor', orgId],
    queryFn: async (): Promise<{ freeze: Freeze | null; budget: Budget | null }> => {
      if (!orgId) {
        const g = await call(api.GET('/api/v1/governor'));
        return { freeze: g.freeze, budget: (g.budget as Budget | null) ?? null };
      }
      const [org, view] = await Promise.all([
        call(api.GET('/api/v1/orgs/organizations/{id}', { params: { path: { id: orgId } } })),
        call(api.GET('/api/v1/orgs/organizations/{id}/partner-access', { params: { path: { id: orgId } } })),
      ]);
      const settings = org.settings as { governor?: { budget?: Budget | null } };
      return { freeze: view.freezes.organization, budget: settings.governor?.budget ?? null };
    },
  });
}

export default function Governor({ orgId }: { orgId: string | null }) {
  const state = useGovernorState(orgId);
  return (
    <Stack>
      <Title order={2} size="h3">
        Brake on mass actions
      </Title>
      <Text size="sm">
        Destructive permissions (running scripts, remote control, removing devices, changing users and roles) can be
        frozen at once, and limited per person or service account over a sliding window.
      </Text>
      {state.isError && (
        <Alert color="red" role="alert">
          {explain(state.error)}
        </Alert>
      )}
      {state.data && (
        <>
          <FreezeSwitch orgId={orgId} freeze={state.data.freeze} />
          <BudgetForm key={JSON.stringify(state.data.budget)} orgId={orgId} budget={state.data.budget} />
        </>
      )}
      {!orgId && <CoSignRequests />}
    </Stack>
  );
}

function FreezeSwitch({ orgId, freeze }: { orgId: string | null; freeze: Freeze | null }) {
  const qc = useQueryClient();
  const [reason, setReason] = useState('');
  const [confirming, setConfirming] = useState(false);
  const done = (message: string) => {
    notifications.show({ color: 'green', message });
    setConfirming(false);
    setReason('');
    void qc.invalidateQueries({ queryKey: ['governor'] });
  };
  const set = useMutation({
    mutationFn: () =>
      orgId
        ? call(
            api.POST('/api/v1/orgs/organizations/{id}/freeze', { params: { path: { id: orgId } }, body: { reason } }),
          )
        : call(api.POST('/api/v1/orgs/partners/me/freeze', { body: { reason } })),
    onSuccess: () => done('Destructive actions are frozen.'),
  });
  const lift = useMutation({
    mutationFn: () =>
      orgId
        ? call(api.DELETE('/api/v1/orgs/organizations/{id}/freeze', { params: { path: { id: orgId } } }))
        : call(api.DELETE('/api/v1/orgs/partners/me/freeze')),
    onSuccess: () => done('The freeze is lifted.'),
  });
  const error = set.error ?? lift.error;
  return (
    <Card withBorder>
      <Stack>
        {error && (
          <Alert color="red" role="alert">
            {explain(error)}
          </Alert>
        )}
        {freeze ? (
          <>
            <Text data-testid="freeze-state">
              Frozen since {new Date(freeze.at).toLocaleString()} by {freeze.byName} (
              {freeze.side === 'partner' ? 'the partner' : 'the organisation'}): {freeze.reason}
            </Text>
            <Group>
              <Button onClick={() => lift.mutate()} loading={lift.isPending}>
                Lift the freeze
              </Button>
            </Group>
          </>
        ) : (
          <>
            <Text data-testid="freeze-state">
              Not frozen. {orgId ? 'Everyone acting in this organisation' : 'Every member and service account'} may use
              destructive permissions their roles grant.
            </Text>
            <Textarea
              label="Reason"
              description="Shown to both sides, mailed to their admins and kept in the audit trail."
              value={reason}
              onChange={(e) => setReason(e.currentTarget.value)}
            />
            {confirming ? (
              <Group>
                <Text size="sm">Freeze every destructive permission now?</Text>
                <Button color="red" onClick={() => set.mutate()} loading={set.isPending}>
                  Yes, freeze
                </Button>
                <Button variant="default" onClick={() => setConfirming(false)}>
                  Cancel
                </Button>
              </Group>
            ) : (
              <Group>
                <Button color="red" disabled={reason.trim().length < 3} onClick={() => setConfirming(true)}>
                  Freeze destructive actions
                </Button>
              </Group>
            )}
          </>
        )}
      </Stack>
    </Card>
  );
}

function BudgetForm({ orgId, budget }: { orgId: string | null; budget: Budget | null }) {
  const qc = useQueryClient();
  const [draft, setDraft] = useState<Partial<Budget>>(budget ?? { windowMinutes: 10 });
  const save = useMutation({
    mutationFn: (next: Budget | null) => {
      const body = { settings: { governor: { budget: next } } } as never;
      return orgId
        ? call(api.PATCH('/api/v1/orgs/organizations/{id}', { params: { path: { id: orgId } }, body }))
        : call(api.PATCH('/api/v1/orgs/partners/me', { body }));
    },
    onSuccess: () => {
      notifications.show({ color: 'green', message: 'Budget saved.' });
      void qc.invalidateQueries({ queryKey: ['governor'] });
    },
  });
  const num = (v: string | number) => (typeof v === 'number' ? v : undefined);
  const field = (key: keyof Budget, label: string) => (
    <NumberInput
      label={label}
      min={1}
      value={draft[key] ?? ''}
      onChange={(v) => setDraft({ ...draft, [key]: num(v) })}
    />
  );
  return (
    <Card withBorder>
      <Stack>
        <Text size="sm">
          {orgId
            ? "This organisation's budget holds everyone acting in it, on top of the partner's: the stricter wins."
            : 'The budget holds every member and service account of the partner. Over it, a person steps up with a passkey, or another Partner Admin co-signs.'}
        </Text>
        {save.isError && (
          <Alert color="red" role="alert">
            {explain(save.error)}
          </Alert>
        )}
        <Group grow align="flex-start">
          {field('windowMinutes', 'Window (minutes)')}
          {field('maxOrganizations', 'Organisations')}
          {field('maxDevices', 'Devices')}
          {field('maxDestructive', 'Destructive actions')}
        </Group>
        <Group>
          <Button onClick={() => save.mutate(draft as Budget)} loading={save.isPending}>
            Save budget
          </Button>
          {budget && (
            <Button variant="default" onClick={() => save.mutate(null)}>
              Remove budget
            </Button>
          )}
        </Group>
      </Stack>
    </Card>
  );
}

function CoSignRequests() {
  const qc = useQueryClient();
  const list = useQuery({
    queryKey: ['co-signs'],
    queryFn: async () =>
      (await call(api.GET('/api/v1/governor/co-signs', { params: { query: { status: 'pending' } } }))).data,
  });
  const approve = useMutation({
    mutationFn: (id: string) => call(api.POST('/api/v1/governor/co-signs/{id}/approve', { params: { path: { id } } })),
    onSuccess: () => {
      notifications.show({ color: 'green', message: 'Co-signed.' });
      void qc.invalidateQueries({ queryKey: ['co-signs'] });
    },
  });
  return (
    <Card withBorder>
      <Stack>
        <Text fw={500}>Co-sign requests waiting for another admin</Text>
        {approve.isError && (
          <Alert color="red" role="alert">
            {explain(approve.error)}
          </Alert>
        )}
        {list.data && list.data.length === 0 && <Text size="sm">None waiting.</Text>}
        {!!list.data?.length && (
          <Table data-testid="co-signs">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Who</Table.Th>
                <Table.Th>Reason</Table.Th>
                <Table.Th>Actions</Table.Th>
                <Table.Th>Approve before</Table.Th>
                <Table.Th />
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.data.map((r) => (
                <Table.Tr key={r.id}>
                  <Table.Td>{r.principalName}</Table.Td>
                  <Table.Td>{r.reason}</Table.Td>
                  <Table.Td>{r.actions}</Table.Td>
                  <Table.Td>{new Date(r.expiresAt).toLocaleString()}</Table.Td>
                  <Table.Td>
                    <Button size="xs" onClick={() => approve.mutate(r.id)} loading={approve.isPending}>
                      Co-sign
                    </Button>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Stack>
    </Card>
  );
}

// SSO providers of the partner (its own technicians) or of one organisation: status, allowed domains, enforce SSO,
// the discovery test and its result; create from a preset, edit, turn on and off, delete.
import { Alert, Anchor, Button, Group, Menu, Stack, Table, Text, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api, call } from '../../api/client';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { DataTable } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { TenantSelect } from '../../components/TenantSelect';
import { explain } from '../../lib/errors';
import { useMe } from '../../hooks/me';
import { useCapabilities } from '../../hooks/useCapabilities';
import { STATUS_WORDS, unprovenDomains, untested, useProviders, type Provider, type Status } from './data';
import { ProviderForm } from './ProviderForm';
import { TestResult } from './TestResult';
import { Warning } from './Warning';

type Dialog = { kind: 'create' } | { kind: 'edit' | 'delete' | 'test'; provider: Provider } | null;

export default function SsoProviders() {
  const me = useMe();
  const qc = useQueryClient();
  const [orgId, setOrgId] = useState<string | null>(null);
  const [dialog, setDialog] = useState<Dialog>(null);
  const scope = orgId ?? undefined;
  const list = useProviders(scope);
  // What the caller may do here is the server's answer, once per page and organisation.
  const write = useCapabilities(orgId).allowed('sso.manage');
  const refresh = () => void qc.invalidateQueries({ queryKey: ['sso-providers'] });

  const test = useMutation({
    mutationFn: (p: Provider) => call(api.POST('/api/v1/sso/providers/{id}/test', { params: { path: { id: p.id } } })),
    onSettled: refresh,
  });
  const status = useMutation({
    mutationFn: ({ p, to }: { p: Provider; to: Status }) =>
      call(api.POST('/api/v1/sso/providers/{id}/status', { params: { path: { id: p.id } }, body: { status: to } })),
    onSuccess: (p) => {
      notifications.show({ color: 'green', message: `${p.name}: ${STATUS_WORDS[p.status]}.` });
      refresh();
    },
    onError: (err) => notifications.show({ color: 'red', title: 'Not done', message: explain(err) }),
  });
  const warned = (list.data ?? []).filter(untested);
  const unproven = (list.data ?? []).filter((p) => unprovenDomains(p).length > 0);

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1} size="h2">
          Single sign-on
        </Title>
        {write && <Button onClick={() => setDialog({ kind: 'create' })}>New provider</Button>}
      </Group>
      {me.data?.scope === 'partner' && (
        <TenantSelect
          label="Providers of"
          partnerLabel="The partner (your technicians)"
          value={orgId}
          onChange={setOrgId}
        />
      )}
      {warned.map((p) => (
        <Alert key={p.id} color="yellow" title={`${p.name} has never passed a test`} data-testid="untested-warning">
          <Warning />
        </Alert>
      ))}
      {unproven.map((p) => (
        <Alert
          key={p.id}
          color="yellow"
          title={`${p.name} lists domains not proven here`}
          data-testid="unproven-warning"
        >
          <Text size="sm" c="dark.9">
            {unprovenDomains(p).join(', ')}: single sign-on does not find, create or hold accounts of these domains
            until they are proven.{' '}
            <Anchor component={Link} to="/domains">
              Prove them under Domains.
            </Anchor>
          </Text>
        </Alert>
      ))}
      <Loaded
        q={list}
        what="providers"
        isEmpty={(d) => d.length === 0}
        empty={
          <>
            No identity provider yet.{' '}
            {write ? 'Add one from a preset: Microsoft Entra ID, Okta, Google Workspace and more.' : ''}
          </>
        }
      >
        {(d) => (
          <DataTable
            testId="sso-table"
            columns={['Name', 'Protocol', 'Status', 'Allowed domains', 'Enforced', 'Last test passed']}
            hidden="Actions"
            rows={d}
          >
            {(p) => (
              <>
                <Table.Td>{p.name}</Table.Td>
                <Table.Td>{p.type === 'saml' ? 'SAML 2.0' : 'OpenID Connect'}</Table.Td>
                <Table.Td>
                  <Text size="sm" fw={p.status === 'active' ? 700 : 400} title={STATUS_WORDS[p.status]}>
                    {p.status}
                  </Text>
                </Table.Td>
                <Table.Td>
                  {p.domains?.length
                    ? p.domains.map((d, i) => (
                        <span key={d.domain}>
                          {i > 0 && ', '}
                          {d.domain}
                          {!d.proven && ' (not proven)'}
                        </span>
                      ))
                    : p.allowedDomains
                      ? p.allowedDomains.split(',').join(', ')
                      : 'Any'}
                </Table.Td>
                <Table.Td>{p.enforceSSO ? 'Yes' : 'No'}</Table.Td>
                <Table.Td>{p.lastTestedAt ? new Date(p.lastTestedAt).toLocaleString() : 'Never'}</Table.Td>
                <Table.Td>
                  {write && (
                    <Menu position="bottom-end">
                      <Menu.Target>
                        <Button size="xs" variant="default" aria-label={`Actions for ${p.name}`}>
                          Actions
                        </Button>
                      </Menu.Target>
                      <Menu.Dropdown>
                        <Menu.Item
                          onClick={() => {
                            test.mutate(p);
                            setDialog({ kind: 'test', provider: p });
                          }}
                        >
                          Test
                        </Menu.Item>
                        <Menu.Item onClick={() => setDialog({ kind: 'edit', provider: p })}>Edit</Menu.Item>
                        {p.status !== 'active' && (
                          <Menu.Item onClick={() => status.mutate({ p, to: 'active' })}>Turn on (active)</Menu.Item>
                        )}
                        {p.status !== 'testing' && (
                          <Menu.Item onClick={() => status.mutate({ p, to: 'testing' })}>Set to testing</Menu.Item>
                        )}
                        {p.status !== 'inactive' && (
                          <Menu.Item onClick={() => status.mutate({ p, to: 'inactive' })}>
                            Turn off (inactive)
                          </Menu.Item>
                        )}
                        <Menu.Item color="red" onClick={() => setDialog({ kind: 'delete', provider: p })}>
                          Delete
                        </Menu.Item>
                      </Menu.Dropdown>
                    </Menu>
                  )}
                </Table.Td>
              </>
            )}
          </DataTable>
        )}
      </Loaded>
      <Text size="sm" c="dimmed">
        Only an active provider is offered at sign-in: people whose e-mail domain is allowed see “Continue with …” on
        the sign-in page.
      </Text>
      {dialog?.kind === 'create' && <ProviderForm provider={null} orgId={scope} onClose={() => setDialog(null)} />}
      {dialog?.kind === 'edit' && (
        <ProviderForm provider={dialog.provider} orgId={scope} onClose={() => setDialog(null)} />
      )}
      {dialog?.kind === 'test' && (
        <TestResult
          provider={dialog.provider}
          result={test.data}
          error={test.error}
          pending={test.isPending}
          onClose={() => setDialog(null)}
        />
      )}
      {dialog?.kind === 'delete' && <DeleteProvider provider={dialog.provider} onClose={() => setDialog(null)} />}
    </Stack>
  );
}

function DeleteProvider({ provider, onClose }: { provider: Provider; onClose: () => void }) {
  const qc = useQueryClient();
  const del = useMutation({
    mutationFn: () => call(api.DELETE('/api/v1/sso/providers/{id}', { params: { path: { id: provider.id } } })),
    onSuccess: () => {
      notifications.show({ color: 'green', message: `${provider.name} deleted.` });
      void qc.invalidateQueries({ queryKey: ['sso-providers'] });
      onClose();
    },
  });
  return (
    <ConfirmDialog
      title={`Delete ${provider.name}?`}
      action="Delete"
      pending={del.isPending}
      error={del.error}
      onConfirm={() => del.mutate()}
      onClose={onClose}
    >
      Every account link to this provider goes with it; people who signed in only through it need a password or a new
      provider.
    </ConfirmDialog>
  );
}

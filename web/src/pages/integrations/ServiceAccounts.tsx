// Service accounts of the partner or of an organisation: create (name, role, organisation, description), disable or
// enable, delete (confirm), and per account its API keys (ServiceAccountKeys). api_keys:read lists; api_keys:write acts.
import { Alert, Button, Group, Modal, Stack, Table, Text, Textarea, TextInput } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import type { components } from '../../api/schema';
import { CursorPager, useCursorList } from '../../components/CursorPager';
import { ConfirmDialog, useConfirmed } from '../../components/ConfirmDialog';
import { DataTable } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { TenantSelect } from '../../components/TenantSelect';
import { explain } from '../../lib/errors';
import { done, failed, when } from '../onboarding/common';
import { can, useMe } from '../../hooks/me';
import { RoleSelect, useOwner } from './common';
import { ServiceAccountKeys } from './ServiceAccountKeys';

type Account = components['schemas']['ServiceAccount'];

export default function ServiceAccounts() {
  const me = useMe();
  const qc = useQueryClient();
  const write = can(me.data, 'api_keys:write');
  const owner = useOwner('Service accounts of');
  const { pages, list } = useCursorList(
    ['service-accounts', owner.orgId],
    (cursor) =>
      call(api.GET('/api/v1/service-accounts', { params: { query: { orgId: owner.orgId, cursor, limit: 50 } } })),
    { resetOn: owner.orgId },
  );
  const [creating, setCreating] = useState(false);
  const [keysOf, setKeysOf] = useState<Account | null>(null);
  const refresh = () => void qc.invalidateQueries({ queryKey: ['service-accounts'] });
  const toggle = useMutation({
    mutationFn: (a: Account) =>
      call(
        api.PATCH('/api/v1/service-accounts/{id}', { params: { path: { id: a.id } }, body: { disabled: !a.disabled } }),
      ),
    onSuccess: (a) => {
      done(a.disabled ? `“${a.name}” is disabled: its keys are refused.` : `“${a.name}” is enabled again.`);
      refresh();
    },
    onError: failed,
  });
  const remove = useConfirmed(
    (a: Account) => call(api.DELETE('/api/v1/service-accounts/{id}', { params: { path: { id: a.id } } })),
    (a) => {
      done(`“${a.name}” and its keys are deleted.`);
      refresh();
    },
  );

  return (
    <Stack>
      <Text size="sm">
        A service account is a program’s identity: it holds one role, has no password, and calls the API with a key of
        its own.
      </Text>
      <Group align="end" justify="space-between">
        {owner.picker ?? <span />}
        {write && <Button onClick={() => setCreating(true)}>New service account</Button>}
      </Group>
      <Loaded
        q={list}
        what="service accounts"
        isEmpty={(d) => d.data.length === 0}
        empty="No service account here yet."
      >
        {(d) => (
          <DataTable
            testId="service-accounts"
            columns={['Name', 'Role', 'Client ID', 'Active keys', 'Created', 'Status']}
            hidden="Actions"
            rows={d.data}
          >
            {(a) => (
              <>
                <Table.Td>
                  <Text size="sm">{a.name}</Text>
                  {a.description && (
                    <Text size="xs" c="dimmed">
                      {a.description}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>{a.roleName}</Table.Td>
                <Table.Td>
                  <Text size="xs" ff="monospace">
                    {a.clientId}
                  </Text>
                </Table.Td>
                <Table.Td>{a.activeKeyCount}</Table.Td>
                <Table.Td>{when(a.createdAt)}</Table.Td>
                <Table.Td>
                  <Text size="sm" fw={a.disabled ? 700 : 400}>
                    {a.disabled ? 'Disabled' : 'Active'}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Group gap="xs" wrap="nowrap">
                    <Button size="xs" variant="default" onClick={() => setKeysOf(a)} aria-label={`Keys of ${a.name}`}>
                      Keys
                    </Button>
                    {write && (
                      <>
                        <Button
                          size="xs"
                          variant="default"
                          loading={toggle.isPending && toggle.variables?.id === a.id}
                          onClick={() => toggle.mutate(a)}
                          aria-label={`${a.disabled ? 'Enable' : 'Disable'} ${a.name}`}
                        >
                          {a.disabled ? 'Enable' : 'Disable'}
                        </Button>
                        <Button
                          size="xs"
                          variant="default"
                          color="red"
                          onClick={() => remove.ask(a)}
                          aria-label={`Delete ${a.name}`}
                        >
                          Delete
                        </Button>
                      </>
                    )}
                  </Group>
                </Table.Td>
              </>
            )}
          </DataTable>
        )}
      </Loaded>
      <CursorPager pages={pages} next={list.data?.nextCursor} />
      {creating && (
        <CreateAccount
          opened
          onClose={() => setCreating(false)}
          initialOrgId={owner.orgId ?? null}
          partner={owner.partner}
        />
      )}
      <ServiceAccountKeys account={keysOf} write={write} onClose={() => setKeysOf(null)} />
      <ConfirmDialog {...remove.dialog} title={`Delete “${remove.target?.name ?? ''}”?`} action="Delete">
        Every key of this account is refused from its next request. This cannot be undone.
      </ConfirmDialog>
    </Stack>
  );
}

function CreateAccount({
  opened,
  onClose,
  initialOrgId,
  partner,
}: {
  opened: boolean;
  onClose: () => void;
  initialOrgId: string | null;
  partner: boolean;
}) {
  const qc = useQueryClient();
  const [orgId, setOrgId] = useState<string | null>(initialOrgId);
  const [name, setName] = useState('');
  const [roleId, setRoleId] = useState<string | null>(null);
  const [description, setDescription] = useState('');
  const create = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/v1/service-accounts', {
          body: {
            orgId: orgId ?? undefined,
            name: name.trim(),
            roleId: roleId!,
            description: description.trim() || undefined,
          },
        }),
      ),
    onSuccess: (a) => {
      done(`Service account “${a.name}” created. Issue it a key next.`);
      void qc.invalidateQueries({ queryKey: ['service-accounts'] });
      close();
    },
  });
  const close = () => {
    setName('');
    setRoleId(null);
    setDescription('');
    create.reset();
    onClose();
  };
  return (
    <Modal opened={opened} onClose={close} title="New service account">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate();
        }}
      >
        <Stack>
          <TextInput
            label="Name"
            placeholder="PSA sync"
            required
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            data-autofocus
          />
          {partner && (
            <TenantSelect
              label="Organisation"
              partnerLabel="The partner itself"
              value={orgId}
              onChange={(v) => {
                setOrgId(v);
                setRoleId(null);
              }}
              enabled={opened}
            />
          )}
          <RoleSelect
            orgId={orgId ?? undefined}
            enabled={opened}
            label="Role"
            description="What the account may do. Never more than you hold yourself."
            value={roleId}
            onChange={setRoleId}
          />
          <Textarea
            label="Description"
            placeholder="Ticketing integration"
            value={description}
            onChange={(e) => setDescription(e.currentTarget.value)}
            autosize
            minRows={2}
          />
          {create.isError && (
            <Alert color="red" role="alert">
              {explain(create.error)}
            </Alert>
          )}
          <Button type="submit" loading={create.isPending} disabled={!name.trim() || !roleId}>
            Create service account
          </Button>
        </Stack>
      </form>
    </Modal>
  );
}

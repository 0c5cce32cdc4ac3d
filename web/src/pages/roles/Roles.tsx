// Roles: the system and custom roles of the partner or of one of its organisations, with user counts; the role
// builder (create, edit), clone, delete, and each role's effective permissions with their source role.
import { Alert, Badge, Button, Group, Menu, Modal, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { CursorPager, useCursorList } from '../../components/CursorPager';
import { DataTable } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { TenantSelect } from '../../components/TenantSelect';
import { explain } from '../../lib/errors';
import { useMe } from '../../hooks/me';
import { useCapabilities } from '../../hooks/useCapabilities';
import type { Role } from '../../hooks/roles';
import { EffectivePermissions } from './EffectivePermissions';
import { RoleEditor } from './RoleEditor';

const PAGE = 50;
type Dialog = { kind: 'create' } | { kind: 'edit' | 'clone' | 'delete' | 'effective'; role: Role } | null;

export default function Roles() {
  const me = useMe();
  const [orgId, setOrgId] = useState<string | null>(null);
  const [dialog, setDialog] = useState<Dialog>(null);
  const scope = orgId ?? undefined;
  const { pages, list } = useCursorList(['roles', scope, 'page'], (cursor) =>
    call(api.GET('/api/v1/roles', { params: { query: { orgId: scope, cursor, limit: PAGE } } })),
  );
  const caps = useCapabilities(orgId);
  const write = caps.allowed('roles.manage');
  const remove = caps.allowed('roles.delete');
  const close = () => setDialog(null);

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1} size="h2">
          Roles
        </Title>
        {write && <Button onClick={() => setDialog({ kind: 'create' })}>New role</Button>}
      </Group>
      {me.data?.scope === 'partner' && (
        <TenantSelect
          label="Roles of"
          partnerLabel="The partner (your team)"
          value={orgId}
          onChange={(v) => {
            setOrgId(v);
            pages.reset();
          }}
        />
      )}
      <Loaded q={list} what="roles" isEmpty={(d) => d.data.length === 0} empty="No roles here yet.">
        {(d) => (
          <DataTable
            testId="roles-table"
            highlightOnHover
            columns={['Name', 'Inherits from', 'Force MFA', 'Users']}
            hidden="Actions"
            rows={d.data}
          >
            {(r) => (
              <>
                <Table.Td>
                  <Group gap="xs">
                    <Text size="sm">{r.name}</Text>
                    {r.isSystem && (
                      <Badge variant="light" color="gray" size="sm">
                        System
                      </Badge>
                    )}
                  </Group>
                  {r.description && (
                    <Text size="xs" c="dimmed">
                      {r.description}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>{r.parentRoleName ?? '—'}</Table.Td>
                <Table.Td>{r.forceMfa ? 'Yes' : 'No'}</Table.Td>
                <Table.Td>{r.userCount}</Table.Td>
                <Table.Td>
                  <Menu position="bottom-end">
                    <Menu.Target>
                      <Button size="xs" variant="default" aria-label={`Actions for ${r.name}`}>
                        Actions
                      </Button>
                    </Menu.Target>
                    <Menu.Dropdown>
                      <Menu.Item onClick={() => setDialog({ kind: 'effective', role: r })}>
                        Effective permissions
                      </Menu.Item>
                      {write && !r.isSystem && (
                        <Menu.Item onClick={() => setDialog({ kind: 'edit', role: r })}>Edit</Menu.Item>
                      )}
                      {write && <Menu.Item onClick={() => setDialog({ kind: 'clone', role: r })}>Clone</Menu.Item>}
                      {remove && !r.isSystem && (
                        <Menu.Item color="red" onClick={() => setDialog({ kind: 'delete', role: r })}>
                          Delete
                        </Menu.Item>
                      )}
                    </Menu.Dropdown>
                  </Menu>
                </Table.Td>
              </>
            )}
          </DataTable>
        )}
      </Loaded>
      <CursorPager pages={pages} next={list.data?.nextCursor} numbered />
      {dialog?.kind === 'create' && <RoleEditor role={null} orgId={scope} onClose={close} />}
      {dialog?.kind === 'edit' && <RoleEditor role={dialog.role} orgId={scope} onClose={close} />}
      {dialog?.kind === 'effective' && <EffectivePermissions role={dialog.role} orgId={scope} onClose={close} />}
      {dialog?.kind === 'clone' && <CloneDialog role={dialog.role} orgId={scope} onClose={close} />}
      {dialog?.kind === 'delete' && <DeleteDialog role={dialog.role} orgId={scope} onClose={close} />}
    </Stack>
  );
}

function CloneDialog({ role, orgId, onClose }: { role: Role; orgId?: string; onClose: () => void }) {
  const qc = useQueryClient();
  const [name, setName] = useState(`Copy of ${role.name}`);
  const clone = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/v1/roles/{id}/clone', {
          params: { path: { id: role.id } },
          body: { name: name.trim(), ...(orgId ? { orgId } : {}) },
        }),
      ),
    onSuccess: () => {
      notifications.show({ color: 'green', message: `Role “${name.trim()}” created from ${role.name}.` });
      void qc.invalidateQueries({ queryKey: ['roles'] });
      onClose();
    },
  });
  return (
    <Modal opened onClose={onClose} title={`Clone ${role.name}`}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          clone.mutate();
        }}
      >
        <Stack>
          <Text size="sm">
            The copy holds every permission {role.name} has, its inherited ones included, as its own.
          </Text>
          <TextInput
            label="Name of the copy"
            required
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            maxLength={100}
            data-autofocus
          />
          {clone.isError && (
            <Alert color="red" role="alert">
              {explain(clone.error)}
            </Alert>
          )}
          <Button type="submit" loading={clone.isPending} disabled={!name.trim()}>
            Clone
          </Button>
        </Stack>
      </form>
    </Modal>
  );
}

function DeleteDialog({ role, orgId, onClose }: { role: Role; orgId?: string; onClose: () => void }) {
  const qc = useQueryClient();
  const del = useMutation({
    mutationFn: () => call(api.DELETE('/api/v1/roles/{id}', { params: { path: { id: role.id }, query: { orgId } } })),
    onSuccess: () => {
      notifications.show({ color: 'green', message: `Role “${role.name}” deleted.` });
      void qc.invalidateQueries({ queryKey: ['roles'] });
      onClose();
    },
  });
  return (
    <ConfirmDialog
      title={`Delete the role ${role.name}?`}
      action="Delete"
      pending={del.isPending}
      error={del.error}
      onConfirm={() => del.mutate()}
      onClose={onClose}
    >
      {role.userCount > 0
        ? `${role.userCount} user(s) hold this role: move them to another role first.`
        : 'Nobody holds this role. Deleting it cannot be undone.'}
    </ConfirmDialog>
  );
}

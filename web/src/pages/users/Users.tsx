// Users: the partner's members or an organisation's, searched and paged with the API's keyset cursors; invite,
// resend, change role, disable/enable, remove, reset MFA. Every refusal of the API is shown in words.
import { Alert, Button, Group, Menu, Modal, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
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
import { InviteModal, useAssignableRoles } from './InviteModal';

/** A member; one that has not accepted the invitation (pending) carries only id, email, status and invitedAt. */
interface Row {
  id: string;
  email: string;
  name?: string;
  status: 'active' | 'invited' | 'disabled' | 'pending';
  mfaEnabled?: boolean;
  lastLoginAt?: string | null;
  roleId?: string;
  roleName?: string;
  orgAccess?: 'all' | 'selected' | 'none';
  invitedAt?: string | null;
}

const PAGE = 50;

export default function Users() {
  const me = useMe();
  const partner = me.data?.scope === 'partner';
  const [orgId, setOrgId] = useState<string | null>(null);
  const [search, setSearch] = useState('');
  const [debounced] = useDebouncedValue(search.trim(), 250);
  const scope = orgId ?? undefined;
  const { pages, list } = useCursorList(
    ['users', scope, debounced],
    (cursor) =>
      call(
        api.GET('/api/v1/users', {
          params: { query: { orgId: scope, search: debounced || undefined, cursor, limit: PAGE } },
        }),
      ) as Promise<{ data: Row[]; nextCursor: string | null }>,
  );
  const [inviting, setInviting] = useState(false);
  const caps = useCapabilities(orgId);
  const may = { update: caps.allowed('users.update'), remove: caps.allowed('users.delete') };
  const reset = pages.reset;

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1} size="h2">
          Users
        </Title>
        {caps.allowed('users.invite') && <Button onClick={() => setInviting(true)}>Invite a user</Button>}
      </Group>
      <Group align="end">
        {partner && (
          <TenantSelect
            label="Members of"
            partnerLabel="The partner (your team)"
            value={orgId}
            onChange={(v) => {
              setOrgId(v);
              reset();
            }}
          />
        )}
        <TextInput
          label="Search"
          placeholder="Name or e-mail starts with…"
          value={search}
          onChange={(e) => {
            setSearch(e.currentTarget.value);
            reset();
          }}
          w={320}
        />
      </Group>
      <Loaded
        q={list}
        what="users"
        isEmpty={(d) => d.data.length === 0}
        empty={debounced ? `Nobody’s name or e-mail starts with “${debounced}”.` : 'No members yet. Invite someone.'}
      >
        {(d) => (
          <DataTable
            testId="users-table"
            highlightOnHover
            columns={['Name', 'E-mail', 'Role', 'Status', 'MFA', 'Last sign-in']}
            hidden="Actions"
            rows={d.data}
          >
            {(u) => (
              <UserCells
                user={u}
                orgId={scope}
                self={u.id === me.data?.id}
                may={may}
                canInvite={caps.allowed('users.invite')}
              />
            )}
          </DataTable>
        )}
      </Loaded>
      <CursorPager pages={pages} next={list.data?.nextCursor} numbered />
      <InviteModal opened={inviting} onClose={() => setInviting(false)} orgId={scope} partner={partner && !scope} />
    </Stack>
  );
}

/** The cells of one user's row, with its actions and their dialogs. */
function UserCells({
  user,
  orgId,
  self,
  may,
  canInvite,
}: {
  user: Row;
  orgId?: string;
  self: boolean;
  may: { update: boolean; remove: boolean };
  canInvite: boolean;
}) {
  const qc = useQueryClient();
  // A pending member's account is not the scope's to administer: only its invitation is.
  const pending = user.status === 'pending';
  const [changing, setChanging] = useState(false);
  const [confirm, setConfirm] = useState<null | 'remove' | 'mfa'>(null);
  const q = { query: { orgId } };
  const act = useMutation({
    mutationFn: async (what: 'resend' | 'disable' | 'enable' | 'remove' | 'mfa') => {
      if (what === 'resend')
        return call(
          api.POST('/api/v1/users/resend-invite', { body: { userId: user.id, ...(orgId ? { orgId } : {}) } }),
        );
      if (what === 'disable' || what === 'enable')
        return call(
          api.PATCH('/api/v1/users/{id}', {
            params: { path: { id: user.id }, ...q },
            body: { status: what === 'disable' ? 'disabled' : 'active' },
          }),
        );
      if (what === 'remove') return call(api.DELETE('/api/v1/users/{id}', { params: { path: { id: user.id }, ...q } }));
      return call(api.POST('/api/v1/users/{id}/mfa/reset', { params: { path: { id: user.id }, ...q } }));
    },
    onSuccess: (_r, what) => {
      const words = {
        resend: 'Invitation sent again.',
        disable: 'User disabled; their sessions ended.',
        enable: 'User enabled.',
        remove: 'User removed.',
        mfa: 'Two-step verification reset.',
      };
      notifications.show({ color: 'green', message: words[what] });
      setConfirm(null);
      void qc.invalidateQueries({ queryKey: ['users'] });
    },
    onError: (err) => notifications.show({ color: 'red', title: 'Not done', message: explain(err) }),
  });
  return (
    <>
      <Table.Td>{user.name ?? '—'}</Table.Td>
      <Table.Td>{user.email}</Table.Td>
      <Table.Td>{user.roleName ?? '—'}</Table.Td>
      <Table.Td>
        <Text size="sm" fw={user.status === 'active' ? 400 : 700}>
          {user.status}
        </Text>
      </Table.Td>
      <Table.Td>{user.mfaEnabled ? 'On' : 'Off'}</Table.Td>
      <Table.Td>{user.lastLoginAt ? new Date(user.lastLoginAt).toLocaleString() : 'Never'}</Table.Td>
      <Table.Td>
        {(may.update || may.remove || canInvite) && (
          <Menu position="bottom-end">
            <Menu.Target>
              <Button size="xs" variant="default" aria-label={`Actions for ${user.email}`}>
                Actions
              </Button>
            </Menu.Target>
            <Menu.Dropdown>
              {canInvite && (user.status === 'invited' || pending) && (
                <Menu.Item onClick={() => act.mutate('resend')}>Resend invitation</Menu.Item>
              )}
              {may.update && (
                <Menu.Item onClick={() => setChanging(true)} disabled={self || pending}>
                  Change role
                </Menu.Item>
              )}
              {may.update &&
                (user.status === 'disabled' ? (
                  <Menu.Item onClick={() => act.mutate('enable')}>Enable</Menu.Item>
                ) : (
                  <Menu.Item onClick={() => act.mutate('disable')} disabled={self || pending}>
                    Disable
                  </Menu.Item>
                ))}
              {may.update && user.mfaEnabled && (
                <Menu.Item onClick={() => setConfirm('mfa')} disabled={self}>
                  Reset two-step verification
                </Menu.Item>
              )}
              {may.remove && (
                <Menu.Item color="red" onClick={() => setConfirm('remove')} disabled={self}>
                  {pending ? 'Withdraw invitation' : 'Remove'}
                </Menu.Item>
              )}
            </Menu.Dropdown>
          </Menu>
        )}
        <ConfirmDialog
          opened={!!confirm}
          title={confirm === 'remove' ? `Remove ${user.email}?` : `Reset two-step verification of ${user.email}?`}
          action={confirm === 'remove' ? 'Remove' : 'Reset'}
          pending={act.isPending}
          onConfirm={() => confirm && act.mutate(confirm)}
          onClose={() => setConfirm(null)}
        >
          {confirm === 'remove'
            ? 'They lose access here at once; their account stays if they belong elsewhere.'
            : 'Their authenticator, phone, passkeys and recovery codes are removed and their sessions end. If a policy requires it, they enrol again at next sign-in.'}
        </ConfirmDialog>
        <RoleModal opened={changing} onClose={() => setChanging(false)} user={user} orgId={orgId} />
      </Table.Td>
    </>
  );
}

function RoleModal({
  opened,
  onClose,
  user,
  orgId,
}: {
  opened: boolean;
  onClose: () => void;
  user: Row;
  orgId?: string;
}) {
  const qc = useQueryClient();
  const roles = useAssignableRoles(orgId, opened);
  const [roleId, setRoleId] = useState<string | null>(user.roleId ?? null);
  const save = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/v1/users/{id}/role', {
          params: { path: { id: user.id }, query: { orgId } },
          body: { roleId: roleId! },
        }),
      ),
    onSuccess: () => {
      notifications.show({ color: 'green', message: 'Role changed.' });
      void qc.invalidateQueries({ queryKey: ['users'] });
      onClose();
    },
  });
  return (
    <Modal opened={opened} onClose={onClose} title={`Role of ${user.email}`}>
      <Stack>
        <Select
          label="Role"
          data={(roles.data ?? []).map((r) => ({ value: r.id, label: r.name }))}
          value={roleId}
          onChange={setRoleId}
          allowDeselect={false}
        />
        {save.isError && (
          <Alert color="red" role="alert">
            {explain(save.error)}
          </Alert>
        )}
        <Button onClick={() => save.mutate()} loading={save.isPending} disabled={!roleId}>
          Save
        </Button>
      </Stack>
    </Modal>
  );
}

// SCIM tokens of the partner or of an organisation: issue one (organisation, name, default role; the token and the
// SCIM base URL are shown once), list, revoke (confirm). users:read lists; users:write acts. Issuing a token may ask
// for a fresh proof first (the step-up prompt handles it).
import { Alert, Button, Checkbox, Group, Modal, Stack, Table, Text, TextInput } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import type { components } from '../../api/schema';
import { CursorPager, useCursorList } from '../../components/CursorPager';
import { ConfirmDialog, useConfirmed } from '../../components/ConfirmDialog';
import { DataTable } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { ShownOnce } from '../../components/ShownOnce';
import { TenantSelect } from '../../components/TenantSelect';
import { explain } from '../../lib/errors';
import { done, when } from '../onboarding/common';
import { can, useMe } from '../../hooks/me';
import { RoleSelect, useOwner } from './common';

type Token = components['schemas']['ScimToken'];

export const scimBaseUrl = () => `${window.location.origin}/scim/v2`;

export default function ScimTokens() {
  const me = useMe();
  const qc = useQueryClient();
  const write = can(me.data, 'users:write');
  const owner = useOwner('SCIM tokens of');
  const { pages, list } = useCursorList(
    ['scim-tokens', owner.orgId],
    (cursor) => call(api.GET('/api/v1/scim-tokens', { params: { query: { orgId: owner.orgId, cursor, limit: 50 } } })),
    { resetOn: owner.orgId },
  );
  const [creating, setCreating] = useState(false);
  const revoke = useConfirmed(
    (x: Token) => call(api.DELETE('/api/v1/scim-tokens/{id}', { params: { path: { id: x.id } } })),
    (x) => {
      done(`Token “${x.name}” revoked: the identity provider can no longer provision with it.`);
      void qc.invalidateQueries({ queryKey: ['scim-tokens'] });
    },
  );
  return (
    <Stack>
      <Text size="sm">
        An identity provider (Entra ID, Okta) creates, updates and removes accounts here through SCIM 2.0 with a token
        of its own.
      </Text>
      <Group align="end" justify="space-between">
        {owner.picker ?? <span />}
        {write && <Button onClick={() => setCreating(true)}>New SCIM token</Button>}
      </Group>
      <Loaded q={list} what="SCIM tokens" isEmpty={(d) => d.data.length === 0} empty="No SCIM token here yet.">
        {(d) => (
          <DataTable
            testId="scim-tokens"
            columns={['Name', 'Starts with', 'Default role', 'Created', 'Last used', 'Status']}
            hidden="Actions"
            rows={d.data}
          >
            {(x) => (
              <>
                <Table.Td>{x.name}</Table.Td>
                <Table.Td>
                  <Text size="xs" ff="monospace">
                    {x.hint}
                  </Text>
                </Table.Td>
                <Table.Td>{x.defaultRoleName}</Table.Td>
                <Table.Td>{when(x.createdAt)}</Table.Td>
                <Table.Td>{x.lastUsedAt ? when(x.lastUsedAt) : 'Never'}</Table.Td>
                <Table.Td>
                  <Text size="sm" fw={x.revokedAt ? 700 : 400}>
                    {x.revokedAt ? `Revoked ${when(x.revokedAt)}` : 'Active'}
                  </Text>
                </Table.Td>
                <Table.Td>
                  {write && !x.revokedAt && (
                    <Button
                      size="xs"
                      variant="default"
                      color="red"
                      onClick={() => revoke.ask(x)}
                      aria-label={`Revoke ${x.name}`}
                    >
                      Revoke
                    </Button>
                  )}
                </Table.Td>
              </>
            )}
          </DataTable>
        )}
      </Loaded>
      <CursorPager pages={pages} next={list.data?.nextCursor} />
      {creating && (
        <CreateToken onClose={() => setCreating(false)} initialOrgId={owner.orgId ?? null} partner={owner.partner} />
      )}
      <ConfirmDialog {...revoke.dialog} title={`Revoke “${revoke.target?.name ?? ''}”?`} action="Revoke">
        The identity provider’s requests with this token are refused from the next one. Accounts it provisioned stay.
      </ConfirmDialog>
    </Stack>
  );
}

function CreateToken({
  onClose,
  initialOrgId,
  partner,
}: {
  onClose: () => void;
  initialOrgId: string | null;
  partner: boolean;
}) {
  const qc = useQueryClient();
  const [orgId, setOrgId] = useState<string | null>(initialOrgId);
  const [name, setName] = useState('');
  const [roleId, setRoleId] = useState<string | null>(null);
  const [invite, setInvite] = useState(true);
  const [created, setCreated] = useState<string | null>(null);
  const create = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/v1/scim-tokens', {
          body: { orgId: orgId ?? undefined, name: name.trim(), defaultRoleId: roleId!, sendInvitations: invite },
        }),
      ),
    onSuccess: (x) => {
      setCreated(x.token);
      void qc.invalidateQueries({ queryKey: ['scim-tokens'] });
    },
  });
  return (
    <Modal opened onClose={onClose} title={created ? 'Your new SCIM token' : 'New SCIM token'}>
      {created ? (
        <ShownOnce what="token" value={created} testId="scim-token" onDone={onClose}>
          <Text size="sm">Give the identity provider this token and the SCIM base URL:</Text>
          <Text size="sm" ff="monospace" data-testid="scim-base-url">
            {scimBaseUrl()}
          </Text>
        </ShownOnce>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate();
          }}
        >
          <Stack>
            {partner && (
              <TenantSelect
                label="Organisation"
                partnerLabel="The partner’s own staff"
                value={orgId}
                onChange={(v) => {
                  setOrgId(v);
                  setRoleId(null);
                }}
              />
            )}
            <TextInput
              label="Name"
              description="Which identity provider or connector uses it."
              placeholder="Entra ID"
              required
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
              data-autofocus
            />
            <RoleSelect
              orgId={orgId ?? undefined}
              enabled={true}
              label="Default role"
              description="What a provisioned account holds until a mapped group gives another."
              value={roleId}
              onChange={setRoleId}
            />
            <Checkbox
              label="E-mail new accounts an invitation to set a password"
              checked={invite}
              onChange={(e) => setInvite(e.currentTarget.checked)}
            />
            {create.isError && (
              <Alert color="red" role="alert">
                {explain(create.error)}
              </Alert>
            )}
            <Button type="submit" loading={create.isPending} disabled={!name.trim() || !roleId}>
              Create token
            </Button>
          </Stack>
        </form>
      )}
    </Modal>
  );
}

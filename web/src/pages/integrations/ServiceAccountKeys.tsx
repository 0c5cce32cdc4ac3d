// The API keys of one service account: list (prefix, name, created, expires, last used at and from), issue one
// (name, expiry, allowed address blocks; the key is shown once) and revoke. Issuing a key is a risky action: the API
// may ask for a fresh proof first (the step-up prompt handles it).
import { Alert, Button, Group, Modal, Select, Stack, Table, Text, Textarea, TextInput } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import type { components } from '../../api/schema';
import { CursorPager, useCursorList } from '../../components/CursorPager';
import { ConfirmDialog, useConfirmed } from '../../components/ConfirmDialog';
import { DataTable } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { ShownOnce } from '../../components/ShownOnce';
import { explain } from '../../lib/errors';
import { done, when } from '../onboarding/common';

type Account = components['schemas']['ServiceAccount'];
type Key = components['schemas']['ApiKey'];

const LIFETIMES = [
  { value: '', label: 'Never expires' },
  { value: '2592000', label: '30 days' },
  { value: '7776000', label: '90 days' },
  { value: '31536000', label: '1 year' },
];

function keyStatus(k: Key) {
  if (k.revokedAt) return 'Revoked';
  return k.active ? 'Active' : 'Expired';
}

export function ServiceAccountKeys({
  account,
  write,
  onClose,
}: {
  account: Account | null;
  write: boolean;
  onClose: () => void;
}) {
  const qc = useQueryClient();
  const id = account?.id;
  const { pages, list } = useCursorList(
    ['api-keys', id],
    (cursor) =>
      call(
        api.GET('/api/v1/service-accounts/{id}/keys', { params: { path: { id: id! }, query: { cursor, limit: 50 } } }),
      ),
    { resetOn: id, enabled: !!id },
  );
  const [creating, setCreating] = useState(false);
  const revoke = useConfirmed(
    (k: Key) =>
      call(
        api.DELETE('/api/v1/service-accounts/{id}/keys/{keyId}', {
          params: { path: { id: k.serviceAccountId, keyId: k.id } },
        }),
      ),
    (k) => {
      done(`Key “${k.name}” revoked: it is refused from the next request.`);
      void qc.invalidateQueries({ queryKey: ['api-keys'] });
      void qc.invalidateQueries({ queryKey: ['service-accounts'] });
    },
  );
  return (
    <>
      <Modal
        opened={!!account && !creating && !revoke.target}
        onClose={onClose}
        title={`Keys of “${account?.name ?? ''}”`}
        size="xl"
      >
        <Stack>
          <Text size="sm">
            Use a key as <code>Authorization: Bearer &lt;key&gt;</code>. At most two keys are active at once, so a
            rotation overlaps: issue a new one, deploy it, revoke the old one.
          </Text>
          {write && (
            <Group justify="end">
              <Button onClick={() => setCreating(true)} disabled={account?.disabled}>
                New key
              </Button>
            </Group>
          )}
          <Loaded
            q={list}
            what="keys"
            isEmpty={(d) => d.data.length === 0}
            empty="No key yet: this account cannot call the API."
          >
            {(d) => (
              <DataTable
                testId="api-keys"
                columns={['Prefix', 'Name', 'Created', 'Expires', 'Last used', 'Status']}
                hidden="Actions"
                rows={d.data}
              >
                {(k) => (
                  <>
                    <Table.Td>
                      <Text size="xs" ff="monospace">
                        {k.prefix}
                      </Text>
                    </Table.Td>
                    <Table.Td>
                      <Text size="sm">{k.name}</Text>
                      {k.allowedCidrs.length > 0 && (
                        <Text size="xs" c="dimmed">
                          From {k.allowedCidrs.join(', ')}
                        </Text>
                      )}
                    </Table.Td>
                    <Table.Td>{when(k.createdAt)}</Table.Td>
                    <Table.Td>{k.expiresAt ? when(k.expiresAt) : 'Never'}</Table.Td>
                    <Table.Td>
                      {k.lastUsedAt ? `${when(k.lastUsedAt)}${k.lastUsedIp ? ` from ${k.lastUsedIp}` : ''}` : 'Never'}
                    </Table.Td>
                    <Table.Td>
                      <Text size="sm" fw={k.active ? 400 : 700}>
                        {keyStatus(k)}
                      </Text>
                    </Table.Td>
                    <Table.Td>
                      {write && !k.revokedAt && (
                        <Button
                          size="xs"
                          variant="default"
                          color="red"
                          onClick={() => revoke.ask(k)}
                          aria-label={`Revoke ${k.name}`}
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
        </Stack>
      </Modal>
      {account && creating && <CreateKey account={account} onClose={() => setCreating(false)} />}
      <ConfirmDialog {...revoke.dialog} title={`Revoke “${revoke.target?.name ?? ''}”?`} action="Revoke">
        The key, and access tokens obtained with it, are refused from the next request.
      </ConfirmDialog>
    </>
  );
}

function CreateKey({ account, onClose }: { account: Account; onClose: () => void }) {
  const qc = useQueryClient();
  const [name, setName] = useState('');
  const [lifetime, setLifetime] = useState('31536000');
  const [cidrs, setCidrs] = useState('');
  const [created, setCreated] = useState<(Key & { key: string }) | null>(null);
  const create = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/v1/service-accounts/{id}/keys', {
          params: { path: { id: account.id } },
          body: {
            name: name.trim(),
            expiresAt: lifetime ? new Date(Date.now() + Number(lifetime) * 1000).toISOString() : undefined,
            allowedCidrs: cidrs
              .split(/[\s,]+/)
              .map((c) => c.trim())
              .filter(Boolean),
          },
        }),
      ),
    onSuccess: (k) => {
      setCreated(k);
      void qc.invalidateQueries({ queryKey: ['api-keys'] });
      void qc.invalidateQueries({ queryKey: ['service-accounts'] });
    },
  });
  return (
    <Modal opened onClose={onClose} title={created ? 'Your new API key' : `New key for “${account.name}”`}>
      {created ? (
        <ShownOnce what="key" value={created.key} testId="api-key" onDone={onClose}>
          <Text size="sm">
            {created.expiresAt ? `Valid until ${when(created.expiresAt)}.` : 'It does not expire.'} Client ID for OAuth:{' '}
            <code>{account.clientId}</code>
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
            <TextInput
              label="Name"
              placeholder="Rotation 2026-03"
              required
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
              data-autofocus
            />
            <Select
              label="Valid for"
              data={LIFETIMES}
              value={lifetime}
              onChange={(v) => setLifetime(v ?? '')}
              allowDeselect={false}
            />
            <Textarea
              label="Allowed addresses"
              description="Address blocks the key may be used from, one per line (203.0.113.0/24, 2001:db8::/32). Empty: anywhere."
              value={cidrs}
              onChange={(e) => setCidrs(e.currentTarget.value)}
              autosize
              minRows={2}
            />
            {create.isError && (
              <Alert color="red" role="alert">
                {explain(create.error)}
              </Alert>
            )}
            <Button type="submit" loading={create.isPending} disabled={!name.trim()}>
              Create key
            </Button>
          </Stack>
        </form>
      )}
    </Modal>
  );
}

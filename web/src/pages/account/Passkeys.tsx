// Passkeys of the account: add (a WebAuthn registration), rename, remove.
import { Alert, Button, Group, Modal, PasswordInput, Stack, Table, Text, TextInput } from '@mantine/core';
import { startRegistration } from '@simplewebauthn/browser';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { explain } from '../../lib/errors';
import { ok, Section } from './Section';

interface Passkey {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
  backedUp: boolean;
}

export function Passkeys() {
  const qc = useQueryClient();
  const list = useQuery({
    queryKey: ['passkeys'],
    queryFn: async () => (await call(api.GET('/api/v1/auth/passkeys'))).data as Passkey[],
  });
  const [adding, setAdding] = useState(false);
  const [name, setName] = useState('');
  const [pw, setPw] = useState('');
  const [renaming, setRenaming] = useState<Passkey | null>(null);
  const [removing, setRemoving] = useState<Passkey | null>(null);
  const done = (m: string) => {
    ok(m);
    void qc.invalidateQueries({ queryKey: ['passkeys'] });
    void qc.invalidateQueries({ queryKey: ['me'] });
  };
  const add = useMutation({
    mutationFn: async () => {
      const { options } = await call(
        api.POST('/api/v1/auth/passkeys/register/options', { body: { currentPassword: pw, name } }),
      );
      const credential = await startRegistration({ optionsJSON: options as never });
      return call(api.POST('/api/v1/auth/passkeys/register/verify', { body: { credential: credential as never } }));
    },
    onSuccess: () => {
      setAdding(false);
      setPw('');
      setName('');
      done('Passkey added.');
    },
  });
  const rename = useMutation({
    mutationFn: (p: Passkey) =>
      call(api.PATCH('/api/v1/auth/passkeys/{id}', { params: { path: { id: p.id } }, body: { name } })),
    onSuccess: () => {
      setRenaming(null);
      setName('');
      done('Passkey renamed.');
    },
  });
  const remove = useMutation({
    mutationFn: (p: Passkey) =>
      call(api.DELETE('/api/v1/auth/passkeys/{id}', { params: { path: { id: p.id } }, body: { currentPassword: pw } })),
    onSuccess: () => {
      setRemoving(null);
      setPw('');
      done('Passkey removed.');
    },
  });
  return (
    <Section title="Passkeys">
      <Stack>
        {list.isPending ? (
          <Text size="sm">Loading…</Text>
        ) : list.isError ? (
          <Alert color="red" role="alert">
            {explain(list.error)}
          </Alert>
        ) : list.data.length === 0 ? (
          <Text size="sm" c="dimmed">
            No passkey yet. A passkey signs you in with your device’s screen lock or a security key.
          </Text>
        ) : (
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Added</Table.Th>
                <Table.Th>Last used</Table.Th>
                <Table.Th>Actions</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.data.map((p) => (
                <Table.Tr key={p.id}>
                  <Table.Td>{p.name}</Table.Td>
                  <Table.Td>{new Date(p.createdAt).toLocaleDateString()}</Table.Td>
                  <Table.Td>{p.lastUsedAt ? new Date(p.lastUsedAt).toLocaleString() : 'Never'}</Table.Td>
                  <Table.Td>
                    <Group gap="xs">
                      <Button
                        size="xs"
                        variant="default"
                        onClick={() => {
                          setName(p.name);
                          setRenaming(p);
                        }}
                      >
                        Rename
                      </Button>
                      <Button size="xs" variant="default" color="red" onClick={() => setRemoving(p)}>
                        Remove
                      </Button>
                    </Group>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
        <Group>
          <Button onClick={() => setAdding(true)}>Add a passkey</Button>
        </Group>
      </Stack>
      <Modal opened={adding} onClose={() => setAdding(false)} title="Add a passkey">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            add.mutate();
          }}
        >
          <Stack>
            <TextInput
              label="Name"
              placeholder="Work laptop"
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
              required
            />
            <PasswordInput
              label="Current password"
              autoComplete="current-password"
              value={pw}
              onChange={(e) => setPw(e.currentTarget.value)}
              required
            />
            {add.isError && (
              <Alert color="red" role="alert">
                {explain(add.error)}
              </Alert>
            )}
            <Button type="submit" loading={add.isPending}>
              Continue
            </Button>
          </Stack>
        </form>
      </Modal>
      <Modal opened={!!renaming} onClose={() => setRenaming(null)} title="Rename passkey">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (renaming) rename.mutate(renaming);
          }}
        >
          <Stack>
            <TextInput label="Name" value={name} onChange={(e) => setName(e.currentTarget.value)} required />
            {rename.isError && (
              <Alert color="red" role="alert">
                {explain(rename.error)}
              </Alert>
            )}
            <Button type="submit" loading={rename.isPending}>
              Save
            </Button>
          </Stack>
        </form>
      </Modal>
      <Modal opened={!!removing} onClose={() => setRemoving(null)} title={`Remove “${removing?.name ?? ''}”`}>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (removing) remove.mutate(removing);
          }}
        >
          <Stack>
            <PasswordInput
              label="Current password"
              autoComplete="current-password"
              value={pw}
              onChange={(e) => setPw(e.currentTarget.value)}
              required
            />
            {remove.isError && (
              <Alert color="red" role="alert">
                {explain(remove.error)}
              </Alert>
            )}
            <Button type="submit" color="red" loading={remove.isPending}>
              Remove
            </Button>
          </Stack>
        </form>
      </Modal>
    </Section>
  );
}

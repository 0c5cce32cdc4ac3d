// My account: profile, password, two-step verification (authenticator app, recovery codes), passkeys.
import { Alert, Button, Card, Group, Modal, PasswordInput, PinInput, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { startRegistration } from '@simplewebauthn/browser';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { session, type TokenResponse } from '../../api/session';
import { RecoveryCodes } from '../../components/RecoveryCodes';
import { TotpSetup } from '../../components/TotpSetup';
import { explain } from '../../lib/errors';
import { NewPassword } from '../auth/NewPassword';
import { useMe } from '../Shell';

const ok = (message: string) => notifications.show({ color: 'green', message });

export default function Account() {
  return (
    <Stack maw={760}>
      <Title order={1} size="h2">
        My account
      </Title>
      <Profile />
      <Password />
      <TwoStep />
      <Passkeys />
    </Stack>
  );
}

function Section({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <Card withBorder component="section" aria-label={title}>
      <Title order={2} size="h4" mb="sm">
        {title}
      </Title>
      {children}
    </Card>
  );
}

function Profile() {
  const me = useMe();
  const qc = useQueryClient();
  const [name, setName] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: () => call(api.PATCH('/api/v1/users/me', { body: { name: name ?? '' } })),
    onSuccess: () => {
      ok('Profile saved.');
      void qc.invalidateQueries({ queryKey: ['me'] });
    },
  });
  return (
    <Section title="Profile">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate();
        }}
      >
        <Stack>
          <Text size="sm">
            E-mail: <b>{me.data?.email}</b> · signed in to a {me.data?.scope ?? 'personal'} context
          </Text>
          <TextInput label="Name" value={name ?? me.data?.name ?? ''} onChange={(e) => setName(e.currentTarget.value)} />
          {save.isError && <Alert color="red" role="alert">{explain(save.error)}</Alert>}
          <Group>
            <Button type="submit" loading={save.isPending} disabled={name === null}>
              Save
            </Button>
          </Group>
        </Stack>
      </form>
    </Section>
  );
}

function Password() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirm, setConfirm] = useState('');
  const change = useMutation({
    mutationFn: async () => {
      if (next !== confirm) throw new Error('The two passwords differ.');
      return call(api.POST('/api/v1/auth/change-password', { body: { currentPassword: current, newPassword: next } }));
    },
    onSuccess: (t) => {
      session.signedIn(t as TokenResponse);
      setCurrent('');
      setNext('');
      setConfirm('');
      ok('Password changed. Your other sessions were signed out.');
    },
  });
  return (
    <Section title="Password">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          change.mutate();
        }}
      >
        <Stack>
          <PasswordInput label="Current password" autoComplete="current-password" value={current} onChange={(e) => setCurrent(e.currentTarget.value)} />
          <NewPassword value={next} confirm={confirm} onChange={setNext} onConfirm={setConfirm} />
          {change.isError && <Alert color="red" role="alert">{explain(change.error)}</Alert>}
          <Group>
            <Button type="submit" loading={change.isPending}>
              Change password
            </Button>
          </Group>
        </Stack>
      </form>
    </Section>
  );
}

function TwoStep() {
  const me = useMe();
  const qc = useQueryClient();
  const [setting, setSetting] = useState(false);
  const [disabling, setDisabling] = useState(false);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [pw, setPw] = useState('');
  const [code, setCode] = useState('');
  const refresh = () => qc.invalidateQueries({ queryKey: ['me'] });
  const regen = useMutation({ mutationFn: () => call(api.POST('/api/v1/auth/mfa/recovery-codes')), onSuccess: (r) => setCodes(r.recoveryCodes) });
  const disable = useMutation({
    mutationFn: () => call(api.POST('/api/v1/auth/mfa/disable', { body: { currentPassword: pw, code } })),
    onSuccess: (t) => {
      if (t && typeof t === 'object' && 'accessToken' in t) session.signedIn(t as unknown as TokenResponse);
      setDisabling(false);
      setPw('');
      setCode('');
      ok('Two-step verification is off.');
      void refresh();
    },
  });
  const enabled = me.data?.mfaEnabled;
  return (
    <Section title="Two-step verification">
      <Stack>
        <Group>
          <Text size="sm">Status:</Text>
          <Text size="sm" fw={700} data-testid="mfa-status">
            {enabled ? 'On' : 'Off'}
          </Text>
        </Group>
        {!enabled && !setting && (
          <Group>
            <Button onClick={() => setSetting(true)}>Set up an authenticator app</Button>
          </Group>
        )}
        {setting && (
          <TotpSetup
            onEnabled={(t) => session.signedIn(t)}
            onDone={() => {
              setSetting(false);
              void refresh();
            }}
          />
        )}
        {enabled && (
          <Group>
            <Button variant="default" onClick={() => regen.mutate()} loading={regen.isPending}>
              New recovery codes
            </Button>
            <Button variant="default" color="red" onClick={() => setDisabling(true)}>
              Turn off
            </Button>
          </Group>
        )}
        {regen.isError && <Alert color="red" role="alert">{explain(regen.error)}</Alert>}
        {codes && <RecoveryCodes codes={codes} />}
      </Stack>
      <Modal opened={disabling} onClose={() => setDisabling(false)} title="Turn off two-step verification">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            disable.mutate();
          }}
        >
          <Stack>
            <PasswordInput label="Current password" autoComplete="current-password" value={pw} onChange={(e) => setPw(e.currentTarget.value)} />
            <Text size="sm">A code from your authenticator app (or a recovery code):</Text>
            <PinInput length={6} type="number" value={code} onChange={setCode} aria-label="Verification code" />
            {disable.isError && <Alert color="red" role="alert">{explain(disable.error)}</Alert>}
            <Button type="submit" color="red" loading={disable.isPending}>
              Turn off
            </Button>
          </Stack>
        </form>
      </Modal>
    </Section>
  );
}

interface Passkey {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
  backedUp: boolean;
}

function Passkeys() {
  const qc = useQueryClient();
  const list = useQuery({ queryKey: ['passkeys'], queryFn: async () => (await call(api.GET('/api/v1/auth/passkeys'))).data as Passkey[] });
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
      const { options } = await call(api.POST('/api/v1/auth/passkeys/register/options', { body: { currentPassword: pw, name } }));
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
    mutationFn: (p: Passkey) => call(api.PATCH('/api/v1/auth/passkeys/{id}', { params: { path: { id: p.id } }, body: { name } })),
    onSuccess: () => {
      setRenaming(null);
      setName('');
      done('Passkey renamed.');
    },
  });
  const remove = useMutation({
    mutationFn: (p: Passkey) => call(api.DELETE('/api/v1/auth/passkeys/{id}', { params: { path: { id: p.id } }, body: { currentPassword: pw } })),
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
          <Alert color="red" role="alert">{explain(list.error)}</Alert>
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
                      <Button size="xs" variant="default" onClick={() => { setName(p.name); setRenaming(p); }}>
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
        <form onSubmit={(e) => { e.preventDefault(); add.mutate(); }}>
          <Stack>
            <TextInput label="Name" placeholder="Work laptop" value={name} onChange={(e) => setName(e.currentTarget.value)} required />
            <PasswordInput label="Current password" autoComplete="current-password" value={pw} onChange={(e) => setPw(e.currentTarget.value)} required />
            {add.isError && <Alert color="red" role="alert">{explain(add.error)}</Alert>}
            <Button type="submit" loading={add.isPending}>
              Continue
            </Button>
          </Stack>
        </form>
      </Modal>
      <Modal opened={!!renaming} onClose={() => setRenaming(null)} title="Rename passkey">
        <form onSubmit={(e) => { e.preventDefault(); if (renaming) rename.mutate(renaming); }}>
          <Stack>
            <TextInput label="Name" value={name} onChange={(e) => setName(e.currentTarget.value)} required />
            {rename.isError && <Alert color="red" role="alert">{explain(rename.error)}</Alert>}
            <Button type="submit" loading={rename.isPending}>
              Save
            </Button>
          </Stack>
        </form>
      </Modal>
      <Modal opened={!!removing} onClose={() => setRemoving(null)} title={`Remove “${removing?.name ?? ''}”`}>
        <form onSubmit={(e) => { e.preventDefault(); if (removing) remove.mutate(removing); }}>
          <Stack>
            <PasswordInput label="Current password" autoComplete="current-password" value={pw} onChange={(e) => setPw(e.currentTarget.value)} required />
            {remove.isError && <Alert color="red" role="alert">{explain(remove.error)}</Alert>}
            <Button type="submit" color="red" loading={remove.isPending}>
              Remove
            </Button>
          </Stack>
        </form>
      </Modal>
    </Section>
  );
}

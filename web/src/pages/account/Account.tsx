// My account: profile, e-mail address (verified or not, a pending change), where you act (your memberships),
// pending invitations, password, two-step verification (authenticator app,
// text messages, recovery codes), passkeys, and the sessions signed in to your account.
import { Alert, Button, Group, PasswordInput, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { session, type TokenResponse } from '../../api/session';
import { explain } from '../../lib/errors';
import { NewPassword } from '../auth/NewPassword';
import { useMe } from '../../hooks/me';
import { EmailAddress } from './EmailAddress';
import { PendingInvitations } from './Invitations';
import { Memberships } from './Memberships';
import { Passkeys } from './Passkeys';
import { ok, Section } from './Section';
import { Sessions } from './Sessions';
import { TwoStep } from './TwoStep';

export default function Account() {
  return (
    <Stack maw={860}>
      <Title order={1} size="h2">
        My account
      </Title>
      <Profile />
      <EmailAddress />
      <Memberships />
      <PendingInvitations />
      <Password />
      <TwoStep />
      <Passkeys />
      <Sessions />
    </Stack>
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
          <TextInput
            label="Name"
            value={name ?? me.data?.name ?? ''}
            onChange={(e) => setName(e.currentTarget.value)}
          />
          {save.isError && (
            <Alert color="red" role="alert">
              {explain(save.error)}
            </Alert>
          )}
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
          <PasswordInput
            label="Current password"
            autoComplete="current-password"
            value={current}
            onChange={(e) => setCurrent(e.currentTarget.value)}
          />
          <NewPassword value={next} confirm={confirm} onChange={setNext} onConfirm={setConfirm} />
          {change.isError && (
            <Alert color="red" role="alert">
              {explain(change.error)}
            </Alert>
          )}
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

// Your address: whether it is verified (with "Send verification link"), a change of address waiting for the link
// mailed to the new address, and the form that asks for one. The login moves only once that link is opened.
import { Alert, Button, Group, Stack, Text, TextInput } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { explain } from '../../lib/errors';
import { ok, Section } from './Section';

interface EmailStatus {
  email: string;
  emailVerified: boolean;
  pendingEmail: string | null;
  pendingExpiresAt: string | null;
}

export function EmailAddress() {
  const qc = useQueryClient();
  const [next, setNext] = useState('');
  const status = useQuery({
    queryKey: ['email-status'],
    queryFn: async () => (await call(api.GET('/api/v1/auth/verify-email'))) as EmailStatus,
  });
  const send = useMutation({
    mutationFn: () => call(api.POST('/api/v1/auth/verify-email/send')),
    onSuccess: (r) =>
      ok((r as { sent: boolean }).sent ? 'Verification link sent: open it from your inbox.' : 'Already verified.'),
  });
  const change = useMutation({
    mutationFn: () => call(api.PATCH('/api/v1/users/me', { body: { email: next } })),
    onSuccess: () => {
      ok(`A link was sent to ${next}. Your address changes once you open it.`);
      setNext('');
      void qc.invalidateQueries({ queryKey: ['email-status'] });
    },
  });
  const s = status.data;
  return (
    <Section title="E-mail address">
      <Stack>
        <Group gap="xs">
          <Text size="sm">
            Signed in as <b>{s?.email ?? '…'}</b>
          </Text>
          {s &&
            (s.emailVerified ? (
              <Text size="sm" fw={700}>
                Verified
              </Text>
            ) : (
              <Text size="sm" fw={700} c="red.9">
                Not verified
              </Text>
            ))}
        </Group>
        {s && !s.emailVerified && (
          <Group>
            <Button variant="default" onClick={() => send.mutate()} loading={send.isPending}>
              Send verification link
            </Button>
          </Group>
        )}
        {send.isError && (
          <Alert color="red" role="alert">
            {explain(send.error)}
          </Alert>
        )}
        {s?.pendingEmail && (
          <Alert color="blue" role="status" title="Change of address pending">
            Waiting for the link sent to <b>{s.pendingEmail}</b>
            {s.pendingExpiresAt ? ` (valid until ${new Date(s.pendingExpiresAt).toLocaleString()})` : ''}. Until it is
            opened you keep signing in with {s.email}.
          </Alert>
        )}
        <form
          onSubmit={(e) => {
            e.preventDefault();
            change.mutate();
          }}
        >
          <Group align="end">
            <TextInput
              label="New e-mail address"
              type="email"
              value={next}
              onChange={(e) => setNext(e.currentTarget.value)}
              style={{ flex: 1 }}
            />
            <Button type="submit" variant="default" loading={change.isPending} disabled={!next}>
              Change address
            </Button>
          </Group>
        </form>
        {change.isError && (
          <Alert color="red" role="alert">
            {explain(change.error)}
          </Alert>
        )}
      </Stack>
    </Section>
  );
}

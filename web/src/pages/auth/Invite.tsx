// The invitation link (`/accept-invite?token=`): who invited you where, then a password, then signed in.
import { Alert, Button, Loader, Stack, Text, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useSearchParams } from 'react-router';
import { api, call } from '../../api/client';
import type { TokenResponse } from '../../api/session';
import { explain } from '../../lib/errors';
import { AuthCard, BackToSignIn, FormError } from './AuthCard';
import { NewPassword } from './NewPassword';
import { useSignedIn } from './useSignedIn';

export default function Invite() {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const signedIn = useSignedIn();
  const preview = useQuery({
    queryKey: ['invite', token],
    enabled: !!token,
    queryFn: () => call(api.POST('/api/v1/auth/invite/preview', { body: { token } })),
  });
  const [name, setName] = useState<string | null>(null);
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    if (password !== confirm) return setError('The two passwords differ.');
    setBusy(true);
    setError(null);
    try {
      const body = { token, password, ...(name ? { name } : {}) };
      signedIn((await call(api.POST('/api/v1/auth/accept-invite', { body }))) as TokenResponse);
    } catch (err) {
      setError(explain(err));
    } finally {
      setBusy(false);
    }
  };
  const p = preview.data as
    | { email: string; name: string | null; partnerName?: string | null; orgName?: string | null }
    | undefined;
  return (
    <AuthCard title="Accept your invitation" footer={<BackToSignIn />}>
      {!token ? (
        <Alert color="red" role="alert">
          This page needs the link from the invitation e-mail.
        </Alert>
      ) : preview.isPending ? (
        <Loader aria-label="Loading the invitation" />
      ) : preview.isError ? (
        <Alert color="red" role="alert">
          {explain(preview.error)}
        </Alert>
      ) : (
        <form onSubmit={submit} noValidate>
          <Stack>
            <Text>
              You are invited to <b>{p?.orgName ?? p?.partnerName ?? 'Gatehouse'}</b> as <b>{p?.email}</b>.
            </Text>
            <FormError error={error} />
            <TextInput
              label="Your name"
              autoComplete="name"
              value={name ?? p?.name ?? ''}
              onChange={(e) => setName(e.currentTarget.value)}
            />
            <NewPassword
              label="Choose a password"
              value={password}
              confirm={confirm}
              onChange={setPassword}
              onConfirm={setConfirm}
            />
            <Button type="submit" loading={busy}>
              Accept and sign in
            </Button>
          </Stack>
        </form>
      )}
    </AuthCard>
  );
}

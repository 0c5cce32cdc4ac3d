// First run (`/setup?token=` printed by the service at start): the first partner and its administrator.
import { Alert, Button, Loader, Stack, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useSearchParams } from 'react-router';
import { api, call } from '../../api/client';
import type { TokenResponse } from '../../api/session';
import { explain } from '../../lib/errors';
import { AuthCard, BackToSignIn, FormError } from './AuthCard';
import { NewPassword } from './NewPassword';
import { useSignedIn } from './useSignedIn';

export default function Setup() {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const signedIn = useSignedIn();
  const status = useQuery({ queryKey: ['setup-status'], queryFn: () => call(api.GET('/api/v1/setup/status')) });
  const [form, setForm] = useState({ companyName: '', name: '', email: '' });
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const field = (k: keyof typeof form) => ({
    value: form[k],
    onChange: (e: React.ChangeEvent<HTMLInputElement>) => setForm({ ...form, [k]: e.currentTarget.value }),
  });
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    if (password !== confirm) return setError('The two passwords differ.');
    setBusy(true);
    setError(null);
    try {
      signedIn((await call(api.POST('/api/v1/setup', { body: { token, ...form, password } }))) as TokenResponse);
    } catch (err) {
      setError(explain(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <AuthCard title="Set up Gatehouse" footer={<BackToSignIn />}>
      {status.isPending ? (
        <Loader aria-label="Loading" />
      ) : status.isError ? (
        <Alert color="red" role="alert">
          {explain(status.error)}
        </Alert>
      ) : !status.data.needed ? (
        <Alert color="green" role="status" title="Already set up">
          Gatehouse is set up. Sign in instead.
        </Alert>
      ) : !token ? (
        <Alert color="yellow" role="alert">
          Open the setup link the service printed when it started (it ends in <code>/setup?token=…</code>).
        </Alert>
      ) : (
        <form onSubmit={submit} noValidate>
          <Stack>
            <FormError error={error} />
            <TextInput label="Company name" required autoComplete="organization" {...field('companyName')} />
            <TextInput label="Your name" required autoComplete="name" {...field('name')} />
            <TextInput label="E-mail" type="email" required autoComplete="username" {...field('email')} />
            <NewPassword
              label="Password"
              value={password}
              confirm={confirm}
              onChange={setPassword}
              onConfirm={setConfirm}
            />
            <Button type="submit" loading={busy}>
              Create the administrator
            </Button>
          </Stack>
        </form>
      )}
    </AuthCard>
  );
}

// Registration of a new partner (only when the service runs with ENABLE_REGISTRATION=true).
import { Alert, Button, Stack, TextInput } from '@mantine/core';
import { useState } from 'react';
import { api, ApiError, call } from '../../api/client';
import type { TokenResponse } from '../../api/session';
import { explain } from '../../lib/errors';
import { AuthCard, BackToSignIn, FormError } from './AuthCard';
import { NewPassword } from './NewPassword';
import { useSignedIn } from './useSignedIn';

export default function Register() {
  const signedIn = useSignedIn();
  const [form, setForm] = useState({ companyName: '', name: '', email: '' });
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [closed, setClosed] = useState(false);
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
      signedIn(
        (await call(api.POST('/api/v1/auth/register-partner', { body: { ...form, password } }))) as TokenResponse,
      );
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) setClosed(true);
      else setError(explain(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <AuthCard title="Create your partner account" footer={<BackToSignIn />}>
      {closed ? (
        <Alert color="yellow" role="alert" title="Registration is closed">
          This Gatehouse does not accept new registrations. Ask an administrator for an invitation.
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
              Create account
            </Button>
          </Stack>
        </form>
      )}
    </AuthCard>
  );
}

import { Alert, Button, Stack } from '@mantine/core';
import { useState } from 'react';
import { useSearchParams } from 'react-router';
import { api, call } from '../../api/client';
import { explain } from '../../lib/errors';
import { AuthCard, BackToSignIn, FormError } from './AuthCard';
import { NewPassword } from './NewPassword';

export default function ResetPassword() {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [done, setDone] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    if (password !== confirm) return setError('The two passwords differ.');
    setBusy(true);
    setError(null);
    try {
      await call(api.POST('/api/v1/auth/reset-password', { body: { token, newPassword: password } }));
      setDone(true);
    } catch (err) {
      setError(explain(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <AuthCard title="Choose a new password" footer={<BackToSignIn />}>
      {!token ? (
        <Alert color="red" role="alert">
          This page needs the link from the reset e-mail.
        </Alert>
      ) : done ? (
        <Alert color="green" role="status" title="Password changed">
          Your password is changed and every session was signed out. Sign in with the new password.
        </Alert>
      ) : (
        <form onSubmit={submit} noValidate>
          <Stack>
            <FormError error={error} />
            <NewPassword value={password} confirm={confirm} onChange={setPassword} onConfirm={setConfirm} />
            <Button type="submit" loading={busy}>
              Change password
            </Button>
          </Stack>
        </form>
      )}
    </AuthCard>
  );
}

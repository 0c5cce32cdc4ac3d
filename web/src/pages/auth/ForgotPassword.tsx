import { Alert, Button, Stack, TextInput } from '@mantine/core';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { explain } from '../../lib/errors';
import { AuthCard, BackToSignIn, FormError } from './AuthCard';

export default function ForgotPassword() {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await call(api.POST('/api/v1/auth/forgot-password', { body: { email } }));
      setSent(true);
    } catch (err) {
      setError(explain(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <AuthCard title="Reset your password" footer={<BackToSignIn />}>
      {sent ? (
        <Alert color="green" role="status" title="Check your e-mail">
          If an account uses {email}, a link to choose a new password is on its way. The link works for one hour.
        </Alert>
      ) : (
        <form onSubmit={submit} noValidate>
          <Stack>
            <FormError error={error} />
            <TextInput
              label="E-mail"
              type="email"
              autoComplete="username"
              required
              value={email}
              onChange={(e) => setEmail(e.currentTarget.value)}
            />
            <Button type="submit" loading={busy}>
              Send the reset link
            </Button>
          </Stack>
        </form>
      )}
    </AuthCard>
  );
}

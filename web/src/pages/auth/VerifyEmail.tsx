// The page a mailed verification or change-of-address link opens: it spends the token once and says what happened.
import { Alert, Loader, Stack } from '@mantine/core';
import { useEffect, useRef, useState } from 'react';
import { useSearchParams } from 'react-router';
import { api, call } from '../../api/client';
import { explain } from '../../lib/errors';
import { AuthCard, BackToSignIn } from './AuthCard';

type Outcome = { kind: 'done'; email: string; changed: boolean } | { kind: 'failed'; message: string };

export default function VerifyEmail() {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const sent = useRef(false);
  useEffect(() => {
    // A link works once: React's development double effect must not spend it twice.
    if (!token || sent.current) return;
    sent.current = true;
    call(api.POST('/api/v1/auth/verify-email', { body: { token } }))
      .then((r) => {
        const body = r as { email: string; changed: boolean };
        setOutcome({ kind: 'done', email: body.email, changed: body.changed });
      })
      .catch((err) => setOutcome({ kind: 'failed', message: explain(err) }));
  }, [token]);
  return (
    <AuthCard title="Confirm your e-mail address" footer={<BackToSignIn />}>
      <Stack>
        {!token ? (
          <Alert color="red" role="alert">
            This page needs the link from the e-mail.
          </Alert>
        ) : !outcome ? (
          <Loader aria-label="Confirming" />
        ) : outcome.kind === 'done' ? (
          <Alert color="green" role="status" title="Address confirmed">
            {outcome.changed
              ? `You now sign in with ${outcome.email}.`
              : `${outcome.email} is verified for your account.`}
          </Alert>
        ) : (
          <Alert color="red" role="alert">
            {outcome.message}
          </Alert>
        )}
      </Stack>
    </AuthCard>
  );
}

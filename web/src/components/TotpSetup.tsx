// Authenticator-app enrolment: QR code (and the secret to type), a code to confirm, then the recovery codes.
import { Alert, Button, Code, Image, Loader, PinInput, Stack, Text } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, call } from '../api/client';
import type { TokenResponse } from '../api/session';
import { explain } from '../lib/errors';
import { RecoveryCodes } from './RecoveryCodes';

export function TotpSetup({ onEnabled, onDone }: { onEnabled: (t: TokenResponse) => void; onDone: () => void }) {
  const setup = useMutation({ mutationFn: () => call(api.POST('/api/v1/auth/mfa/setup')) });
  const [code, setCode] = useState('');
  const [codes, setCodes] = useState<string[] | null>(null);
  const enable = useMutation({
    mutationFn: () => call(api.POST('/api/v1/auth/mfa/enable', { body: { code } })),
    onSuccess: (r) => {
      onEnabled(r as TokenResponse);
      setCodes(r.recoveryCodes);
    },
  });
  // Start once when shown (StrictMode runs effects twice; a second setup replaces the first, harmless but wasteful).
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs once on mount by design
  useEffect(() => {
    if (setup.isIdle) setup.mutate();
  }, []);

  if (codes)
    return (
      <Stack>
        <Alert color="green" role="status" title="Two-step verification is on" />
        <RecoveryCodes codes={codes} />
        <Button onClick={onDone}>I have saved my codes</Button>
      </Stack>
    );
  if (setup.isError)
    return (
      <Alert color="red" role="alert">
        {explain(setup.error)}
      </Alert>
    );
  if (!setup.data) return <Loader aria-label="Preparing" />;
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        enable.mutate();
      }}
      noValidate
    >
      <Stack>
        <Text size="sm">
          1. Scan this code with an authenticator app (Google Authenticator, 1Password, Microsoft Authenticator…).
        </Text>
        <Image src={setup.data.qrCodeDataUrl} alt="QR code for your authenticator app" w={200} h={200} />
        <Text size="sm">
          Cannot scan? Type this key: <Code data-testid="totp-secret">{setup.data.secret}</Code>
        </Text>
        <Text size="sm">2. Enter the 6-digit code the app shows.</Text>
        <PinInput
          length={6}
          type="number"
          oneTimeCode
          value={code}
          onChange={setCode}
          role="group"
          aria-label="Verification code"
        />
        {enable.isError && (
          <Alert color="red" role="alert">
            {explain(enable.error)}
          </Alert>
        )}
        <Button type="submit" loading={enable.isPending} disabled={code.length < 6}>
          Turn on
        </Button>
      </Stack>
    </form>
  );
}

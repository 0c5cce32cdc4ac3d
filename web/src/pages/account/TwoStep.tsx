// Two-step verification: the authenticator app (set up, recovery codes, turn off) and text-message codes.
import { Alert, Button, Group, Modal, PasswordInput, PinInput, Stack, Text } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { session, type TokenResponse } from '../../api/session';
import { RecoveryCodes } from '../../components/RecoveryCodes';
import { TotpSetup } from '../../components/TotpSetup';
import { explain } from '../../lib/errors';
import { useMe } from '../../hooks/me';
import { ok, Section } from './Section';
import { SmsFactor } from './SmsFactor';

export function TwoStep() {
  const me = useMe();
  const qc = useQueryClient();
  const [setting, setSetting] = useState(false);
  const [disabling, setDisabling] = useState(false);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [pw, setPw] = useState('');
  const [code, setCode] = useState('');
  const refresh = () => qc.invalidateQueries({ queryKey: ['me'] });
  const regen = useMutation({
    mutationFn: () => call(api.POST('/api/v1/auth/mfa/recovery-codes')),
    onSuccess: (r) => setCodes(r.recoveryCodes),
  });
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
          {enabled && (
            <Text size="sm" c="dimmed">
              (sign-in asks for{' '}
              {(me.data as { mfaMethod?: string } | undefined)?.mfaMethod === 'sms'
                ? 'a text-message code'
                : 'a code from your authenticator app'}
              )
            </Text>
          )}
        </Group>
        {!enabled && !setting && (
          <Group>
            <Button onClick={() => setSetting(true)}>Set up an authenticator app</Button>
          </Group>
        )}
        {setting && (
          <TotpSetup
            onEnabled={(t) => {
              session.signedIn(t);
              void refresh();
            }}
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
        {regen.isError && (
          <Alert color="red" role="alert">
            {explain(regen.error)}
          </Alert>
        )}
        {codes && <RecoveryCodes codes={codes} />}
        <SmsFactor />
      </Stack>
      <Modal opened={disabling} onClose={() => setDisabling(false)} title="Turn off two-step verification">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            disable.mutate();
          }}
        >
          <Stack>
            <PasswordInput
              label="Current password"
              autoComplete="current-password"
              value={pw}
              onChange={(e) => setPw(e.currentTarget.value)}
            />
            <Text size="sm">A code from your authenticator app (or a recovery code):</Text>
            <PinInput
              length={6}
              type="number"
              value={code}
              onChange={setCode}
              role="group"
              aria-label="Verification code"
            />
            {disable.isError && (
              <Alert color="red" role="alert">
                {explain(disable.error)}
              </Alert>
            )}
            <Button type="submit" color="red" loading={disable.isPending}>
              Turn off
            </Button>
          </Stack>
        </form>
      </Modal>
    </Section>
  );
}

// Text-message codes as the second factor: verify a phone number (a code is texted to it), then turn SMS on.
import { Alert, Button, Group, PinInput, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { session, type TokenResponse } from '../../api/session';
import { RecoveryCodes } from '../../components/RecoveryCodes';
import { explain } from '../../lib/errors';
import { useMe } from '../../hooks/me';
import { ok } from './Section';

interface Phone {
  mfaEnabled: boolean;
  mfaMethod: 'totp' | 'sms' | 'passkey' | null;
  phoneVerified: boolean;
  phoneLast4: string | null;
}

export function SmsFactor() {
  const me = useMe();
  const qc = useQueryClient();
  const p = me.data as (typeof me.data & Phone) | undefined;
  const [editing, setEditing] = useState(false);
  const [phone, setPhone] = useState('');
  const [sentTo, setSentTo] = useState<string | null>(null);
  const [code, setCode] = useState('');
  const [codes, setCodes] = useState<string[] | null>(null);
  const refresh = () => qc.invalidateQueries({ queryKey: ['me'] });

  const send = useMutation({
    mutationFn: () => call(api.POST('/api/v1/auth/phone/verify', { body: { phoneNumber: phone.trim() } })),
    onSuccess: (r) => {
      setSentTo(r.phoneLast4);
      setCode('');
    },
  });
  const confirm = useMutation({
    mutationFn: () => call(api.POST('/api/v1/auth/phone/confirm', { body: { code } })),
    onSuccess: (r) => {
      ok(`The phone ending ${r.phoneLast4} is verified.`);
      setEditing(false);
      setSentTo(null);
      setPhone('');
      void refresh();
    },
  });
  const enable = useMutation({
    mutationFn: () => call(api.POST('/api/v1/auth/mfa/sms/enable')),
    onSuccess: (t) => {
      session.signedIn(t as unknown as TokenResponse);
      setCodes(t.recoveryCodes);
      ok('Text-message codes are on. Your other sessions were signed out.');
      void refresh();
    },
  });

  if (!p) return null;
  const smsOn = p.mfaEnabled && p.mfaMethod === 'sms';
  return (
    <Stack gap="xs" component="section" aria-labelledby="sms-title">
      <Title order={3} size="h5" id="sms-title">
        Text-message codes
      </Title>
      {smsOn ? (
        <Text size="sm" data-testid="sms-status">
          On: sign-in texts a code to the phone ending {p.phoneLast4}.
        </Text>
      ) : p.phoneVerified ? (
        <Text size="sm" data-testid="sms-status">
          The phone ending {p.phoneLast4} is verified; text-message codes are off.
        </Text>
      ) : (
        <Text size="sm" c="dimmed" data-testid="sms-status">
          No verified phone. Add one to receive sign-in codes by text message.
        </Text>
      )}
      {!editing && (
        <Group>
          {p.phoneVerified && !smsOn && (
            <Button onClick={() => enable.mutate()} loading={enable.isPending}>
              Use text-message codes
            </Button>
          )}
          <Button variant="default" onClick={() => setEditing(true)}>
            {p.phoneVerified ? 'Change the phone number' : 'Add a phone'}
          </Button>
        </Group>
      )}
      {enable.isError && (
        <Alert color="red" role="alert">
          {explain(enable.error)}
        </Alert>
      )}
      {codes && <RecoveryCodes codes={codes} />}
      {editing && !sentTo && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            send.mutate();
          }}
        >
          <Stack gap="xs">
            <TextInput
              label="Mobile number"
              description="International form: + and the country code, like +1 202 555 0123."
              type="tel"
              autoComplete="tel"
              required
              value={phone}
              onChange={(e) => setPhone(e.currentTarget.value)}
              data-autofocus
            />
            {send.isError && (
              <Alert color="red" role="alert">
                {explain(send.error)}
              </Alert>
            )}
            <Group>
              <Button type="submit" loading={send.isPending} disabled={!phone.trim()}>
                Text me a code
              </Button>
              <Button variant="default" onClick={() => setEditing(false)}>
                Cancel
              </Button>
            </Group>
          </Stack>
        </form>
      )}
      {editing && sentTo && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            confirm.mutate();
          }}
        >
          <Stack gap="xs">
            <Text size="sm">
              We texted a code to the phone ending {sentTo}. Enter it here (it expires in 10 minutes).
            </Text>
            <PinInput
              length={6}
              type="number"
              oneTimeCode
              value={code}
              onChange={setCode}
              aria-label="Code from the text message"
            />
            {confirm.isError && (
              <Alert color="red" role="alert">
                {explain(confirm.error)}
              </Alert>
            )}
            <Group>
              <Button type="submit" loading={confirm.isPending} disabled={code.length < 6}>
                Verify the phone
              </Button>
              <Button variant="default" onClick={() => send.mutate()} loading={send.isPending}>
                Send the code again
              </Button>
              <Button
                variant="default"
                onClick={() => {
                  setSentTo(null);
                  setEditing(false);
                }}
              >
                Cancel
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Stack>
  );
}

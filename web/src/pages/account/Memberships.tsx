// Where you act: the partner and organisations you belong to, and a switch between them. The session moves (new
// tokens, the same sign-in); everything shown before belonged to the old context, so the cache is dropped.
import { Alert, Badge, Button, Modal, PasswordInput, Stack, Table, Text, TextInput } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api, ApiError, call } from '../../api/client';
import { session, type TokenResponse } from '../../api/session';
import { Loaded } from '../../components/Loaded';
import { explain } from '../../lib/errors';
import { ok, Section } from './Section';

interface Membership {
  scope: 'partner' | 'organization';
  partnerId: string;
  partnerName: string;
  orgId: string | null;
  orgName: string | null;
  roleName: string;
  current: boolean;
}

const label = (m: Membership) => (m.scope === 'partner' ? m.partnerName : `${m.orgName} (${m.partnerName})`);

export function Memberships() {
  const qc = useQueryClient();
  const navigate = useNavigate();
  const list = useQuery({
    queryKey: ['memberships'],
    queryFn: async () => (await call(api.GET('/api/v1/auth/memberships'))).data as Membership[],
  });
  const [confirming, setConfirming] = useState<Membership | null>(null);
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const switchTo = useMutation({
    mutationFn: (v: { m: Membership; password?: string; code?: string }) =>
      call(
        api.POST('/api/v1/auth/switch-context', {
          body: {
            ...(v.m.scope === 'partner' ? { partnerId: v.m.partnerId } : { orgId: v.m.orgId! }),
            ...(v.password ? { password: v.password } : {}),
            ...(v.code ? { code: v.code } : {}),
          },
        }),
      ),
    onSuccess: (t, v) => {
      session.signedIn(t as unknown as TokenResponse);
      setConfirming(null);
      setPassword('');
      setCode('');
      qc.clear();
      ok(`You now act in ${label(v.m)}.`);
      navigate('/account', { replace: true });
    },
    onError: (err, v) => {
      // A session begun at an identity provider confirms the account's own password before it leaves that tenant.
      if (
        err instanceof ApiError &&
        (err.code === 'password_confirmation_required' || err.code === 'mfa_code_required')
      )
        setConfirming(v.m);
    },
  });

  return (
    <Section title="Where you act">
      <Loaded
        q={list}
        what="your memberships"
        size="sm"
        isEmpty={(d) => d.length === 0}
        empty="You are not a member of a partner or an organisation yet. Ask an administrator to invite you."
      >
        {(d) => (
          <Stack>
            <Table data-testid="memberships">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Partner or organisation</Table.Th>
                  <Table.Th>Your role</Table.Th>
                  <Table.Th>
                    <span className="gh-visually-hidden">Switch</span>
                  </Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {d.map((m) => (
                  <Table.Tr key={`${m.scope}:${m.orgId ?? m.partnerId}`}>
                    <Table.Td>
                      {label(m)}{' '}
                      <Badge variant="light" color="gray">
                        {m.scope === 'partner' ? 'partner' : 'organisation'}
                      </Badge>
                    </Table.Td>
                    <Table.Td>{m.roleName}</Table.Td>
                    <Table.Td>
                      {m.current ? (
                        <Badge variant="light" color="blue">
                          Current
                        </Badge>
                      ) : (
                        <Button
                          size="xs"
                          variant="default"
                          onClick={() => switchTo.mutate({ m })}
                          loading={switchTo.isPending && switchTo.variables?.m === m}
                          aria-label={`Switch to ${label(m)}`}
                        >
                          Switch
                        </Button>
                      )}
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
            {d.length === 1 && (
              <Text size="sm" c="dimmed">
                This is your only membership.
              </Text>
            )}
            {switchTo.isError && !confirming && (
              <Alert color="red" role="alert">
                {explain(switchTo.error)}
              </Alert>
            )}
          </Stack>
        )}
      </Loaded>
      <Modal opened={!!confirming} onClose={() => setConfirming(null)} title="Confirm your password">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (confirming) switchTo.mutate({ m: confirming, password, code: code.trim() || undefined });
          }}
        >
          <Stack>
            <Text size="sm">
              You signed in through your identity provider. To act in {confirming ? label(confirming) : 'another place'}
              , confirm your Gatehouse password (and a code, if you use two-step verification).
            </Text>
            <PasswordInput
              label="Password"
              autoComplete="current-password"
              required
              value={password}
              onChange={(e) => setPassword(e.currentTarget.value)}
            />
            <TextInput
              label="Verification code (if asked)"
              autoComplete="one-time-code"
              value={code}
              onChange={(e) => setCode(e.currentTarget.value)}
            />
            {switchTo.isError && (
              <Alert color="red" role="alert">
                {explain(switchTo.error)}
              </Alert>
            )}
            <Button type="submit" loading={switchTo.isPending}>
              Switch
            </Button>
          </Stack>
        </form>
      </Modal>
    </Section>
  );
}

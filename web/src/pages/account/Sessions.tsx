// The sessions signed in to your account (browser, system, address, how and when), each with "End session"; ending
// the current one is signing out here. An ended session fails on its next request, on every server.
import { Badge, Button, Group, Stack, Table, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api, call } from '../../api/client';
import { session } from '../../api/session';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { Loaded } from '../../components/Loaded';
import { ok, Section } from './Section';

interface SessionRow {
  id: string;
  createdAt: string;
  lastSeenAt: string;
  ip: string | null;
  browser: string | null;
  os: string | null;
  method: string | null;
  mfa: boolean;
  current: boolean;
}

const METHODS: Record<string, string> = {
  password: 'Password',
  'password+totp': 'Password and authenticator code',
  'password+sms': 'Password and text-message code',
  'password+recovery': 'Password and recovery code',
  'password+passkey': 'Password and passkey',
  passkey: 'Passkey',
  sso: 'Single sign-on',
  'sso+password': 'Single sign-on, then password',
  invite: 'Invitation accepted',
  registration: 'Registration',
};
const device = (s: SessionRow) => [s.browser, s.os].filter(Boolean).join(' on ') || 'Unknown device';

export function Sessions() {
  const qc = useQueryClient();
  const navigate = useNavigate();
  const list = useQuery({
    queryKey: ['sessions'],
    queryFn: async () => (await call(api.GET('/api/v1/auth/sessions'))).data as SessionRow[],
  });
  const [ending, setEnding] = useState<SessionRow | 'others' | null>(null);
  const end = useMutation({
    mutationFn: async (what: SessionRow | 'others') => {
      if (what === 'others') return (await call(api.DELETE('/api/v1/auth/sessions'))).revoked;
      await call(api.DELETE('/api/v1/auth/sessions/{id}', { params: { path: { id: what.id } } }));
      return 1;
    },
    onSuccess: (n, what) => {
      setEnding(null);
      if (what !== 'others' && what.current) {
        session.clear();
        navigate('/login', { replace: true });
        return;
      }
      ok(
        what === 'others' ? `${n} other session${n === 1 ? '' : 's'} ended.` : `The session of ${device(what)} ended.`,
      );
      void qc.invalidateQueries({ queryKey: ['sessions'] });
    },
  });
  const others = list.data?.filter((s) => !s.current).length ?? 0;

  return (
    <Section title="Where you are signed in">
      <Loaded q={list} what="your sessions" size="sm" isEmpty={(d) => d.length === 0} empty="No live session.">
        {(d) => (
          <Stack>
            <Table data-testid="sessions">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Device</Table.Th>
                  <Table.Th>Address</Table.Th>
                  <Table.Th>Signed in</Table.Th>
                  <Table.Th>Last active</Table.Th>
                  <Table.Th>
                    <span className="gh-visually-hidden">End</span>
                  </Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {d.map((s) => (
                  <Table.Tr key={s.id} data-session={s.id}>
                    <Table.Td>
                      <Text size="sm">
                        {device(s)}{' '}
                        {s.current && (
                          <Badge variant="light" color="blue">
                            This browser
                          </Badge>
                        )}
                      </Text>
                      <Text size="xs" c="dimmed">
                        {(s.method && METHODS[s.method]) ?? s.method ?? 'Sign-in'}
                        {s.mfa ? ', with two-step verification' : ''}
                      </Text>
                    </Table.Td>
                    <Table.Td>{s.ip ?? '—'}</Table.Td>
                    <Table.Td>{new Date(s.createdAt).toLocaleString()}</Table.Td>
                    <Table.Td>{new Date(s.lastSeenAt).toLocaleString()}</Table.Td>
                    <Table.Td>
                      <Button
                        size="xs"
                        variant="default"
                        color="red"
                        onClick={() => setEnding(s)}
                        aria-label={
                          s.current
                            ? 'End session: this browser'
                            : `End session: ${device(s)} (${s.ip ?? 'unknown address'}, since ${new Date(s.createdAt).toLocaleString()})`
                        }
                      >
                        End session
                      </Button>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
            {others > 0 && (
              <Group>
                <Button variant="default" color="red" onClick={() => setEnding('others')}>
                  End every other session
                </Button>
              </Group>
            )}
          </Stack>
        )}
      </Loaded>
      <ConfirmDialog
        opened={!!ending}
        title={
          ending === 'others'
            ? 'End every other session?'
            : ending?.current
              ? 'End this browser’s session?'
              : 'End that session?'
        }
        action={`End session${ending === 'others' ? 's' : ''}`}
        pending={end.isPending}
        error={end.error}
        onConfirm={() => ending && end.mutate(ending)}
        onClose={() => setEnding(null)}
      >
        {ending === 'others'
          ? `Your ${others} other session${others === 1 ? '' : 's'} end at once; this browser stays signed in.`
          : ending?.current
            ? 'You will be signed out here.'
            : `${ending ? device(ending) : ''} is signed out at its next request.`}
      </ConfirmDialog>
    </Section>
  );
}

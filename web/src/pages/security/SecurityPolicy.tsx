// The tenant's security policy on one page: two-step verification for all staff (passkeys for administrators),
// allowed factors, session and idle lifetimes, Force MFA on roles, the IP allow-list and the break-glass account; then
// who does not comply yet, with a reminder mail; then the brake on mass actions (Governor.tsx). A partner edits its
// own; an organisation's admin its organisation.
import {
  Alert,
  Button,
  Card,
  Checkbox,
  Group,
  MultiSelect,
  NumberInput,
  Stack,
  Switch,
  Table,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ApiError, call } from '../../api/client';
import { Loaded } from '../../components/Loaded';
import { useCapabilities } from '../../hooks/useCapabilities';
import { useFieldErrors } from '../../hooks/useFieldErrors';
import { explain } from '../../lib/errors';
import { useAllRoles } from '../../hooks/roles';
import { useMe } from '../../hooks/me';
import Governor from './Governor';

interface Security {
  requireMfa?: boolean;
  phishingResistantAdmins?: boolean;
  allowedMfaMethods?: { totp?: boolean; sms?: boolean; passkey?: boolean };
  sessionMaxHours?: number | null;
  idleTimeoutMinutes?: number | null;
  forceMfaRoleIds?: string[];
  ipAllowlist?: string[];
  breakGlassUserId?: string | null;
}
interface Tenant {
  id: string;
  name: string;
  settings: { security?: Security };
}

const FIELD: Record<string, string> = {
  sessionMaxHours: 'sessionMaxHours',
  idleTimeoutMinutes: 'idleTimeoutMinutes',
  ipAllowlist: 'ipAllowlist',
  breakGlassUserId: 'breakGlassUserId',
  forceMfaRoleIds: 'forceMfaRoleIds',
};
/** `settings.security.ipAllowlist.2` → `ipAllowlist`. */
const fieldOf = (path: string) => FIELD[path.replace(/^settings\.security\./, '').split('.')[0] ?? ''] ?? null;

export default function SecurityPolicy() {
  const me = useMe();
  const orgId = me.data?.scope === 'organization' ? me.data.orgId : null;
  const tenant = useQuery({
    queryKey: ['security-policy', orgId],
    enabled: !!me.data,
    queryFn: async () =>
      (orgId
        ? await call(api.GET('/api/v1/orgs/organizations/{id}', { params: { path: { id: orgId } } }))
        : await call(api.GET('/api/v1/orgs/partners/me'))) as Tenant,
  });
  return (
    <Stack>
      <Title order={1} size="h2">
        Security policy
      </Title>
      <Loaded q={tenant} what="the security policy" isEmpty={() => false} empty={null}>
        {(t) => <PolicyForm key={t.id} tenant={t} orgId={orgId} />}
      </Loaded>
      <Compliance orgId={orgId} />
      {me.data && <Governor orgId={orgId} />}
    </Stack>
  );
}

function PolicyForm({ tenant, orgId }: { tenant: Tenant; orgId: string | null }) {
  const qc = useQueryClient();
  const caps = useCapabilities(orgId);
  const editable = caps.allowed(orgId ? 'organization.update' : 'settings.update');
  const why = caps.of(orgId ? 'organization.update' : 'settings.update').reason;
  const sec = tenant.settings.security ?? {};
  const [draft, setDraft] = useState({
    requireMfa: !!sec.requireMfa,
    phishingResistantAdmins: !!sec.phishingResistantAdmins,
    methods: {
      totp: sec.allowedMfaMethods?.totp ?? true,
      sms: sec.allowedMfaMethods?.sms ?? true,
      passkey: sec.allowedMfaMethods?.passkey ?? true,
    },
    sessionMaxHours: sec.sessionMaxHours ?? null,
    idleTimeoutMinutes: sec.idleTimeoutMinutes ?? null,
    forceMfaRoleIds: sec.forceMfaRoleIds ?? [],
    ipAllowlist: (sec.ipAllowlist ?? []).join('\n'),
    breakGlassUserId: sec.breakGlassUserId ?? '',
  });
  const [lockout, setLockout] = useState(false);
  const errors = useFieldErrors(fieldOf);
  const roles = useAllRoles(orgId ?? undefined);
  const change = (patch: Partial<typeof draft>) => {
    errors.clear();
    setLockout(false);
    setDraft({ ...draft, ...patch });
  };
  const save = useMutation({
    mutationFn: (confirmLockout: boolean) => {
      const security: Security = {
        requireMfa: draft.requireMfa,
        phishingResistantAdmins: draft.phishingResistantAdmins,
        allowedMfaMethods: draft.methods,
        sessionMaxHours: draft.sessionMaxHours,
        idleTimeoutMinutes: draft.idleTimeoutMinutes,
        forceMfaRoleIds: draft.forceMfaRoleIds,
        ipAllowlist: draft.ipAllowlist
          .split(/[\s,]+/)
          .map((s) => s.trim())
          .filter(Boolean),
        ...(orgId ? {} : { breakGlassUserId: draft.breakGlassUserId.trim() || null }),
      };
      const body = { settings: { security }, ...(confirmLockout ? { confirmLockout } : {}) } as never;
      return orgId
        ? call(api.PATCH('/api/v1/orgs/organizations/{id}', { params: { path: { id: orgId } }, body }))
        : call(api.PATCH('/api/v1/orgs/partners/me', { body }));
    },
    onSuccess: () => {
      notifications.show({ color: 'green', message: 'Security policy saved.' });
      setLockout(false);
      void qc.invalidateQueries({ queryKey: ['security-policy'] });
      void qc.invalidateQueries({ queryKey: ['compliance'] });
    },
    onError: (err) => {
      if (err instanceof ApiError && err.body.code === 'ip_lockout') setLockout(true);
      else errors.show(err);
    },
  });
  const disabled = !editable;
  return (
    <Card withBorder>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate(false);
        }}
      >
        <Stack>
          {errors.form && (
            <Alert color="red" role="alert">
              {errors.form}
            </Alert>
          )}
          {caps.ready && !editable && why && <Text size="sm">You can read this policy but not change it: {why}</Text>}
          <Switch
            label="Require two-step verification for all staff"
            description="Anyone without a second factor is asked to set one up at their next sign-in."
            checked={draft.requireMfa}
            disabled={disabled}
            onChange={(e) => change({ requireMfa: e.currentTarget.checked })}
          />
          <Switch
            label="Administrators must use a passkey"
            description="Phishing-resistant: for roles that may change users or settings, an authenticator app or text message does not count."
            checked={draft.phishingResistantAdmins}
            disabled={disabled}
            onChange={(e) => change({ phishingResistantAdmins: e.currentTarget.checked })}
          />
          <div>
            <Text size="sm" fw={500}>
              Allowed second factors
            </Text>
            <Group mt={4}>
              {(['totp', 'sms', 'passkey'] as const).map((m) => (
                <Checkbox
                  key={m}
                  label={{ totp: 'Authenticator app', sms: 'Text message', passkey: 'Passkey' }[m]}
                  checked={draft.methods[m]}
                  disabled={disabled}
                  onChange={(e) => change({ methods: { ...draft.methods, [m]: e.currentTarget.checked } })}
                />
              ))}
            </Group>
          </div>
          <MultiSelect
            label="Force two-step verification for these roles"
            description="Built-in roles included; applies to everyone holding them here."
            data={(roles.data ?? []).map((r) => ({ value: r.id, label: r.name }))}
            value={draft.forceMfaRoleIds}
            disabled={disabled}
            error={errors.fields.forceMfaRoleIds}
            onChange={(v) => change({ forceMfaRoleIds: v })}
          />
          <Group grow align="flex-start">
            <NumberInput
              label="Session lifetime (hours)"
              description="Sign in again after this long, however active. Empty: 30 days."
              min={1}
              clampBehavior="none"
              max={720}
              value={draft.sessionMaxHours ?? ''}
              disabled={disabled}
              error={errors.fields.sessionMaxHours}
              onChange={(v) => change({ sessionMaxHours: typeof v === 'number' ? v : null })}
            />
            <NumberInput
              label="Idle lifetime (minutes)"
              description="Signed out after this long without activity. Empty: no idle limit."
              min={5}
              clampBehavior="none"
              max={43200}
              value={draft.idleTimeoutMinutes ?? ''}
              disabled={disabled}
              error={errors.fields.idleTimeoutMinutes}
              onChange={(v) => change({ idleTimeoutMinutes: typeof v === 'number' ? v : null })}
            />
          </Group>
          <Textarea
            label="IP allow-list"
            description="One address or range (CIDR) per line. Empty: any address."
            autosize
            minRows={2}
            value={draft.ipAllowlist}
            disabled={disabled}
            error={errors.fields.ipAllowlist}
            onChange={(e) => change({ ipAllowlist: e.currentTarget.value })}
          />
          {!orgId && (
            <TextInput
              label="Break-glass account (user id)"
              description="A partner member who passes IP allow-lists in an emergency; every use is audited and mailed."
              value={draft.breakGlassUserId}
              disabled={disabled}
              error={errors.fields.breakGlassUserId}
              onChange={(e) => change({ breakGlassUserId: e.currentTarget.value })}
            />
          )}
          {lockout && (
            <Alert color="orange" role="alert" title="This list leaves out your own address">
              <Stack gap="xs">
                <Text size="sm">
                  Saving it would sign you out. Save anyway only if you reach the service from a listed address.
                </Text>
                <Group>
                  <Button variant="default" onClick={() => setLockout(false)}>
                    Cancel
                  </Button>
                  <Button color="red" onClick={() => save.mutate(true)} loading={save.isPending}>
                    Save anyway
                  </Button>
                </Group>
              </Stack>
            </Alert>
          )}
          {editable && (
            <Group>
              <Button type="submit" loading={save.isPending} disabled={save.isPending}>
                Save security policy
              </Button>
            </Group>
          )}
        </Stack>
      </form>
    </Card>
  );
}

interface Missing {
  userId: string;
  name: string;
  email: string;
  roleName: string;
  missing: 'second_factor' | 'passkey';
}

function Compliance({ orgId }: { orgId: string | null }) {
  const caps = useCapabilities(orgId);
  const list = useQuery({
    queryKey: ['compliance', orgId],
    queryFn: async () =>
      (await call(api.GET('/api/v1/access/compliance', { params: { query: orgId ? { orgId } : {} } })))
        .data as Missing[],
  });
  const remind = useMutation({
    mutationFn: () => call(api.POST('/api/v1/access/compliance/reminders', { body: orgId ? { orgId } : {} })),
    onSuccess: (r) => {
      const sent = (r as { reminded: string[]; skipped: string[] }).reminded.length;
      notifications.show({
        color: 'green',
        message: sent
          ? `Reminder sent to ${sent} ${sent === 1 ? 'person' : 'people'}.`
          : 'Everyone was reminded in the last day.',
      });
    },
  });
  return (
    <Stack gap="xs">
      <Group justify="space-between">
        <Title order={2} size="h3">
          Not yet compliant
        </Title>
        {caps.allowed('users.update') && !!list.data?.length && (
          <Button size="xs" onClick={() => remind.mutate()} loading={remind.isPending}>
            Send a reminder
          </Button>
        )}
      </Group>
      {remind.isError && (
        <Alert color="red" role="alert">
          {explain(remind.error)}
        </Alert>
      )}
      <Loaded q={list} what="who does not comply" isEmpty={(d) => d.length === 0} empty="Everyone meets the policy.">
        {(d) => (
          <Table data-testid="non-compliant">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Role</Table.Th>
                <Table.Th>Missing</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {d.map((m) => (
                <Table.Tr key={m.userId}>
                  <Table.Td>
                    {m.name || m.email}
                    <Text size="xs" c="dimmed">
                      {m.email}
                    </Text>
                  </Table.Td>
                  <Table.Td>{m.roleName}</Table.Td>
                  <Table.Td>{m.missing === 'passkey' ? 'A passkey' : 'A second factor'}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Loaded>
    </Stack>
  );
}

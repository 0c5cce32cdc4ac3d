// Tenants: the partner's organisations, and in each its sites (with their time zone), device groups (with their
// site) and devices (Devices.tsx); create, rename, delete;
// the organisation's security settings (require MFA, allowed methods).
import {
  Alert,
  Button,
  Card,
  Checkbox,
  Group,
  Modal,
  NavLink,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { Loaded } from '../../components/Loaded';
import { explain } from '../../lib/errors';
import { can, useMe } from '../../hooks/me';
import { Devices, useDeviceGroups, useSites } from './Devices';
import { useCapabilities } from '../../hooks/useCapabilities';
import { type Choice, NameDialog } from './NameDialog';

interface Named {
  id: string;
  name: string;
}
interface Org extends Named {
  slug: string;
  settings: {
    security?: { requireMfa?: boolean; allowedMfaMethods?: { totp?: boolean; sms?: boolean; passkey?: boolean } };
  } & Record<string, unknown>;
}

const done = (message: string) => notifications.show({ color: 'green', message });
const failed = (err: unknown) => notifications.show({ color: 'red', title: 'Not done', message: explain(err) });

export default function Tenants() {
  const me = useMe();
  const qc = useQueryClient();
  const orgs = useQuery({
    queryKey: ['organizations'],
    queryFn: async () =>
      (await call(api.GET('/api/v1/orgs/organizations', { params: { query: { limit: 200 } } }))).data as Org[],
  });
  const [selected, setSelected] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const org = orgs.data?.find((o) => o.id === (selected ?? me.data?.orgId)) ?? orgs.data?.[0];
  const write = can(me.data, 'organizations:write');
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1} size="h2">
          Tenants
        </Title>
        {write && me.data?.scope === 'partner' && <Button onClick={() => setCreating(true)}>New organisation</Button>}
      </Group>
      <Loaded
        q={orgs}
        what="organisations"
        isEmpty={(d) => d.length === 0}
        empty="No organisation yet. Create the first one for a customer."
      >
        {(d) => (
          <div className="gh-master-detail">
            <div>
              <Card withBorder p={4} component="nav" aria-label="Organisations">
                {d.map((o) => (
                  <NavLink
                    key={o.id}
                    label={o.name}
                    variant="filled"
                    active={o.id === org?.id}
                    onClick={() => setSelected(o.id)}
                    component="button"
                  />
                ))}
              </Card>
            </div>
            <div>{org && <OrgDetail key={org.id} org={org} write={write} />}</div>
          </div>
        )}
      </Loaded>
      <NameDialog
        title="New organisation"
        opened={creating}
        onClose={() => setCreating(false)}
        onSave={async (name) => {
          const o = (await call(api.POST('/api/v1/orgs/organizations', { body: { name } }))) as Org;
          await qc.invalidateQueries({ queryKey: ['organizations'] });
          setSelected(o.id);
          done(`Organisation “${name}” created.`);
        }}
      />
    </Stack>
  );
}

function OrgDetail({ org, write }: { org: Org; write: boolean }) {
  const qc = useQueryClient();
  const [renaming, setRenaming] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [typed, setTyped] = useState('');
  const caps = useCapabilities(org.id);
  const close = () => {
    setDeleting(false);
    setTyped('');
  };
  const remove = useMutation({
    mutationFn: () => call(api.DELETE('/api/v1/orgs/organizations/{id}', { params: { path: { id: org.id } } })),
    onSuccess: () => {
      done(`Organisation “${org.name}” deleted.`);
      close();
      void qc.invalidateQueries({ queryKey: ['organizations'] });
    },
  });
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2} size="h3">
          {org.name}
        </Title>
        <Group gap="xs">
          {caps.allowed('organization.update') && (
            <Button size="xs" variant="default" onClick={() => setRenaming(true)}>
              Rename
            </Button>
          )}
          {caps.allowed('organization.delete') && (
            <Button size="xs" variant="default" color="red" onClick={() => setDeleting(true)}>
              Delete organisation
            </Button>
          )}
        </Group>
      </Group>
      <Sites orgId={org.id} />
      <DeviceGroups orgId={org.id} />
      <Section title="Devices">
        <Devices orgId={org.id} />
      </Section>
      <Security org={org} write={write} />
      <NameDialog
        title="Rename organisation"
        initial={org.name}
        opened={renaming}
        onClose={() => setRenaming(false)}
        onSave={async (name) => {
          await call(
            api.PATCH('/api/v1/orgs/organizations/{id}', { params: { path: { id: org.id } }, body: { name } }),
          );
          await qc.invalidateQueries({ queryKey: ['organizations'] });
          done('Renamed.');
        }}
      />
      <Modal opened={deleting} onClose={close} title={`Delete “${org.name}”?`}>
        <Stack>
          {remove.isError && (
            <Alert color="red" role="alert">
              {explain(remove.error)}
            </Alert>
          )}
          <Text size="sm">
            This cannot be undone. Everything of this customer goes with it: its sites, device groups and devices, its
            people's memberships, its roles, enrollment keys and contacts.
          </Text>
          <TextInput
            label={`Type “${org.name}” to confirm`}
            value={typed}
            onChange={(e) => setTyped(e.currentTarget.value)}
            autoComplete="off"
          />
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>
              Cancel
            </Button>
            <Button
              color="red"
              onClick={() => remove.mutate()}
              loading={remove.isPending}
              disabled={typed.trim() !== org.name}
            >
              Delete organisation
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Stack>
  );
}

function Section({
  title,
  onAdd,
  addLabel,
  children,
}: {
  title: string;
  onAdd?: () => void;
  addLabel?: string;
  children: React.ReactNode;
}) {
  return (
    <Card withBorder component="section" aria-label={title}>
      <Group justify="space-between" mb="xs">
        <Title order={3} size="h4">
          {title}
        </Title>
        {onAdd && (
          <Button size="xs" onClick={onAdd}>
            {addLabel}
          </Button>
        )}
      </Group>
      {children}
    </Card>
  );
}

function NamedTable({
  rows,
  empty,
  onRename,
  onDelete,
  label,
  detail,
}: {
  rows: Named[];
  empty: string;
  label: string;
  /** A second cell of the row (a site's time zone, a group's site). */
  detail?: (r: Named) => string;
  onRename?: (r: Named) => void;
  onDelete?: (r: Named) => void;
}) {
  if (rows.length === 0)
    return (
      <Text size="sm" c="dimmed">
        {empty}
      </Text>
    );
  return (
    <Table>
      <Table.Tbody>
        {rows.map((r) => (
          <Table.Tr key={r.id}>
            <Table.Td>{r.name}</Table.Td>
            {detail && <Table.Td>{detail(r)}</Table.Td>}
            <Table.Td w={200}>
              <Group gap="xs" justify="end">
                {onRename && (
                  <Button
                    size="xs"
                    variant="default"
                    onClick={() => onRename(r)}
                    aria-label={`Rename ${label} ${r.name}`}
                  >
                    Rename
                  </Button>
                )}
                {onDelete && (
                  <Button
                    size="xs"
                    variant="default"
                    color="red"
                    onClick={() => onDelete(r)}
                    aria-label={`Delete ${label} ${r.name}`}
                  >
                    Delete
                  </Button>
                )}
              </Group>
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

/** Every IANA time zone the browser knows (UTC first). */
const TIMEZONES = ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC')];
const timezoneChoice = (initial: string): Choice => ({
  field: 'timezone',
  label: 'Time zone',
  description: 'Maintenance windows and reports of the site use it.',
  data: TIMEZONES.map((z) => ({ value: z, label: z })),
  initial,
});

function Sites({ orgId }: { orgId: string }) {
  const me = useMe();
  const qc = useQueryClient();
  const key = ['sites', orgId];
  const sites = useSites(orgId);
  const zoneOf = (id: string) => sites.data?.find((x) => x.id === id)?.timezone ?? 'UTC';
  const [creating, setCreating] = useState(false);
  const [renaming, setRenaming] = useState<Named | null>(null);
  const write = can(me.data, 'sites:write');
  const del = async (s: Named) => {
    try {
      await call(api.DELETE('/api/v1/orgs/sites/{id}', { params: { path: { id: s.id } } }));
      done(`Site “${s.name}” deleted.`);
      void qc.invalidateQueries({ queryKey: key });
    } catch (err) {
      failed(err);
    }
  };
  return (
    <Section title="Sites" onAdd={write ? () => setCreating(true) : undefined} addLabel="New site">
      {sites.isError ? (
        <Alert color="red" role="alert">
          {explain(sites.error)}
        </Alert>
      ) : (
        <NamedTable
          label="site"
          rows={sites.data ?? []}
          detail={(r) => zoneOf(r.id)}
          empty={sites.isPending ? 'Loading…' : 'No site yet.'}
          onRename={write ? setRenaming : undefined}
          onDelete={can(me.data, 'sites:delete') ? (s) => void del(s) : undefined}
        />
      )}
      <NameDialog
        title="New site"
        opened={creating}
        onClose={() => setCreating(false)}
        choice={timezoneChoice('UTC')}
        onSave={async (name, timezone) => {
          await call(api.POST('/api/v1/orgs/sites', { body: { orgId, name, timezone: (timezone ?? 'UTC') as 'UTC' } }));
          await qc.invalidateQueries({ queryKey: key });
          done(`Site “${name}” created.`);
        }}
      />
      {renaming && (
        <NameDialog
          title="Edit site"
          initial={renaming.name}
          opened
          onClose={() => setRenaming(null)}
          choice={timezoneChoice(zoneOf(renaming.id))}
          onSave={async (name, timezone) => {
            await call(
              api.PATCH('/api/v1/orgs/sites/{id}', {
                params: { path: { id: renaming.id } },
                body: { name, timezone: (timezone ?? 'UTC') as 'UTC' },
              }),
            );
            await qc.invalidateQueries({ queryKey: key });
            done('Renamed.');
          }}
        />
      )}
    </Section>
  );
}

function DeviceGroups({ orgId }: { orgId: string }) {
  const me = useMe();
  const qc = useQueryClient();
  const key = ['device-groups', orgId];
  const groups = useDeviceGroups(orgId);
  const sites = useSites(orgId);
  const siteOf = (id: string) => groups.data?.find((g) => g.id === id)?.siteId ?? null;
  const siteChoice = (initial: string | null): Choice => ({
    field: 'siteId',
    label: 'Site',
    description: 'A group of a site holds only that site’s devices. Leave empty for a group across sites.',
    data: (sites.data ?? []).map((x) => ({ value: x.id, label: x.name })),
    initial,
    clearable: true,
    placeholder: 'Across sites',
  });
  const [creating, setCreating] = useState(false);
  const [renaming, setRenaming] = useState<Named | null>(null);
  const write = can(me.data, 'sites:write');
  const del = async (g: Named) => {
    try {
      await call(api.DELETE('/api/v1/device-groups/{id}', { params: { path: { id: g.id } } }));
      done(`Device group “${g.name}” deleted.`);
      void qc.invalidateQueries({ queryKey: key });
    } catch (err) {
      failed(err);
    }
  };
  return (
    <Section title="Device groups" onAdd={write ? () => setCreating(true) : undefined} addLabel="New device group">
      {groups.isError ? (
        <Alert color="red" role="alert">
          {explain(groups.error)}
        </Alert>
      ) : (
        <NamedTable
          label="device group"
          rows={groups.data ?? []}
          detail={(r) => {
            const site = siteOf(r.id);
            return site ? (sites.data?.find((x) => x.id === site)?.name ?? 'A site') : 'Across sites';
          }}
          empty={groups.isPending ? 'Loading…' : 'No device group yet.'}
          onRename={write ? setRenaming : undefined}
          onDelete={can(me.data, 'sites:delete') ? (g) => void del(g) : undefined}
        />
      )}
      <NameDialog
        title="New device group"
        opened={creating}
        onClose={() => setCreating(false)}
        choice={siteChoice(null)}
        onSave={async (name, siteId) => {
          await call(api.POST('/api/v1/device-groups', { body: { orgId, name, siteId } }));
          await qc.invalidateQueries({ queryKey: key });
          done(`Device group “${name}” created.`);
        }}
      />
      {renaming && (
        <NameDialog
          title="Edit device group"
          initial={renaming.name}
          opened
          onClose={() => setRenaming(null)}
          choice={siteChoice(siteOf(renaming.id))}
          onSave={async (name, siteId) => {
            await call(
              api.PATCH('/api/v1/device-groups/{id}', {
                params: { path: { id: renaming.id } },
                body: { name, siteId },
              }),
            );
            await qc.invalidateQueries({ queryKey: key });
            done('Renamed.');
          }}
        />
      )}
    </Section>
  );
}

function Security({ org, write }: { org: Org; write: boolean }) {
  const qc = useQueryClient();
  const sec = org.settings?.security ?? {};
  const [requireMfa, setRequireMfa] = useState(!!sec.requireMfa);
  const [methods, setMethods] = useState({
    totp: sec.allowedMfaMethods?.totp ?? true,
    sms: sec.allowedMfaMethods?.sms ?? true,
    passkey: sec.allowedMfaMethods?.passkey ?? true,
  });
  const save = useMutation({
    mutationFn: () =>
      call(
        api.PATCH('/api/v1/orgs/organizations/{id}', {
          params: { path: { id: org.id } },
          body: {
            settings: { ...org.settings, security: { ...sec, requireMfa, allowedMfaMethods: methods } },
          } as never,
        }),
      ),
    onSuccess: () => {
      done('Security settings saved.');
      void qc.invalidateQueries({ queryKey: ['organizations'] });
    },
  });
  return (
    <Section title="Security">
      <Stack gap="xs">
        <Checkbox
          label="Require two-step verification for every user"
          checked={requireMfa}
          onChange={(e) => setRequireMfa(e.currentTarget.checked)}
          disabled={!write}
        />
        <Text size="sm">Allowed methods:</Text>
        <Group>
          {(['totp', 'sms', 'passkey'] as const).map((m) => (
            <Checkbox
              key={m}
              label={{ totp: 'Authenticator app', sms: 'Text message', passkey: 'Passkey' }[m]}
              checked={methods[m]}
              onChange={(e) => setMethods({ ...methods, [m]: e.currentTarget.checked })}
              disabled={!write}
            />
          ))}
        </Group>
        {save.isError && (
          <Alert color="red" role="alert">
            {explain(save.error)}
          </Alert>
        )}
        {write && (
          <Group>
            <Button onClick={() => save.mutate()} loading={save.isPending}>
              Save security settings
            </Button>
          </Group>
        )}
      </Stack>
    </Section>
  );
}

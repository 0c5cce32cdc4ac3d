// The devices of an organisation: site, groups, last seen, agent version and OS; filtered by site, group or host name;
// refreshed every few seconds so a newly enrolled device shows within seconds of its first report; selected devices
// move to a site or a device group in one step (the API checks every id against the caller's reach).
import { Alert, Button, Checkbox, Group, Modal, Select, Stack, Table, Text, TextInput } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { explain } from '../../lib/errors';
import { useCapabilities } from '../../hooks/useCapabilities';

interface Device {
  id: string;
  siteId: string;
  hostname: string;
  displayName: string | null;
  osType: string;
  osVersion: string | null;
  agentVersion: string | null;
  deviceGroupIds: string[];
  lastSeenAt: string | null;
}
interface Site {
  id: string;
  name: string;
}
interface DeviceGroup {
  id: string;
  name: string;
  siteId: string | null;
}

/** How often the list asks again: a device enrolled a moment ago shows within this time. */
const REFRESH_MS = 5000;
const OS_NAMES: Record<string, string> = { windows: 'Windows', macos: 'macOS', linux: 'Linux' };

export function useSites(orgId: string) {
  return useQuery({
    queryKey: ['sites', orgId],
    queryFn: async () =>
      (await call(api.GET('/api/v1/orgs/sites', { params: { query: { orgId, limit: 200 } } }))).data as (Site & {
        timezone: string;
      })[],
  });
}

export function useDeviceGroups(orgId: string) {
  return useQuery({
    queryKey: ['device-groups', orgId],
    queryFn: async () =>
      (await call(api.GET('/api/v1/device-groups', { params: { query: { orgId, limit: 200 } } })))
        .data as DeviceGroup[],
  });
}

function lastSeen(iso: string | null) {
  if (!iso) return 'Never';
  const seconds = Math.max(0, Math.round((Date.now() - new Date(iso).getTime()) / 1000));
  if (seconds < 60) return 'Just now';
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  return new Date(iso).toLocaleString();
}

export function Devices({ orgId }: { orgId: string }) {
  const write = useCapabilities(orgId).allowed('devices.update');
  const sites = useSites(orgId);
  const groups = useDeviceGroups(orgId);
  const [siteId, setSiteId] = useState<string | null>(null);
  const [groupId, setGroupId] = useState<string | null>(null);
  const [search, setSearch] = useState('');
  const [selected, setSelected] = useState<string[]>([]);
  const [moving, setMoving] = useState(false);
  const devices = useQuery({
    queryKey: ['devices', orgId, siteId, groupId, search.trim()],
    refetchInterval: REFRESH_MS,
    queryFn: async () =>
      (
        await call(
          api.GET('/api/v1/devices', {
            params: {
              query: {
                orgId,
                siteId: siteId ?? undefined,
                deviceGroupId: groupId ?? undefined,
                search: search.trim() || undefined,
                limit: 200,
              },
            },
          }),
        )
      ).data as Device[],
  });
  const siteName = (id: string) => sites.data?.find((s) => s.id === id)?.name ?? '—';
  const groupNames = (ids: string[]) =>
    ids.map((id) => groups.data?.find((g) => g.id === id)?.name ?? 'A group').join(', ') || '—';
  const rows = devices.data ?? [];
  const shown = selected.filter((id) => rows.some((d) => d.id === id));
  const toggle = (id: string, on: boolean) => setSelected((s) => (on ? [...s, id] : s.filter((x) => x !== id)));
  const filtered = !!(siteId || groupId || search.trim());

  return (
    <Stack gap="xs">
      <Group align="end" gap="xs">
        <Select
          label="Site"
          placeholder="All sites"
          data={(sites.data ?? []).map((s) => ({ value: s.id, label: s.name }))}
          value={siteId}
          onChange={setSiteId}
          clearable
          w={170}
        />
        <Select
          label="Device group"
          placeholder="All groups"
          data={(groups.data ?? []).map((g) => ({ value: g.id, label: g.name }))}
          value={groupId}
          onChange={setGroupId}
          clearable
          w={170}
        />
        <TextInput
          label="Host name starts with"
          value={search}
          onChange={(e) => setSearch(e.currentTarget.value)}
          w={170}
        />
        {write && (
          <Button variant="default" disabled={shown.length === 0} onClick={() => setMoving(true)}>
            {shown.length ? `Move ${shown.length} selected…` : 'Move selected…'}
          </Button>
        )}
      </Group>
      {devices.isError ? (
        <Alert color="red" role="alert">
          {explain(devices.error)}
        </Alert>
      ) : rows.length === 0 ? (
        <Text size="sm" c="dimmed">
          {devices.isPending
            ? 'Loading…'
            : filtered
              ? 'No device matches these filters.'
              : 'No device yet. Devices appear here within seconds of an agent enrolling with an enrollment key.'}
        </Text>
      ) : (
        <Table striped data-testid="devices">
          <Table.Thead>
            <Table.Tr>
              {write && (
                <Table.Th>
                  <Checkbox
                    aria-label="Select every device shown"
                    checked={shown.length === rows.length}
                    indeterminate={shown.length > 0 && shown.length < rows.length}
                    onChange={(e) => setSelected(e.currentTarget.checked ? rows.map((d) => d.id) : [])}
                  />
                </Table.Th>
              )}
              <Table.Th>Host</Table.Th>
              <Table.Th>Site</Table.Th>
              <Table.Th>Groups</Table.Th>
              <Table.Th>Last seen</Table.Th>
              <Table.Th>Agent</Table.Th>
              <Table.Th>OS</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((d) => {
              const name = d.displayName ?? d.hostname;
              return (
                <Table.Tr key={d.id}>
                  {write && (
                    <Table.Td>
                      <Checkbox
                        aria-label={`Select ${name}`}
                        checked={shown.includes(d.id)}
                        onChange={(e) => toggle(d.id, e.currentTarget.checked)}
                      />
                    </Table.Td>
                  )}
                  <Table.Td>{name}</Table.Td>
                  <Table.Td>{siteName(d.siteId)}</Table.Td>
                  <Table.Td>{groupNames(d.deviceGroupIds)}</Table.Td>
                  <Table.Td>{lastSeen(d.lastSeenAt)}</Table.Td>
                  <Table.Td>{d.agentVersion ?? '—'}</Table.Td>
                  <Table.Td>
                    {OS_NAMES[d.osType] ?? d.osType}
                    {d.osVersion ? ` · ${d.osVersion}` : ''}
                  </Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      )}
      {moving && (
        <MoveDevices
          deviceIds={shown}
          sites={sites.data ?? []}
          groups={groups.data ?? []}
          onClose={() => setMoving(false)}
          onMoved={() => setSelected([])}
        />
      )}
    </Stack>
  );
}

const KEEP = 'keep';
const NONE = 'none';

function MoveDevices({
  deviceIds,
  sites,
  groups,
  onClose,
  onMoved,
}: {
  deviceIds: string[];
  sites: Site[];
  groups: DeviceGroup[];
  onClose: () => void;
  onMoved: () => void;
}) {
  const qc = useQueryClient();
  const [siteId, setSiteId] = useState<string | null>(null);
  const [group, setGroup] = useState<string>(KEEP);
  const move = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/v1/devices/move', {
          body: {
            deviceIds,
            siteId: siteId ?? undefined,
            deviceGroupId: group === KEEP ? undefined : group === NONE ? null : group,
          },
        }),
      ),
    onSuccess: (r) => {
      notifications.show({ color: 'green', message: `${(r as { moved: number }).moved} device(s) moved.` });
      void qc.invalidateQueries({ queryKey: ['devices'] });
      onMoved();
      onClose();
    },
  });
  const groupChoices = [
    { value: KEEP, label: 'Keep their groups' },
    { value: NONE, label: 'Out of every group' },
    ...groups.filter((g) => !g.siteId || !siteId || g.siteId === siteId).map((g) => ({ value: g.id, label: g.name })),
  ];
  return (
    <Modal opened onClose={onClose} title={`Move ${deviceIds.length} device${deviceIds.length === 1 ? '' : 's'}`}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          move.mutate();
        }}
      >
        <Stack>
          {move.isError && (
            <Alert color="red" role="alert">
              {explain(move.error)}
            </Alert>
          )}
          <Select
            label="To site"
            placeholder="Stay on their site"
            data={sites.map((s) => ({ value: s.id, label: s.name }))}
            value={siteId}
            onChange={setSiteId}
            clearable
            data-autofocus
          />
          <Select
            label="Device group"
            description="The devices leave the groups you can see and join this one."
            data={groupChoices}
            value={group}
            onChange={(v) => v && setGroup(v)}
            allowDeselect={false}
          />
          <Group justify="end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={move.isPending} disabled={!siteId && group === KEEP}>
              Move
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

// Partner-wide configuration: policies, alert templates, patch policies and maintenance windows, owned by the
// partner (in force in every organisation) or by one organisation; create, edit, delete.
import {
  Alert,
  Button,
  Group,
  JsonInput,
  Modal,
  MultiSelect,
  NumberInput,
  Select,
  Stack,
  Table,
  TagsInput,
  Text,
  TextInput,
} from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { CursorPager, useCursorList } from '../../components/CursorPager';
import { ConfirmDialog, useConfirmed } from '../../components/ConfirmDialog';
import { DataTable } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { TenantSelect } from '../../components/TenantSelect';
import { explain } from '../../lib/errors';
import { can, useMe } from '../../hooks/me';
import { useOrganizations } from '../../hooks/organizations';
import { done, when } from './common';

type Kind = 'policy' | 'alert_template' | 'patch_policy' | 'maintenance_window';
const KINDS: { value: Kind; label: string }[] = [
  { value: 'policy', label: 'Policy' },
  { value: 'alert_template', label: 'Alert template' },
  { value: 'patch_policy', label: 'Patch policy' },
  { value: 'maintenance_window', label: 'Maintenance window' },
];
const kindName = (k: Kind) => KINDS.find((x) => x.value === k)!.label;
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const ZONES = ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC')];

interface Item {
  id: string;
  orgId: string | null;
  kind: Kind;
  name: string;
  description: string | null;
  body: Record<string, unknown>;
  source: 'partner' | 'organization';
  updatedAt: string;
}

function summary(i: Item): string {
  const b = i.body as Record<string, any>;
  if (i.kind === 'maintenance_window')
    return `${(b.daysOfWeek as number[]).map((d) => DAYS[d]!.slice(0, 3)).join(', ')} at ${b.start} for ${b.durationMinutes} min (${b.timezone})`;
  if (i.kind === 'patch_policy')
    return `auto-approve ${(b.autoApprove as string[]).join(', ') || 'nothing'}; reboot ${String(b.rebootBehavior).replace('_', ' ')}; defer ${b.deferDays} days`;
  if (i.kind === 'alert_template') return `${b.severity}: ${b.condition}`;
  return `${Object.keys(b.settings ?? {}).length} setting(s)`;
}

export default function ConfigItems() {
  const me = useMe();
  const qc = useQueryClient();
  const partner = me.data?.scope === 'partner';
  const orgs = useOrganizations(partner);
  const [orgId, setOrgId] = useState<string | null>(null);
  const [kind, setKind] = useState<Kind | null>(null);
  const { pages, list } = useCursorList(
    ['config-items', orgId, kind],
    (cursor) =>
      call(
        api.GET('/api/v1/config-items', {
          params: { query: { orgId: orgId ?? undefined, kind: kind ?? undefined, cursor, limit: 50 } },
        }),
      ) as Promise<{ data: Item[]; nextCursor: string | null }>,
  );
  const [editing, setEditing] = useState<Item | 'new' | null>(null);
  const remove = useConfirmed(
    (i: Item) => call(api.DELETE('/api/v1/config-items/{id}', { params: { path: { id: i.id } } })),
    (i) => {
      done(`“${i.name}” deleted.`);
      void qc.invalidateQueries({ queryKey: ['config-items'] });
    },
  );
  const write = can(me.data, 'automations:write');
  const del = can(me.data, 'automations:delete');
  const reset = pages.reset;

  return (
    <Stack>
      <Group align="end" justify="space-between">
        <Group align="end">
          {partner && (
            <TenantSelect
              label="Configuration of"
              partnerLabel="The partner (every organisation)"
              orgLabel={(name) => `${name} (in force there)`}
              value={orgId}
              onChange={(v) => {
                setOrgId(v);
                reset();
              }}
              w={300}
            />
          )}
          <Select
            label="Kind"
            data={KINDS}
            value={kind}
            onChange={(v) => {
              setKind(v as Kind | null);
              reset();
            }}
            clearable
            placeholder="Every kind"
            w={220}
          />
        </Group>
        {write && <Button onClick={() => setEditing('new')}>New item</Button>}
      </Group>
      <Loaded
        q={list}
        what="configuration"
        isEmpty={(d) => d.data.length === 0}
        empty="Nothing configured yet. Add a maintenance window, a patch policy, an alert template or a policy."
      >
        {(d) => (
          <DataTable
            testId="config-items"
            columns={['Name', 'Kind', 'Settings', 'In force in', 'Changed']}
            hidden="Actions"
            rows={d.data}
          >
            {(i) => (
              <>
                <Table.Td>{i.name}</Table.Td>
                <Table.Td>{kindName(i.kind)}</Table.Td>
                <Table.Td>
                  <Text size="sm">{summary(i)}</Text>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">
                    {i.source === 'partner'
                      ? 'Every organisation'
                      : (orgs.data?.find((o) => o.id === i.orgId)?.name ?? 'One organisation')}
                  </Text>
                </Table.Td>
                <Table.Td>{when(i.updatedAt)}</Table.Td>
                <Table.Td>
                  <Group gap="xs" wrap="nowrap">
                    {write && (
                      <Button size="xs" variant="default" onClick={() => setEditing(i)} aria-label={`Edit ${i.name}`}>
                        Edit
                      </Button>
                    )}
                    {del && (
                      <Button
                        size="xs"
                        variant="default"
                        color="red"
                        onClick={() => remove.ask(i)}
                        aria-label={`Delete ${i.name}`}
                      >
                        Delete
                      </Button>
                    )}
                  </Group>
                </Table.Td>
              </>
            )}
          </DataTable>
        )}
      </Loaded>
      <CursorPager pages={pages} next={list.data?.nextCursor} />
      {editing && (
        <ItemEditor
          key={editing === 'new' ? 'new' : editing.id}
          item={editing === 'new' ? null : editing}
          orgId={partner ? orgId : (me.data?.orgId ?? null)}
          onClose={() => setEditing(null)}
        />
      )}
      <ConfirmDialog {...remove.dialog} title={`Delete “${remove.target?.name ?? ''}”?`} action="Delete">
        It stops applying {remove.target?.source === 'partner' ? 'in every organisation' : 'in its organisation'}.
      </ConfirmDialog>
    </Stack>
  );
}

function ItemEditor({ item, orgId, onClose }: { item: Item | null; orgId: string | null; onClose: () => void }) {
  const qc = useQueryClient();
  const b = (item?.body ?? {}) as Record<string, any>;
  const [kind, setKind] = useState<Kind>(item?.kind ?? 'maintenance_window');
  const [name, setName] = useState(item?.name ?? '');
  const [description, setDescription] = useState(item?.description ?? '');
  // Maintenance window
  const [timezone, setTimezone] = useState<string>(b.timezone ?? 'UTC');
  const [start, setStart] = useState<string>(b.start ?? '02:00');
  const [duration, setDuration] = useState<number | string>(b.durationMinutes ?? 120);
  const [days, setDays] = useState<string[]>(((b.daysOfWeek as number[] | undefined) ?? [6]).map(String));
  // Patch policy
  const [autoApprove, setAutoApprove] = useState<string[]>(b.autoApprove ?? ['critical']);
  const [reboot, setReboot] = useState<string>(b.rebootBehavior ?? 'if_required');
  const [defer, setDefer] = useState<number | string>(b.deferDays ?? 0);
  // Alert template
  const [condition, setCondition] = useState<string>(b.condition ?? '');
  const [severity, setSeverity] = useState<string>(b.severity ?? 'warning');
  const [notify, setNotify] = useState<string[]>(b.notify ?? []);
  // Policy
  const [settings, setSettings] = useState<string>(JSON.stringify(b.settings ?? {}, null, 2));

  const bodyOf = (): Record<string, unknown> => {
    if (kind === 'maintenance_window')
      return { timezone, start, durationMinutes: Number(duration), daysOfWeek: days.map(Number).sort() };
    if (kind === 'patch_policy') return { autoApprove, rebootBehavior: reboot, deferDays: Number(defer) };
    if (kind === 'alert_template') return { condition, severity, notify };
    try {
      return { settings: JSON.parse(settings) as unknown };
    } catch {
      throw new Error('The settings are not valid JSON.');
    }
  };
  const save = useMutation({
    mutationFn: () => {
      const body = bodyOf() as never;
      return item
        ? call(
            api.PATCH('/api/v1/config-items/{id}', {
              params: { path: { id: item.id } },
              body: { name: name.trim(), description: description.trim() || null, body },
            }),
          )
        : call(
            api.POST('/api/v1/config-items', {
              body: {
                kind,
                name: name.trim(),
                description: description.trim() || null,
                body,
                ...(orgId ? { orgId } : {}),
              } as never,
            }),
          );
    },
    onSuccess: () => {
      done(item ? 'Saved.' : `“${name.trim()}” created.`);
      void qc.invalidateQueries({ queryKey: ['config-items'] });
      onClose();
    },
  });
  return (
    <Modal opened onClose={onClose} title={item ? `Edit “${item.name}”` : 'New configuration item'} size="lg">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate();
        }}
      >
        <Stack>
          {!item && (
            <Select
              label="Kind"
              data={KINDS}
              value={kind}
              onChange={(v) => v && setKind(v as Kind)}
              allowDeselect={false}
            />
          )}
          {!item && (
            <Text size="sm">
              {orgId
                ? 'It applies in the organisation chosen in “Configuration of”.'
                : 'It applies in every organisation of the partner.'}
            </Text>
          )}
          <TextInput
            label="Name"
            required
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            data-autofocus
          />
          <TextInput label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
          {kind === 'maintenance_window' && (
            <>
              <Select
                label="Time zone"
                data={ZONES}
                value={timezone}
                onChange={(v) => v && setTimezone(v)}
                searchable
                allowDeselect={false}
              />
              <Group grow>
                <TextInput
                  label="Starts at (HH:MM)"
                  value={start}
                  onChange={(e) => setStart(e.currentTarget.value)}
                  required
                />
                <NumberInput
                  label="Lasts (minutes)"
                  min={1}
                  max={1440}
                  value={duration}
                  onChange={setDuration}
                  required
                />
              </Group>
              <MultiSelect
                label="On"
                data={DAYS.map((d, i) => ({ value: String(i), label: d }))}
                value={days}
                onChange={setDays}
                required
              />
            </>
          )}
          {kind === 'patch_policy' && (
            <>
              <MultiSelect
                label="Install without approval"
                data={['critical', 'important', 'moderate', 'low']}
                value={autoApprove}
                onChange={setAutoApprove}
              />
              <Select
                label="Reboot"
                data={[
                  { value: 'never', label: 'Never' },
                  { value: 'if_required', label: 'When a patch requires it' },
                  { value: 'always', label: 'Always' },
                ]}
                value={reboot}
                onChange={(v) => v && setReboot(v)}
                allowDeselect={false}
              />
              <NumberInput label="Wait after release (days)" min={0} max={365} value={defer} onChange={setDefer} />
            </>
          )}
          {kind === 'alert_template' && (
            <>
              <TextInput
                label="Condition"
                placeholder="disk.free_percent < 10"
                required
                value={condition}
                onChange={(e) => setCondition(e.currentTarget.value)}
              />
              <Select
                label="Severity"
                data={['info', 'warning', 'error', 'critical']}
                value={severity}
                onChange={(v) => v && setSeverity(v)}
                allowDeselect={false}
              />
              <TagsInput
                label="Notify"
                description="Addresses or channel names; press Enter after each."
                value={notify}
                onChange={setNotify}
              />
            </>
          )}
          {kind === 'policy' && (
            <JsonInput
              label="Settings (JSON object)"
              autosize
              minRows={6}
              formatOnBlur
              validationError="Not valid JSON"
              value={settings}
              onChange={setSettings}
            />
          )}
          {save.isError && (
            <Alert color="red" role="alert">
              {explain(save.error)}
            </Alert>
          )}
          <Button type="submit" loading={save.isPending} disabled={!name.trim()}>
            {item ? 'Save' : 'Create'}
          </Button>
        </Stack>
      </form>
    </Modal>
  );
}

// Enrollment keys of an organisation: create (the key is shown once, with a copy button and the install commands that
// use it), the site and device group it enrols into, usage and expiry, revoke.
// Creating a key is a risky action: the API may ask for a fresh proof first (the step-up prompt handles it).
import { Alert, Button, Group, Modal, NumberInput, Select, Stack, Table, Text, TextInput } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { CursorPager, useCursorList } from '../../components/CursorPager';
import { ConfirmDialog, useConfirmed } from '../../components/ConfirmDialog';
import { DataTable } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { ShownOnce } from '../../components/ShownOnce';
import { explain } from '../../lib/errors';
import { FormError } from '../../components/FormError';
import { fieldsNamed, useFieldErrors } from '../../hooks/useFieldErrors';
import { useCapabilities } from '../../hooks/useCapabilities';
import { done, when } from './common';
import { NoOrganisation, useOrgChoice } from '../../hooks/org-choice';
import { InstallCommands } from './InstallCommands';

interface Key {
  id: string;
  orgId: string;
  siteId: string | null;
  deviceGroupId: string | null;
  name: string;
  maxUsage: number;
  usageCount: number;
  expiresAt: string;
  createdAt: string;
}
interface Named {
  id: string;
  name: string;
}
interface GroupRef extends Named {
  siteId: string | null;
}

const LIFETIMES = [
  { value: '3600', label: '1 hour' },
  { value: '86400', label: '1 day' },
  { value: '604800', label: '7 days' },
  { value: '2592000', label: '30 days' },
  { value: '31536000', label: '1 year' },
];

function useSites(orgId: string | null) {
  return useQuery({
    queryKey: ['sites', orgId],
    enabled: !!orgId,
    queryFn: async () =>
      (await call(api.GET('/api/v1/orgs/sites', { params: { query: { orgId: orgId!, limit: 200 } } }))).data as Named[],
  });
}

function useGroups(orgId: string | null) {
  return useQuery({
    queryKey: ['device-groups', orgId],
    enabled: !!orgId,
    queryFn: async () =>
      (await call(api.GET('/api/v1/device-groups', { params: { query: { orgId: orgId!, limit: 200 } } })))
        .data as GroupRef[],
  });
}

function status(k: Key, now = Date.now()): { label: string; active: boolean } {
  if (new Date(k.expiresAt).getTime() <= now) return { label: 'Expired', active: false };
  if (k.usageCount >= k.maxUsage) return { label: 'Used up', active: false };
  return { label: 'Active', active: true };
}

export default function EnrollmentKeys() {
  const org = useOrgChoice();
  const qc = useQueryClient();
  const write = useCapabilities(org.orgId).allowed('enrollment_keys.manage');
  const sites = useSites(org.orgId);
  const groups = useGroups(org.orgId);
  const siteName = (id: string | null) =>
    id ? (sites.data?.find((s) => s.id === id)?.name ?? 'A site') : 'Chosen by the agent';
  const groupName = (id: string | null) => (id ? (groups.data?.find((g) => g.id === id)?.name ?? 'A group') : '—');
  const { pages, list } = useCursorList(
    ['enrollment-keys', org.orgId],
    (cursor) =>
      call(
        api.GET('/api/v1/enrollment-keys', { params: { query: { orgId: org.orgId!, cursor, limit: 50 } } }),
      ) as Promise<{ data: Key[]; nextCursor: string | null }>,
    { enabled: !!org.orgId },
  );
  const [creating, setCreating] = useState(false);
  const revoke = useConfirmed(
    (k: Key) => call(api.DELETE('/api/v1/enrollment-keys/{id}', { params: { path: { id: k.id } } })),
    (k) => {
      done(`Key “${k.name}” revoked: it enrols no more devices.`);
      void qc.invalidateQueries({ queryKey: ['enrollment-keys'] });
    },
  );

  if (org.orgsError)
    return (
      <Alert color="red" role="alert">
        {explain(org.orgsError)}
      </Alert>
    );
  if (org.noOrg) return <NoOrganisation />;
  return (
    <Stack>
      <Text size="sm">
        An agent trades a key for its device token when it is installed. A key works a limited number of times until it
        expires; only its fingerprint is stored.
      </Text>
      <Group align="end" justify="space-between">
        {org.picker ?? <span />}
        {write && (
          <Button onClick={() => setCreating(true)} disabled={!org.orgId}>
            New enrollment key
          </Button>
        )}
      </Group>
      {org.orgsLoading ? (
        <Text aria-busy="true">Loading organisations…</Text>
      ) : (
        <Loaded
          q={list}
          what="enrollment keys"
          isEmpty={(d) => d.data.length === 0}
          empty="No enrollment key for this organisation. Create one to enrol devices."
        >
          {(d) => (
            <DataTable
              testId="enrollment-keys"
              columns={['Name', 'Site', 'Device group', 'Used', 'Expires', 'Status']}
              hidden="Actions"
              rows={d.data}
            >
              {(k) => {
                const s = status(k);
                return (
                  <>
                    <Table.Td>{k.name}</Table.Td>
                    <Table.Td>{siteName(k.siteId)}</Table.Td>
                    <Table.Td>{groupName(k.deviceGroupId)}</Table.Td>
                    <Table.Td>
                      {k.usageCount} of {k.maxUsage}
                    </Table.Td>
                    <Table.Td>{when(k.expiresAt)}</Table.Td>
                    <Table.Td>
                      <Text size="sm" fw={s.active ? 400 : 700}>
                        {s.label}
                      </Text>
                    </Table.Td>
                    <Table.Td>
                      {write && (
                        <Button
                          size="xs"
                          variant="default"
                          color="red"
                          onClick={() => revoke.ask(k)}
                          aria-label={`Revoke ${k.name}`}
                        >
                          Revoke
                        </Button>
                      )}
                    </Table.Td>
                  </>
                );
              }}
            </DataTable>
          )}
        </Loaded>
      )}
      <CursorPager pages={pages} next={list.data?.nextCursor} />
      {org.orgId && (
        <CreateKey
          opened={creating}
          onClose={() => setCreating(false)}
          orgId={org.orgId}
          sites={sites.data ?? []}
          groups={groups.data ?? []}
        />
      )}
      <ConfirmDialog {...revoke.dialog} title={`Revoke “${revoke.target?.name ?? ''}”?`} action="Revoke">
        Agents can no longer enrol with this key. Devices it already enrolled stay.
      </ConfirmDialog>
    </Stack>
  );
}

/** The key form's fields with an input of their own (`expiresAt` is the Valid for choice). */
const keyField = fieldsNamed('name', 'siteId', 'deviceGroupId', 'maxUsage', 'expiresAt');

function CreateKey({
  opened,
  onClose,
  orgId,
  sites,
  groups,
}: {
  opened: boolean;
  onClose: () => void;
  orgId: string;
  sites: Named[];
  groups: GroupRef[];
}) {
  const qc = useQueryClient();
  const [name, setName] = useState('');
  const [siteId, setSiteId] = useState<string | null>(null);
  const [groupId, setGroupId] = useState<string | null>(null);
  const [maxUsage, setMaxUsage] = useState<number | string>(1);
  const [lifetime, setLifetime] = useState('86400');
  const [created, setCreated] = useState<(Key & { key: string }) | null>(null);
  const errors = useFieldErrors(keyField, [name, siteId, groupId, maxUsage, lifetime]);
  const create = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/v1/enrollment-keys', {
          body: {
            orgId,
            name: name.trim(),
            siteId: siteId ?? undefined,
            deviceGroupId: groupId ?? undefined,
            maxUsage: Number(maxUsage) || 1,
            expiresAt: new Date(Date.now() + Number(lifetime) * 1000).toISOString(),
          },
        }),
      ),
    onSuccess: (k) => {
      setCreated(k as Key & { key: string });
      void qc.invalidateQueries({ queryKey: ['enrollment-keys'] });
    },
    onError: errors.show,
  });
  const close = () => {
    setCreated(null);
    setName('');
    setSiteId(null);
    setGroupId(null);
    setMaxUsage(1);
    create.reset();
    errors.clear();
    onClose();
  };
  return (
    <Modal
      opened={opened}
      onClose={close}
      title={created ? 'Your new enrollment key' : 'New enrollment key'}
      size={created ? 'xl' : 'md'}
    >
      {created ? (
        <ShownOnce what="key" value={created.key} testId="enrollment-key" onDone={close}>
          <Text size="sm">
            Enrols up to {created.maxUsage} device{created.maxUsage === 1 ? '' : 's'} until {when(created.expiresAt)}.
          </Text>
          <InstallCommands enrollmentKey={created.key} />
        </ShownOnce>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate();
          }}
        >
          <Stack>
            <FormError text={errors.form} />
            <TextInput
              label="Name"
              placeholder="Head office laptops"
              required
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
              error={errors.fields.name}
              data-autofocus
            />
            <Select
              label="Site"
              description="Devices enrolled with this key join this site. Leave empty to let the agent name one."
              data={sites.map((s) => ({ value: s.id, label: s.name }))}
              value={siteId}
              onChange={(v) => {
                setSiteId(v);
                const g = groups.find((x) => x.id === groupId);
                if (g?.siteId && g.siteId !== v) setGroupId(null);
              }}
              clearable
              placeholder={sites.length ? 'Any site the agent names' : 'No site yet'}
              error={errors.fields.siteId}
            />
            <Select
              label="Device group"
              description="Devices enrolled with this key join this group. A group of a site needs a key of that site."
              data={groups.filter((g) => !g.siteId || g.siteId === siteId).map((g) => ({ value: g.id, label: g.name }))}
              value={groupId}
              onChange={setGroupId}
              clearable
              placeholder={groups.length ? 'No group' : 'No device group yet'}
              error={errors.fields.deviceGroupId}
            />
            <NumberInput
              label="How many devices it may enrol"
              min={1}
              max={1_000_000}
              value={maxUsage}
              onChange={setMaxUsage}
              required
              error={errors.fields.maxUsage}
            />
            <Select
              label="Valid for"
              data={LIFETIMES}
              value={lifetime}
              onChange={(v) => v && setLifetime(v)}
              allowDeselect={false}
              error={errors.fields.expiresAt}
            />
            <Button type="submit" loading={create.isPending} disabled={!name.trim()}>
              Create key
            </Button>
          </Stack>
        </form>
      )}
    </Modal>
  );
}

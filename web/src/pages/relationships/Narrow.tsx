// Narrowing a relationship that was sent or approved: fewer roles, fewer sites or device groups, a shorter duration,
// or no more auto-extension, in force at once. The pickers offer only what it holds: anything wider is a new
// relationship and a new approval.
import { Alert, Button, Group, Modal, MultiSelect, Select, Stack, Switch, Text } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { DURATIONS, durationWords, type Relationship } from '../../hooks/relationships';
import { explain } from '../../lib/errors';
import { done } from '../onboarding/common';
import { useOrgReach } from './Editor';

const DAYS: Record<string, number> = { Y: 365, M: 30, W: 7, D: 1 };
/** Roughly how many days a duration spans, to offer only shorter ones. */
const approxDays = (iso: string) =>
  [...iso.matchAll(/(\d+)([YMWD])/g)].reduce((n, m) => n + Number(m[1]) * (DAYS[m[2]!] ?? 0), 0);

export function Narrow({ r, onClose }: { r: Relationship; onClose: () => void }) {
  const qc = useQueryClient();
  const reach = useOrgReach(r.orgId);
  const [roleIds, setRoleIds] = useState(r.roleIds);
  const [siteIds, setSiteIds] = useState(r.siteIds);
  const [groupIds, setGroupIds] = useState(r.deviceGroupIds);
  const [duration, setDuration] = useState(r.duration);
  const [autoExtend, setAutoExtend] = useState(r.autoExtend);
  // A list that names some may only lose members (emptied, it would reach everything); an empty list may be limited.
  const siteChoices = r.siteIds.length ? r.sites : reach.sites;
  const groupChoices = r.deviceGroupIds.length ? r.deviceGroups : reach.groups;
  const save = useMutation({
    mutationFn: () =>
      call(
        api.PATCH('/api/v1/relationships/{id}', {
          params: { path: { id: r.id } },
          body: { roleIds, siteIds, deviceGroupIds: groupIds, duration, autoExtend },
        }),
      ),
    onSuccess: (x) => {
      done(`“${x.name}” is narrowed, in force now.`);
      void qc.invalidateQueries({ queryKey: ['relationships'] });
      onClose();
    },
  });
  const emptied =
    (r.siteIds.length > 0 && siteIds.length === 0) || (r.deviceGroupIds.length > 0 && groupIds.length === 0);
  return (
    <Modal opened onClose={onClose} title={`Narrow “${r.name}”`}>
      <Stack>
        <Text size="sm">
          What you remove applies at once, on every instance. To give more, draft a new relationship: the organisation
          approves it again.
        </Text>
        <MultiSelect
          label="Roles"
          data={r.roles.map((x) => ({ value: x.id, label: x.name }))}
          value={roleIds}
          onChange={setRoleIds}
          error={roleIds.length === 0 ? 'Keep at least one role, or terminate the relationship.' : undefined}
        />
        <MultiSelect
          label="Sites"
          description={r.siteIds.length ? undefined : 'Every site now: choose some to limit it'}
          data={siteChoices.map((x) => ({ value: x.id, label: x.name }))}
          value={siteIds}
          onChange={setSiteIds}
        />
        <MultiSelect
          label="Device groups"
          description={r.deviceGroupIds.length ? undefined : 'Every device group now: choose some to limit it'}
          data={groupChoices.map((x) => ({ value: x.id, label: x.name }))}
          value={groupIds}
          onChange={setGroupIds}
        />
        {emptied && (
          <Text size="sm" c="red">
            Keep at least one: an empty list would reach everything again.
          </Text>
        )}
        <Select
          label="For how long"
          data={[
            { value: r.duration, label: `${durationWords(r.duration)} (as approved)` },
            ...DURATIONS.filter((d) => approxDays(d.value) < approxDays(r.duration)),
          ]}
          value={duration}
          onChange={(v) => v && setDuration(v)}
          allowDeselect={false}
        />
        {r.autoExtend && (
          <Switch
            label="Extend by 180 days at each end"
            checked={autoExtend}
            onChange={(e) => setAutoExtend(e.currentTarget.checked)}
          />
        )}
        {save.isError && (
          <Alert color="red" role="alert">
            {explain(save.error)}
          </Alert>
        )}
        <Group justify="end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button loading={save.isPending} disabled={roleIds.length === 0 || emptied} onClick={() => save.mutate()}>
            Narrow now
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

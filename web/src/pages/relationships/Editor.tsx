// Drafting a relationship (or changing a draft): a name, the organisation, the partner roles its staff may use there,
// the reach (the whole organisation, or chosen sites and device groups of it), how long, and whether it extends
// itself (refused beside the switch when a chosen role governs access itself).
import { Alert, Button, Group, MultiSelect, Radio, Select, Stack, Switch, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQueries, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { ApiError, api, call } from '../../api/client';
import { Loading } from '../../components/Loading';
import { useOrganizations } from '../../hooks/organizations';
import {
  blocksAutoExtend,
  DURATIONS,
  durationWords,
  type Relationship,
  useRelationship,
} from '../../hooks/relationships';
import { useAllRoles } from '../../hooks/roles';
import { useFieldErrors } from '../../hooks/useFieldErrors';
import { explain } from '../../lib/errors';
import { done } from '../onboarding/common';

/**
 * The sites and device groups of one of the partner's organisations, for the reach pickers (read from the partner's
 * side: its admins may reach no organisation themselves once relationships are required).
 */
export function useOrgReach(orgId: string | null) {
  const q = useQuery({
    queryKey: ['relationships', 'reach-options', orgId],
    enabled: !!orgId,
    queryFn: () => call(api.GET('/api/v1/relationships/reach-options', { params: { query: { orgId: orgId! } } })),
  });
  return { sites: q.data?.sites ?? [], groups: q.data?.deviceGroups ?? [] };
}

/** The effective permissions of the chosen roles (their union), to say beside the switch why it cannot extend. */
export function useRolesPermissions(roleIds: string[]) {
  const q = useQueries({
    queries: roleIds.map((id) => ({
      queryKey: ['roles', undefined, 'effective', id],
      queryFn: () => call(api.GET('/api/v1/roles/{id}/effective-permissions', { params: { path: { id }, query: {} } })),
    })),
  });
  return q.flatMap((r) => (r.data?.permissions ?? []).map((p) => `${p.resource}:${p.action}`));
}

export const autoExtendRefusal = (blocked: string | null) =>
  blocked
    ? `Not allowed: a chosen role holds ${blocked}, which governs access itself. Such a relationship ends, and a new one is approved.`
    : null;

export default function Editor() {
  const { id } = useParams();
  const existing = useRelationship(id);
  if (id && existing.isPending) return <Loading />;
  if (id && existing.isError)
    return (
      <Alert color="red" role="alert">
        {explain(existing.error)}
      </Alert>
    );
  return <Form key={id ?? 'new'} draft={existing.data} />;
}

function Form({ draft }: { draft?: Relationship }) {
  const navigate = useNavigate();
  const qc = useQueryClient();
  const orgs = useOrganizations();
  const roles = useAllRoles(undefined);
  const [name, setName] = useState(draft?.name ?? '');
  const [orgId, setOrgId] = useState<string | null>(draft?.orgId ?? null);
  const [roleIds, setRoleIds] = useState<string[]>(draft?.roleIds ?? []);
  const [whole, setWhole] = useState(draft ? draft.siteIds.length + draft.deviceGroupIds.length === 0 : true);
  const [siteIds, setSiteIds] = useState<string[]>(draft?.siteIds ?? []);
  const [groupIds, setGroupIds] = useState<string[]>(draft?.deviceGroupIds ?? []);
  const [duration, setDuration] = useState(draft?.duration ?? 'P90D');
  const [autoExtend, setAutoExtend] = useState(draft?.autoExtend ?? false);
  /** The API's refusal of auto-extension (a role's permissions changed since the page loaded them). */
  const [extendRefused, setExtendRefused] = useState<string | null>(null);
  const reach = useOrgReach(orgId);
  const blocked = autoExtendRefusal(blocksAutoExtend(useRolesPermissions(roleIds)));
  const errs = useFieldErrors((path) => (path.startsWith('roleIds') ? 'roleIds' : path in FIELDS ? path : null));
  const body = {
    name: name.trim(),
    roleIds,
    siteIds: whole ? [] : siteIds,
    deviceGroupIds: whole ? [] : groupIds,
    duration,
    autoExtend,
  };
  const save = useMutation({
    mutationFn: () =>
      draft
        ? call(api.PATCH('/api/v1/relationships/{id}', { params: { path: { id: draft.id } }, body }))
        : call(api.POST('/api/v1/relationships', { body: { ...body, orgId: orgId! } })),
    onSuccess: (r) => {
      done(`Draft “${r.name}” saved. Send it for approval when it is ready.`);
      void qc.invalidateQueries({ queryKey: ['relationships'] });
      navigate(`/relationships/${r.id}`);
    },
    onError: (err) => {
      if (err instanceof ApiError && err.code === 'auto_extend_not_allowed') setExtendRefused(explain(err));
      else errs.show(err);
    },
  });
  const durations = DURATIONS.some((d) => d.value === duration)
    ? DURATIONS
    : [...DURATIONS, { value: duration, label: durationWords(duration) }];
  const partnerRoles = (roles.data ?? []).filter((r) => r.scope !== 'organization');
  return (
    <Stack maw={640}>
      <Title order={1} size="h2">
        {draft ? `Change the draft “${draft.name}”` : 'New relationship'}
      </Title>
      <Text size="sm">
        A draft changes freely. Once sent, the organisation’s admins approve exactly what it says; after that it only
        narrows.
      </Text>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          errs.clear();
          setExtendRefused(null);
          save.mutate();
        }}
      >
        <Stack>
          <TextInput
            label="Name"
            description="How both sides will know it, for instance “Tier 1 – Contoso”"
            required
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            error={errs.fields.name}
          />
          <Select
            label="Organisation"
            required
            data={(orgs.data ?? []).map((o) => ({ value: o.id, label: o.name }))}
            value={orgId}
            onChange={(v) => {
              setOrgId(v);
              setSiteIds([]);
              setGroupIds([]);
            }}
            disabled={!!draft}
            error={errs.fields.orgId}
          />
          <MultiSelect
            label="Roles"
            description="The partner roles whose permissions your staff may use there (their union)"
            required
            searchable
            data={partnerRoles.map((r) => ({ value: r.id, label: r.name }))}
            value={roleIds}
            onChange={setRoleIds}
            error={errs.fields.roleIds}
          />
          <Radio.Group label="Where" value={whole ? 'whole' : 'chosen'} onChange={(v) => setWhole(v === 'whole')}>
            <Stack gap={6} mt={4}>
              <Radio value="whole" label="The whole organisation" />
              <Radio value="chosen" label="Chosen sites and device groups" disabled={!orgId} />
            </Stack>
          </Radio.Group>
          {!whole && (
            <>
              <MultiSelect
                label="Sites"
                data={reach.sites.map((s) => ({ value: s.id, label: s.name }))}
                value={siteIds}
                onChange={setSiteIds}
                error={errs.fields.siteIds}
                placeholder={reach.sites.length ? undefined : 'The organisation has no site'}
              />
              <MultiSelect
                label="Device groups"
                data={reach.groups.map((g) => ({ value: g.id, label: g.name }))}
                value={groupIds}
                onChange={setGroupIds}
                error={errs.fields.deviceGroupIds}
                placeholder={reach.groups.length ? undefined : 'The organisation has no device group'}
              />
            </>
          )}
          <Select
            label="For how long"
            description="From the organisation’s approval"
            data={durations}
            value={duration}
            onChange={(v) => v && setDuration(v)}
            allowDeselect={false}
            error={errs.fields.duration}
          />
          <Switch
            label="Extend by 180 days at each end"
            checked={autoExtend}
            disabled={!!blocked && !autoExtend}
            onChange={(e) => {
              setAutoExtend(e.currentTarget.checked);
              setExtendRefused(null);
            }}
            description={blocked ?? 'Until either side ends it'}
            error={autoExtend ? (blocked ?? extendRefused) : undefined}
          />
          {errs.form && (
            <Alert color="red" role="alert">
              {errs.form}
            </Alert>
          )}
          <Group>
            <Button
              type="submit"
              loading={save.isPending}
              disabled={
                !name.trim() || !orgId || roleIds.length === 0 || (!whole && siteIds.length + groupIds.length === 0)
              }
            >
              Save draft
            </Button>
            <Button variant="default" onClick={() => navigate(draft ? `/relationships/${draft.id}` : '/relationships')}>
              Cancel
            </Button>
          </Group>
        </Stack>
      </form>
    </Stack>
  );
}

const FIELDS = { name: 1, orgId: 1, siteIds: 1, deviceGroupIds: 1, duration: 1 };

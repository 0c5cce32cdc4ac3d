// The role builder: name, description, parent role, Force MFA, and the catalogue's permissions as grouped
// checkboxes. Inherited permissions show as held (from their source role); those the caller does not hold are
// disabled (the permission ceiling: nobody grants what they do not hold).
import {
  Alert,
  Button,
  Checkbox,
  Fieldset,
  Group,
  Modal,
  Select,
  Stack,
  Text,
  Textarea,
  TextInput,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, call } from '../../api/client';
import { explain } from '../../lib/errors';
import { FormError } from '../../components/FormError';
import { fieldsNamed, useFieldErrors } from '../../hooks/useFieldErrors';
import { can, useMe } from '../../hooks/me';
import {
  groupByResource,
  permKey,
  resourceLabel,
  useAllRoles,
  useCatalog,
  useEffectivePermissions,
  type Role,
} from '../../hooks/roles';

// A style object is applied through the CSSOM, which the console's CSP (style-src 'self') allows.
const GRID = { display: 'grid', gridTemplateColumns: 'repeat(auto-fill, minmax(320px, 1fr))', gap: 12 } as const;

/** The API's fields with an input of their own; the permissions' problems show at the top. */
const fieldOf = fieldsNamed('name', 'description', 'parentRoleId');

export function RoleEditor({ role, orgId, onClose }: { role: Role | null; orgId?: string; onClose: () => void }) {
  const me = useMe();
  const qc = useQueryClient();
  const catalog = useCatalog();
  const roles = useAllRoles(orgId);
  const detail = useQuery({
    queryKey: ['roles', orgId, 'detail', role?.id],
    enabled: !!role,
    queryFn: () => call(api.GET('/api/v1/roles/{id}', { params: { path: { id: role!.id }, query: { orgId } } })),
  });
  const [name, setName] = useState(role?.name ?? '');
  const [description, setDescription] = useState(role?.description ?? '');
  const [parentId, setParentId] = useState<string | null>(role?.parentRoleId ?? null);
  const [forceMfa, setForceMfa] = useState(role?.forceMfa ?? false);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const errors = useFieldErrors(fieldOf, [name, description, parentId, forceMfa, [...selected]]);
  useEffect(() => {
    if (detail.data) setSelected(new Set(detail.data.permissions.map(permKey)));
  }, [detail.data]);
  const parent = useEffectivePermissions(parentId, orgId);
  const inherited = new Map(
    (parentId ? (parent.data?.permissions ?? []) : []).map((p) => [permKey(p), p.sourceRoleName]),
  );

  const save = useMutation({
    mutationFn: async () => {
      const permissions = [...selected]
        .filter((k) => !inherited.has(k))
        .map((k) => {
          const [resource, action] = k.split(':') as [string, string];
          return { resource, action };
        });
      const body = {
        name: name.trim(),
        description: description.trim() || null,
        parentRoleId: parentId,
        forceMfa,
        permissions,
      };
      if (role)
        return call(api.PATCH('/api/v1/roles/{id}', { params: { path: { id: role.id }, query: { orgId } }, body }));
      return call(api.POST('/api/v1/roles', { body: { ...body, ...(orgId ? { orgId } : {}) } }));
    },
    onSuccess: () => {
      notifications.show({
        color: 'green',
        message: role ? `Role “${name.trim()}” saved.` : `Role “${name.trim()}” created.`,
      });
      void qc.invalidateQueries({ queryKey: ['roles'] });
      void qc.invalidateQueries({ queryKey: ['assignable-roles'] });
      onClose();
    },
    onError: errors.show,
  });

  const toggle = (key: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(key);
    else next.delete(key);
    setSelected(next);
  };
  const parents = (roles.data ?? []).filter((r) => r.id !== role?.id);
  const loading = catalog.isPending || (!!role && detail.isPending);
  const loadError = catalog.error ?? detail.error ?? roles.error;

  return (
    <Modal opened onClose={onClose} title={role ? `Edit role ${role.name}` : 'New role'} size="xl">
      {loadError ? (
        <Alert color="red" role="alert">
          {explain(loadError)}
        </Alert>
      ) : loading ? (
        <Text aria-busy="true">Loading the permission catalogue…</Text>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            save.mutate();
          }}
        >
          <Stack>
            <FormError text={errors.form} />
            <TextInput
              label="Name"
              required
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
              error={errors.fields.name}
              maxLength={100}
              data-autofocus
            />
            <Textarea
              label="Description"
              value={description}
              onChange={(e) => setDescription(e.currentTarget.value)}
              error={errors.fields.description}
              maxLength={2000}
              autosize
              minRows={1}
            />
            <Select
              label="Parent role"
              description="The role also holds every permission of its parent (and of the parent’s parents)."
              placeholder="None"
              clearable
              data={parents.map((r) => ({ value: r.id, label: r.name }))}
              value={parentId}
              onChange={setParentId}
              error={errors.fields.parentRoleId}
            />
            <Checkbox
              label="Force MFA"
              description="Holders must set up two-step verification before they can use the console."
              checked={forceMfa}
              onChange={(e) => setForceMfa(e.currentTarget.checked)}
            />
            {parent.isError && (
              <Alert color="red" role="alert">
                {explain(parent.error)}
              </Alert>
            )}
            <Text fw={600} size="sm" id="role-permissions">
              Permissions
            </Text>
            {/* biome-ignore lint/a11y/useSemanticElements: the inner Fieldsets are the fieldsets; this grid only labels them */}
            <div role="group" aria-labelledby="role-permissions" style={GRID}>
              {groupByResource(catalog.data ?? []).map(([resource, entries]) => (
                <Fieldset key={resource} legend={resourceLabel(resource)} variant="filled" p="xs">
                  <Stack gap={6}>
                    {entries.map((e) => {
                      const key = permKey(e);
                      const from = inherited.get(key);
                      const held = can(me.data, key);
                      return (
                        <Checkbox
                          key={key}
                          label={e.description}
                          description={
                            from
                              ? `${key} · inherited from ${from}`
                              : held
                                ? key
                                : `${key} · you do not hold this permission`
                          }
                          checked={!!from || selected.has(key)}
                          disabled={!!from || (!held && !selected.has(key))}
                          onChange={(ev) => toggle(key, ev.currentTarget.checked)}
                        />
                      );
                    })}
                  </Stack>
                </Fieldset>
              ))}
            </div>
            <Group justify="end">
              <Button variant="default" onClick={onClose}>
                Cancel
              </Button>
              <Button type="submit" loading={save.isPending} disabled={!name.trim()}>
                {role ? 'Save role' : 'Create role'}
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  );
}

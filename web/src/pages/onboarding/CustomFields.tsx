// Custom fields: the definitions in force (partner-wide and the organisation's own), create and delete, then the
// import wizard that fills their values from a CSV.
import {
  Alert,
  Button,
  Card,
  Group,
  Modal,
  Select,
  Stack,
  Table,
  TagsInput,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { ConfirmDialog, useConfirmed } from '../../components/ConfirmDialog';
import { DataTable } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { explain } from '../../lib/errors';
import { can, useMe } from '../../hooks/me';
import { done } from './common';
import { NoOrganisation, useOrgChoice } from '../../hooks/org-choice';
import { CustomFieldsImport } from './CustomFieldsImport';
import { type Definition, ENTITY_LABELS, type EntityType, useDefinitions } from '../../hooks/custom-fields';

const TYPES = ['text', 'number', 'boolean', 'date', 'select'] as const;

export default function CustomFields() {
  const me = useMe();
  const org = useOrgChoice();
  const qc = useQueryClient();
  const write = can(me.data, 'settings:write');
  const defs = useDefinitions(org.orgId);
  const [creating, setCreating] = useState(false);
  const remove = useConfirmed(
    (d: Definition) => call(api.DELETE('/api/v1/custom-fields/{id}', { params: { path: { id: d.id } } })),
    (d) => {
      done(`Field “${d.name}” and its values deleted.`);
      void qc.invalidateQueries({ queryKey: ['custom-fields'] });
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
      <Group align="end" justify="space-between">
        {org.picker ?? <span />}
        {write && (
          <Button onClick={() => setCreating(true)} disabled={!org.orgId}>
            New field
          </Button>
        )}
      </Group>
      <Card withBorder component="section" aria-label="Fields">
        <Title order={2} size="h4" mb="sm">
          Fields
        </Title>
        <Loaded
          q={defs}
          what="custom fields"
          isEmpty={(d) => d.length === 0}
          empty="No custom field yet. Define one, then import its values from a spreadsheet."
        >
          {(d) => (
            <DataTable
              testId="custom-fields"
              striped={false}
              columns={['Name', 'Key', 'Of', 'Type', 'Defined for']}
              hidden="Actions"
              rows={d}
            >
              {(f) => (
                <>
                  <Table.Td>{f.name}</Table.Td>
                  <Table.Td>
                    <code>{f.key}</code>
                  </Table.Td>
                  <Table.Td>{ENTITY_LABELS[f.entityType]}</Table.Td>
                  <Table.Td>{f.type === 'select' ? `select: ${(f.options ?? []).join(', ')}` : f.type}</Table.Td>
                  <Table.Td>
                    <Text size="sm">{f.source === 'partner' ? 'Every organisation' : 'This organisation'}</Text>
                  </Table.Td>
                  <Table.Td>
                    {write && (
                      <Button
                        size="xs"
                        variant="default"
                        color="red"
                        onClick={() => remove.ask(f)}
                        aria-label={`Delete ${f.name}`}
                      >
                        Delete
                      </Button>
                    )}
                  </Table.Td>
                </>
              )}
            </DataTable>
          )}
        </Loaded>
      </Card>
      {org.orgId && <CustomFieldsImport orgId={org.orgId} write={write} />}
      {org.orgId && (
        <CreateField opened={creating} onClose={() => setCreating(false)} orgId={org.orgId} partner={org.partner} />
      )}
      <ConfirmDialog {...remove.dialog} title={`Delete “${remove.target?.name ?? ''}”?`} action="Delete">
        The field and every value stored in it are deleted.
      </ConfirmDialog>
    </Stack>
  );
}

function CreateField({
  opened,
  onClose,
  orgId,
  partner,
}: {
  opened: boolean;
  onClose: () => void;
  orgId: string;
  partner: boolean;
}) {
  const qc = useQueryClient();
  const [name, setName] = useState('');
  const [key, setKey] = useState('');
  const [type, setType] = useState<(typeof TYPES)[number]>('text');
  const [entityType, setEntityType] = useState<EntityType>('device');
  const [options, setOptions] = useState<string[]>([]);
  const [owner, setOwner] = useState<'partner' | 'organization'>('organization');
  const suggested = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^[^a-z]+|_+$/g, '')
    .slice(0, 64);
  const create = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/v1/custom-fields', {
          body: {
            name: name.trim(),
            key: key || suggested,
            type,
            entityType,
            ...(type === 'select' ? { options } : {}),
            ...(owner === 'organization' ? { orgId } : {}),
          },
        }),
      ),
    onSuccess: () => {
      done(`Field “${name.trim()}” created.`);
      void qc.invalidateQueries({ queryKey: ['custom-fields'] });
      setName('');
      setKey('');
      setOptions([]);
      onClose();
    },
  });
  return (
    <Modal opened={opened} onClose={onClose} title="New custom field">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate();
        }}
      >
        <Stack>
          <TextInput
            label="Name"
            required
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            data-autofocus
          />
          <TextInput
            label="Key"
            description="Lower-case letters, digits and _; used in imports and the API."
            placeholder={suggested}
            value={key}
            onChange={(e) => setKey(e.currentTarget.value)}
          />
          <Select
            label="Of"
            data={Object.entries(ENTITY_LABELS).map(([value, label]) => ({ value, label }))}
            value={entityType}
            onChange={(v) => v && setEntityType(v as EntityType)}
            allowDeselect={false}
          />
          <Select
            label="Type"
            data={[...TYPES]}
            value={type}
            onChange={(v) => v && setType(v as typeof type)}
            allowDeselect={false}
          />
          {type === 'select' && (
            <TagsInput
              label="Options"
              description="Press Enter after each option."
              value={options}
              onChange={setOptions}
            />
          )}
          {partner && (
            <Select
              label="Defined for"
              data={[
                { value: 'organization', label: 'This organisation only' },
                { value: 'partner', label: 'Every organisation of the partner' },
              ]}
              value={owner}
              onChange={(v) => v && setOwner(v as typeof owner)}
              allowDeselect={false}
            />
          )}
          {create.isError && (
            <Alert color="red" role="alert">
              {explain(create.error)}
            </Alert>
          )}
          <Button type="submit" loading={create.isPending} disabled={!name.trim()}>
            Create field
          </Button>
        </Stack>
      </form>
    </Modal>
  );
}

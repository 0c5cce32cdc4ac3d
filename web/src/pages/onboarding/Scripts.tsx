// Scripts: the partner's library (in force in every organisation) and each organisation's own; create, edit, delete.
import { Alert, Button, Group, Modal, Select, Stack, Table, Text, Textarea, TextInput } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
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

const LANGUAGES = [
  { value: 'powershell', label: 'PowerShell' },
  { value: 'cmd', label: 'Command prompt (cmd)' },
  { value: 'bash', label: 'Bash' },
  { value: 'python', label: 'Python' },
] as const;
type Language = (typeof LANGUAGES)[number]['value'];
const languageName = (l: string) => LANGUAGES.find((x) => x.value === l)?.label ?? l;

interface Summary {
  id: string;
  orgId: string | null;
  name: string;
  description: string | null;
  language: Language;
  availability: 'organization' | 'partner';
  parameters: unknown[];
  source: 'partner' | 'organization';
  updatedAt: string;
}

export default function Scripts() {
  const me = useMe();
  const qc = useQueryClient();
  const partner = me.data?.scope === 'partner';
  const orgs = useOrganizations(partner);
  const [orgId, setOrgId] = useState<string | null>(null);
  const [search, setSearch] = useState('');
  const [debounced] = useDebouncedValue(search.trim(), 250);
  const { pages, list } = useCursorList(
    ['scripts', orgId, debounced],
    (cursor) =>
      call(
        api.GET('/api/v1/scripts', {
          params: { query: { orgId: orgId ?? undefined, search: debounced || undefined, cursor, limit: 50 } },
        }),
      ) as Promise<{ data: Summary[]; nextCursor: string | null }>,
  );
  const [editing, setEditing] = useState<Summary | 'new' | null>(null);
  const remove = useConfirmed(
    (s: Summary) => call(api.DELETE('/api/v1/scripts/{id}', { params: { path: { id: s.id } } })),
    (s) => {
      done(`Script “${s.name}” deleted.`);
      void qc.invalidateQueries({ queryKey: ['scripts'] });
    },
  );
  const write = can(me.data, 'scripts:write');
  const del = can(me.data, 'scripts:delete');
  const reset = pages.reset;

  return (
    <Stack>
      <Group align="end" justify="space-between">
        <Group align="end">
          {partner && (
            <TenantSelect
              label="Scripts of"
              partnerLabel="The partner’s library"
              orgLabel={(name) => `${name} (with the library)`}
              value={orgId}
              onChange={(v) => {
                setOrgId(v);
                reset();
              }}
              w={300}
            />
          )}
          <TextInput
            label="Search"
            placeholder="Name starts with…"
            value={search}
            onChange={(e) => {
              setSearch(e.currentTarget.value);
              reset();
            }}
          />
        </Group>
        {write && <Button onClick={() => setEditing('new')}>New script</Button>}
      </Group>
      <Loaded
        q={list}
        what="scripts"
        isEmpty={(d) => d.data.length === 0}
        empty={
          debounced
            ? `No script’s name starts with “${debounced}”.`
            : 'No script yet. Add the ones your technicians run on devices.'
        }
      >
        {(d) => (
          <DataTable
            testId="scripts"
            columns={['Name', 'Language', 'Available to', 'Parameters', 'Changed']}
            hidden="Actions"
            rows={d.data}
          >
            {(s) => (
              <>
                <Table.Td>
                  <Text size="sm" fw={600}>
                    {s.name}
                  </Text>
                  {s.description && (
                    <Text size="xs" c="dimmed">
                      {s.description}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>{languageName(s.language)}</Table.Td>
                <Table.Td>
                  <Text size="sm">
                    {s.source === 'partner'
                      ? 'Every organisation'
                      : (orgs.data?.find((o) => o.id === s.orgId)?.name ?? 'One organisation')}
                  </Text>
                </Table.Td>
                <Table.Td>{s.parameters.length}</Table.Td>
                <Table.Td>{when(s.updatedAt)}</Table.Td>
                <Table.Td>
                  <Group gap="xs" wrap="nowrap">
                    <Button
                      size="xs"
                      variant="default"
                      onClick={() => setEditing(s)}
                      aria-label={`${write ? 'Edit' : 'View'} ${s.name}`}
                    >
                      {write ? 'Edit' : 'View'}
                    </Button>
                    {del && (
                      <Button
                        size="xs"
                        variant="default"
                        color="red"
                        onClick={() => remove.ask(s)}
                        aria-label={`Delete ${s.name}`}
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
        <ScriptEditor
          key={editing === 'new' ? 'new' : editing.id}
          script={editing === 'new' ? null : editing}
          orgId={partner ? orgId : (me.data?.orgId ?? null)}
          partner={partner}
          readOnly={!write}
          onClose={() => setEditing(null)}
        />
      )}
      <ConfirmDialog {...remove.dialog} title={`Delete “${remove.target?.name ?? ''}”?`} action="Delete">
        The script is removed from {remove.target?.source === 'partner' ? 'every organisation' : 'its organisation'}.
      </ConfirmDialog>
    </Stack>
  );
}

function ScriptEditor({
  script,
  orgId,
  partner,
  readOnly,
  onClose,
}: {
  script: Summary | null;
  orgId: string | null;
  partner: boolean;
  readOnly: boolean;
  onClose: () => void;
}) {
  const qc = useQueryClient();
  const full = useQuery({
    queryKey: ['script', script?.id],
    enabled: !!script,
    queryFn: () => call(api.GET('/api/v1/scripts/{id}', { params: { path: { id: script!.id } } })),
  });
  const [name, setName] = useState(script?.name ?? '');
  const [description, setDescription] = useState(script?.description ?? '');
  const [language, setLanguage] = useState<Language>(script?.language ?? 'powershell');
  const [content, setContent] = useState<string | null>(null);
  const [availability, setAvailability] = useState<'partner' | 'organization'>(
    partner && !orgId ? 'partner' : 'organization',
  );
  const text = content ?? full.data?.content ?? '';
  const save = useMutation({
    mutationFn: () =>
      script
        ? call(
            api.PATCH('/api/v1/scripts/{id}', {
              params: { path: { id: script.id } },
              body: {
                name: name.trim(),
                description: description.trim() || null,
                language,
                ...(content !== null ? { content } : {}),
              },
            }),
          )
        : call(
            api.POST('/api/v1/scripts', {
              body: {
                name: name.trim(),
                description: description.trim() || null,
                language,
                content: text,
                availability,
                ...(availability === 'organization' && orgId ? { orgId } : {}),
              },
            }),
          ),
    onSuccess: () => {
      done(script ? 'Script saved.' : `Script “${name.trim()}” created.`);
      void qc.invalidateQueries({ queryKey: ['scripts'] });
      void qc.invalidateQueries({ queryKey: ['script'] });
      onClose();
    },
  });
  const noOrg = !script && availability === 'organization' && !orgId;
  return (
    <Modal
      opened
      onClose={onClose}
      title={script ? (readOnly ? script.name : `Edit “${script.name}”`) : 'New script'}
      size="xl"
    >
      {script && full.isPending ? (
        <Text aria-busy="true">Loading the script…</Text>
      ) : script && full.isError ? (
        <Alert color="red" role="alert">
          {explain(full.error)}
        </Alert>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            save.mutate();
          }}
        >
          <Stack>
            <TextInput
              label="Name"
              required
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
              readOnly={readOnly}
              data-autofocus
            />
            <TextInput
              label="Description"
              value={description}
              onChange={(e) => setDescription(e.currentTarget.value)}
              readOnly={readOnly}
            />
            <Group grow>
              <Select
                label="Language"
                data={LANGUAGES.map((l) => ({ ...l }))}
                value={language}
                onChange={(v) => v && setLanguage(v as Language)}
                allowDeselect={false}
                disabled={readOnly}
              />
              {!script && partner && (
                <Select
                  label="Available to"
                  data={[
                    { value: 'partner', label: 'Every organisation (partner library)' },
                    { value: 'organization', label: 'The chosen organisation only' },
                  ]}
                  value={availability}
                  onChange={(v) => v && setAvailability(v as typeof availability)}
                  allowDeselect={false}
                />
              )}
            </Group>
            {noOrg && (
              <Alert color="yellow">
                Choose an organisation in “Scripts of” first, or make the script available to every organisation.
              </Alert>
            )}
            <Textarea
              label="Script"
              required
              autosize
              minRows={10}
              maxRows={24}
              ff="monospace"
              value={text}
              onChange={(e) => setContent(e.currentTarget.value)}
              readOnly={readOnly}
              spellCheck={false}
            />
            {save.isError && (
              <Alert color="red" role="alert">
                {explain(save.error)}
              </Alert>
            )}
            {!readOnly && (
              <Button type="submit" loading={save.isPending} disabled={!name.trim() || !text || noOrg}>
                {script ? 'Save' : 'Create script'}
              </Button>
            )}
          </Stack>
        </form>
      )}
    </Modal>
  );
}

// The contacts import wizard: upload a CSV, dry run (nothing written), decide on the held-back fuzzy matches,
// commit, and read the per-row errors. Re-importing the same file is harmless: rows are keyed on externalId.
import { Alert, Badge, Button, FileInput, Group, SegmentedControl, Stack, Stepper, Table, Text } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { explain } from '../../lib/errors';
import { can, useMe } from '../../hooks/me';
import { done } from './common';
import { NoOrganisation, useOrgChoice } from '../../hooks/org-choice';

interface RowResult {
  line: number;
  externalId: string | null;
  status: 'created' | 'updated' | 'unchanged' | 'held_back' | 'failed';
  contactId?: string;
  match?: { contactId: string; reason: 'email' | 'name'; score: number };
  errors?: string[];
}
interface ImportResult {
  summary: { created: number; updated: number; unchanged: number; heldBack: number; failed: number };
  rows: RowResult[];
}
type Decision = 'merge' | 'create' | 'skip';

/** Above this size the file goes as text/csv (streamed, up to 50 MiB) instead of inside the JSON body (1 MiB). */
const JSON_LIMIT = 900_000;
const SHOWN = 200;

async function runImport(
  orgId: string,
  csv: string,
  dryRun: boolean,
  acknowledge: { externalId: string; action: 'merge' | 'create' }[],
): Promise<ImportResult> {
  if (csv.length < JSON_LIMIT)
    return (await call(
      api.POST('/api/v1/contacts/import', { body: { orgId, csv, dryRun, acknowledge } }),
    )) as ImportResult;
  return (await call(
    api.POST('/api/v1/contacts/import', {
      params: {
        query: {
          orgId,
          dryRun: dryRun ? 'true' : 'false',
          ...(acknowledge.length ? { acknowledge: JSON.stringify(acknowledge) } : {}),
        },
      },
      body: csv,
      bodySerializer: (b: unknown) => b as string,
      headers: { 'content-type': 'text/csv' },
    }),
  )) as ImportResult;
}

function Summary({ r, dry }: { r: ImportResult; dry: boolean }) {
  const s = r.summary;
  const verb = dry ? 'would be ' : '';
  return (
    <Group gap="lg" data-testid="import-summary" aria-label="Import summary" role="group">
      <Text size="sm">
        <b>{s.created}</b> {verb}created
      </Text>
      <Text size="sm">
        <b>{s.updated}</b> {verb}updated
      </Text>
      <Text size="sm">
        <b>{s.unchanged}</b> unchanged
      </Text>
      <Text size="sm">
        <b>{s.heldBack}</b> held back
      </Text>
      <Text size="sm" c={s.failed ? 'red.9' : undefined}>
        <b>{s.failed}</b> with errors
      </Text>
    </Group>
  );
}

function RowErrors({ rows }: { rows: RowResult[] }) {
  const bad = rows.filter((r) => r.status === 'failed');
  if (!bad.length) return null;
  return (
    <Stack gap="xs">
      <Text fw={700} size="sm">
        Rows with errors (skipped){bad.length > SHOWN ? `: the first ${SHOWN} of ${bad.length}` : ''}
      </Text>
      <Table data-testid="row-errors">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Line</Table.Th>
            <Table.Th>External ID</Table.Th>
            <Table.Th>Problem</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {bad.slice(0, SHOWN).map((r) => (
            <Table.Tr key={r.line}>
              <Table.Td>{r.line}</Table.Td>
              <Table.Td>{r.externalId ?? '—'}</Table.Td>
              <Table.Td>{(r.errors ?? []).join('; ')}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Stack>
  );
}

/** The existing contact a held-back row resembles, so the person deciding sees both. */
function ExistingContact({ id }: { id: string }) {
  const c = useQuery({
    queryKey: ['contact', id],
    queryFn: () => call(api.GET('/api/v1/contacts/{id}', { params: { path: { id } } })),
  });
  if (c.isPending) return <Text size="sm">Loading…</Text>;
  if (c.isError) return <Text size="sm">{explain(c.error)}</Text>;
  const name = [c.data.firstName, c.data.lastName].filter(Boolean).join(' ');
  return (
    <Text size="sm">
      {name || '(no name)'}
      {c.data.email ? ` · ${c.data.email}` : ''}
      {c.data.externalId ? ` · ${c.data.externalId}` : ''}
    </Text>
  );
}

export default function ContactsImport() {
  const me = useMe();
  const org = useOrgChoice();
  const write = can(me.data, 'organizations:write');
  const [file, setFile] = useState<File | null>(null);
  const [csv, setCsv] = useState<string | null>(null);
  const [dry, setDry] = useState<ImportResult | null>(null);
  const [decisions, setDecisions] = useState<Record<string, Decision>>({});
  const [result, setResult] = useState<ImportResult | null>(null);
  const step = result ? 2 : dry ? 1 : 0;

  const reset = () => {
    setDry(null);
    setResult(null);
    setDecisions({});
  };
  const pick = async (f: File | null) => {
    setFile(f);
    reset();
    setCsv(f ? await f.text() : null);
  };
  const dryRun = useMutation({
    mutationFn: () => runImport(org.orgId!, csv!, true, []),
    onSuccess: (r) => {
      setDry(r);
      setDecisions(
        Object.fromEntries(
          r.rows
            .filter((x) => x.status === 'held_back' && x.externalId)
            .map((x) => [x.externalId!, 'skip' as Decision]),
        ),
      );
    },
  });
  const commit = useMutation({
    mutationFn: () => {
      const acknowledge = Object.entries(decisions)
        .filter(([, d]) => d !== 'skip')
        .map(([externalId, action]) => ({ externalId, action: action as 'merge' | 'create' }));
      return runImport(org.orgId!, csv!, false, acknowledge);
    },
    onSuccess: (r) => {
      setResult(r);
      done(`Import done: ${r.summary.created} created, ${r.summary.updated} updated.`);
    },
  });

  if (!write)
    return (
      <Text c="dimmed">
        Importing contacts needs the organizations:write permission, which your role does not hold.
      </Text>
    );
  if (org.orgsError)
    return (
      <Alert color="red" role="alert">
        {explain(org.orgsError)}
      </Alert>
    );
  if (org.noOrg) return <NoOrganisation />;
  const held = dry?.rows.filter((r) => r.status === 'held_back') ?? [];
  const setAll = (d: Decision) => setDecisions(Object.fromEntries(Object.keys(decisions).map((k) => [k, d])));

  return (
    <Stack>
      <Stepper active={step} size="sm" allowNextStepsSelect={false}>
        <Stepper.Step label="Upload" description="A CSV file" />
        <Stepper.Step label="Check" description="Dry run and matches" />
        <Stepper.Step label="Import" description="Result" />
      </Stepper>
      {step === 0 && (
        <Stack>
          <Text size="sm">
            Columns: <code>externalId</code> (or <code>previousId</code>), <code>firstName</code>, <code>lastName</code>
            , <code>email</code>, <code>phone</code>, <code>title</code>, <code>site</code>. Each row needs an ID and a
            name or an e-mail.
          </Text>
          <Group align="end">
            {org.picker}
            <FileInput
              label="CSV file"
              placeholder="Choose a file"
              accept=".csv,text/csv"
              value={file}
              onChange={(f) => void pick(f)}
              clearable
              w={320}
            />
          </Group>
          {dryRun.isError && (
            <Alert color="red" role="alert">
              {explain(dryRun.error)}
            </Alert>
          )}
          <Group>
            <Button onClick={() => dryRun.mutate()} loading={dryRun.isPending} disabled={!csv || !org.orgId}>
              Check the file (dry run)
            </Button>
          </Group>
        </Stack>
      )}
      {step === 1 && dry && (
        <Stack>
          <Text size="sm">
            Nothing is written yet. This is what the import would do{org.orgName ? ` in ${org.orgName}` : ''}:
          </Text>
          <Summary r={dry} dry />
          {held.length > 0 && (
            <Stack gap="xs">
              <Alert color="yellow" title="Possible duplicates held back">
                These rows resemble contacts that already exist. Decide for each: merge into the existing contact,
                create a new one, or leave it out of this import.
              </Alert>
              <Group gap="xs">
                <Button size="xs" variant="default" onClick={() => setAll('merge')}>
                  Merge all
                </Button>
                <Button size="xs" variant="default" onClick={() => setAll('create')}>
                  Create all
                </Button>
                <Button size="xs" variant="default" onClick={() => setAll('skip')}>
                  Leave all out
                </Button>
              </Group>
              <Table data-testid="held-back">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Line</Table.Th>
                    <Table.Th>External ID</Table.Th>
                    <Table.Th>Resembles</Table.Th>
                    <Table.Th>Why</Table.Th>
                    <Table.Th>Decision</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {held.slice(0, SHOWN).map((r) => (
                    <Table.Tr key={r.line}>
                      <Table.Td>{r.line}</Table.Td>
                      <Table.Td>{r.externalId ?? '—'}</Table.Td>
                      <Table.Td>{r.match && <ExistingContact id={r.match.contactId} />}</Table.Td>
                      <Table.Td>
                        <Badge variant="light" color="blue">
                          {r.match?.reason === 'email'
                            ? 'same e-mail'
                            : `similar name (${Math.round((r.match?.score ?? 0) * 100)}%)`}
                        </Badge>
                      </Table.Td>
                      <Table.Td>
                        {r.externalId && (
                          <SegmentedControl
                            size="xs"
                            aria-label={`Decision for line ${r.line}`}
                            value={decisions[r.externalId] ?? 'skip'}
                            onChange={(v) => setDecisions({ ...decisions, [r.externalId!]: v as Decision })}
                            data={[
                              { value: 'merge', label: 'Merge' },
                              { value: 'create', label: 'Create new' },
                              { value: 'skip', label: 'Leave out' },
                            ]}
                          />
                        )}
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
              {held.length > SHOWN && (
                <Text size="sm">
                  The first {SHOWN} of {held.length} held-back rows are listed; “Merge all”, “Create all” and “Leave all
                  out” apply to every one.
                </Text>
              )}
            </Stack>
          )}
          <RowErrors rows={dry.rows} />
          {commit.isError && (
            <Alert color="red" role="alert">
              {explain(commit.error)}
            </Alert>
          )}
          <Group>
            <Button variant="default" onClick={reset}>
              Back
            </Button>
            <Button onClick={() => commit.mutate()} loading={commit.isPending}>
              Import now
            </Button>
          </Group>
        </Stack>
      )}
      {step === 2 && result && (
        <Stack>
          <Alert color="green" title="Imported">
            The contacts are in{org.orgName ? ` ${org.orgName}` : ''}. Importing the same file again changes nothing.
          </Alert>
          <Summary r={result} dry={false} />
          <RowErrors rows={result.rows} />
          <Group>
            <Button
              variant="default"
              onClick={() => {
                reset();
                void pick(null);
              }}
            >
              Import another file
            </Button>
          </Group>
        </Stack>
      )}
    </Stack>
  );
}

// The custom-fields import wizard: a CSV, which column names the entity, which column fills which field (mapping),
// a preview of every row (nothing written), then the commit.
import {
  Alert,
  Badge,
  Button,
  Card,
  FileInput,
  Group,
  Select,
  Stack,
  Stepper,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { explain } from '../../lib/errors';
import { csvHeader, done } from './common';
import { ENTITY_LABELS, useDefinitions, type EntityType } from '../../hooks/custom-fields';

interface Preview {
  summary: { valid: number; unmatched: number; invalid: number };
  rows: { line: number; entityId: string | null; status: 'valid' | 'unmatched' | 'invalid'; errors?: string[] }[];
}

const MATCH_HINT: Record<EntityType, string> = {
  device: 'the device hostname',
  site: 'the site name',
  organization: 'the organisation name or short name',
  contact: 'the contact’s external ID or e-mail',
};
const SKIP = '';
const SHOWN = 200;

export function CustomFieldsImport({ orgId, write }: { orgId: string; write: boolean }) {
  const [entityType, setEntityType] = useState<EntityType>('device');
  const defs = useDefinitions(orgId, entityType);
  const [file, setFile] = useState<File | null>(null);
  const [csv, setCsv] = useState<string | null>(null);
  const [headers, setHeaders] = useState<string[]>([]);
  const [matchColumn, setMatchColumn] = useState<string | null>(null);
  const [mapping, setMapping] = useState<Record<string, string>>({});
  const [preview, setPreview] = useState<Preview | null>(null);
  const [written, setWritten] = useState<{ written: number; skipped: number } | null>(null);
  const step = written ? 3 : preview ? 2 : csv ? 1 : 0;

  const pick = async (f: File | null) => {
    setFile(f);
    setPreview(null);
    setWritten(null);
    const text = f ? await f.text() : null;
    setCsv(text);
    const h = text ? csvHeader(text) : [];
    setHeaders(h);
    setMatchColumn(h[0] ?? null);
    // Columns named like a field's key or name map to it at once.
    const byName = new Map(
      (defs.data ?? []).flatMap((d) => [[d.key.toLowerCase(), d.key] as const, [d.name.toLowerCase(), d.key] as const]),
    );
    setMapping(Object.fromEntries(h.slice(1).map((c) => [c, byName.get(c.toLowerCase()) ?? SKIP])));
  };
  const body = () => ({
    orgId,
    entityType,
    csv: csv!,
    matchColumn: matchColumn!,
    mapping: Object.fromEntries(Object.entries(mapping).filter(([c, k]) => k !== SKIP && c !== matchColumn)),
  });
  const mapped = Object.entries(mapping).filter(([c, k]) => k !== SKIP && c !== matchColumn).length;
  const check = useMutation({
    mutationFn: async () => (await call(api.POST('/api/v1/custom-fields/import/preview', { body: body() }))) as Preview,
    onSuccess: setPreview,
  });
  const commit = useMutation({
    mutationFn: async () => (await call(api.POST('/api/v1/custom-fields/import/commit', { body: body() }))).summary,
    onSuccess: (s) => {
      setWritten(s);
      done(`Values written for ${s.written} row${s.written === 1 ? '' : 's'}.`);
    },
  });
  const restart = () => {
    void pick(null);
    check.reset();
    commit.reset();
  };
  const problems = preview?.rows.filter((r) => r.status !== 'valid') ?? [];

  return (
    <Card withBorder component="section" aria-label="Import values">
      <Title order={2} size="h4" mb="sm">
        Import values
      </Title>
      <Stack>
        <Stepper active={step} size="sm" allowNextStepsSelect={false}>
          <Stepper.Step label="File" />
          <Stepper.Step label="Mapping" />
          <Stepper.Step label="Preview" />
          <Stepper.Step label="Done" />
        </Stepper>
        {step === 0 && (
          <Group align="end">
            <Select
              label="Values of"
              data={Object.entries(ENTITY_LABELS).map(([value, label]) => ({ value, label }))}
              value={entityType}
              onChange={(v) => v && setEntityType(v as EntityType)}
              allowDeselect={false}
              w={200}
            />
            <FileInput
              label="CSV file"
              placeholder="Choose a file"
              accept=".csv,text/csv"
              value={file}
              onChange={(f) => void pick(f)}
              w={320}
            />
          </Group>
        )}
        {step === 1 && (
          <Stack>
            <Text size="sm">
              Choose the column that identifies each {ENTITY_LABELS[entityType].toLowerCase().replace(/s$/, '')} (
              {MATCH_HINT[entityType]}), then the field each other column fills. Empty cells leave a value unchanged.
            </Text>
            <Select
              label="Identifying column"
              data={headers}
              value={matchColumn}
              onChange={setMatchColumn}
              allowDeselect={false}
              w={320}
            />
            {defs.isError && (
              <Alert color="red" role="alert">
                {explain(defs.error)}
              </Alert>
            )}
            {defs.isSuccess && defs.data.length === 0 && (
              <Alert color="yellow">
                There is no custom field of {ENTITY_LABELS[entityType].toLowerCase()} yet. Define one above first.
              </Alert>
            )}
            <Table data-testid="mapping">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Column</Table.Th>
                  <Table.Th>Fills the field</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {headers
                  .filter((c) => c !== matchColumn)
                  .map((c) => (
                    <Table.Tr key={c}>
                      <Table.Td>{c}</Table.Td>
                      <Table.Td>
                        <Select
                          aria-label={`Field for column ${c}`}
                          data={[
                            { value: SKIP, label: 'Do not import' },
                            ...(defs.data ?? []).map((d) => ({ value: d.key, label: `${d.name} (${d.key})` })),
                          ]}
                          value={mapping[c] ?? SKIP}
                          onChange={(v) => setMapping({ ...mapping, [c]: v ?? SKIP })}
                          allowDeselect={false}
                          w={320}
                        />
                      </Table.Td>
                    </Table.Tr>
                  ))}
              </Table.Tbody>
            </Table>
            {check.isError && (
              <Alert color="red" role="alert">
                {explain(check.error)}
              </Alert>
            )}
            <Group>
              <Button variant="default" onClick={restart}>
                Back
              </Button>
              <Button onClick={() => check.mutate()} loading={check.isPending} disabled={!matchColumn || mapped === 0}>
                Preview
              </Button>
            </Group>
          </Stack>
        )}
        {step === 2 && preview && (
          <Stack>
            <Group gap="lg" data-testid="preview-summary">
              <Text size="sm">
                <b>{preview.summary.valid}</b> ready
              </Text>
              <Text size="sm">
                <b>{preview.summary.unmatched}</b> not found
              </Text>
              <Text size="sm">
                <b>{preview.summary.invalid}</b> with errors
              </Text>
            </Group>
            {problems.length > 0 && (
              <Table data-testid="preview-problems">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Line</Table.Th>
                    <Table.Th>Status</Table.Th>
                    <Table.Th>Problem</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {problems.slice(0, SHOWN).map((r) => (
                    <Table.Tr key={r.line}>
                      <Table.Td>{r.line}</Table.Td>
                      <Table.Td>
                        <Badge variant="light" color={r.status === 'unmatched' ? 'gray' : 'red'}>
                          {r.status === 'unmatched' ? 'not found' : 'invalid'}
                        </Badge>
                      </Table.Td>
                      <Table.Td>
                        {r.status === 'unmatched' ? `No ${entityType} matches this row.` : (r.errors ?? []).join('; ')}
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            )}
            {problems.length > SHOWN && (
              <Text size="sm">
                The first {SHOWN} of {problems.length} rows with problems are listed.
              </Text>
            )}
            {!write && (
              <Text c="dimmed">
                Writing the values needs the settings:write permission, which your role does not hold.
              </Text>
            )}
            {commit.isError && (
              <Alert color="red" role="alert">
                {explain(commit.error)}
              </Alert>
            )}
            <Group>
              <Button variant="default" onClick={() => setPreview(null)}>
                Back
              </Button>
              {write && (
                <Button
                  onClick={() => commit.mutate()}
                  loading={commit.isPending}
                  disabled={preview.summary.valid === 0}
                >
                  Write {preview.summary.valid} row{preview.summary.valid === 1 ? '' : 's'}
                </Button>
              )}
            </Group>
          </Stack>
        )}
        {step === 3 && written && (
          <Stack>
            <Alert color="green" title="Values written">
              {written.written} row{written.written === 1 ? '' : 's'} written, {written.skipped} skipped (not found or
              invalid).
            </Alert>
            <Group>
              <Button variant="default" onClick={restart}>
                Import another file
              </Button>
            </Group>
          </Stack>
        )}
      </Stack>
    </Card>
  );
}

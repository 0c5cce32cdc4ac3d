// The custom-field import wizard: a CSV whose match column names an entity of one
// organisation and whose mapped columns carry field values. Preview reads and reports every row; commit runs the same
// analysis and writes every valid row in one transaction with the audit record, imports into one organisation taking
// turns. Empty cells leave a value unchanged (PUT /custom-fields/values with null clears one), so a re-commit of the
// same file changes nothing.
import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import { isStorable } from '../config-items/index.js';
import { accessibleOrg } from '../tenants/index.js';
import { entityMatcher } from './entities.js';
import { lockImport, upsertValues } from './repo.js';
import type { ImportInput } from './schemas.js';
import { applicableDefinitions } from './service.js';
import { parseCell, type FieldDef, type FieldValue } from './values.js';

const MAX_ROWS = 100_000;
const BATCH = 500;

export interface ImportRow {
  line: number;
  entityId: string | null;
  status: 'valid' | 'unmatched' | 'invalid';
  errors?: string[];
}
interface Write {
  entityId: string;
  definitionId: string;
  value: FieldValue;
}

const invalidMapping = (fieldErrors: Record<string, string[]>) =>
  new AppError('validation_failed', 'The mapping names unknown fields.', { details: { fieldErrors, formErrors: [] } });

async function analyse(db: Executor, p: Principal, input: ImportInput) {
  const org = await accessibleOrg(db, p, input.orgId);
  const byKey = new Map(
    (await applicableDefinitions(db, org.partnerId, org.id, input.entityType)).map((d) => [d.key, d]),
  );
  const mapped: [string, FieldDef][] = [];
  const fieldErrors: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  const usedKeys = new Map<string, string>();
  for (const [column, key] of Object.entries(input.mapping)) {
    const def = byKey.get(key);
    if (!def) fieldErrors[`mapping.${column}`] = [`no ${input.entityType} field "${key}" in this organization`];
    else if (usedKeys.has(key))
      fieldErrors[`mapping.${column}`] = [`field "${key}" is also mapped from column "${usedKeys.get(key)}"`];
    else {
      usedKeys.set(key, column);
      mapped.push([column, def]);
    }
  }
  if (Object.keys(fieldErrors).length) throw invalidMapping(fieldErrors);
  const match = await entityMatcher(db, p, input.entityType, org);

  const rows: ImportRow[] = [];
  const writes: Write[] = [];
  const summary = { valid: 0, unmatched: 0, invalid: 0 };
  const seen = new Map<string, number>();
  let header: string[] | null = null;
  const parser = Readable.from([input.csv]).pipe(
    parse({
      bom: true,
      trim: true,
      skip_empty_lines: true,
      info: true,
      max_record_size: 64 * 1024,
      columns: (names: string[]) => {
        if (new Set(names).size !== names.length) throw new AppError('invalid_csv', 'The header names a column twice.');
        return names;
      },
    }),
  );
  try {
    for await (const { record, info } of parser as AsyncIterable<{
      record: Record<string, string>;
      info: { lines: number };
    }>) {
      if (!header) {
        header = Object.keys(record);
        const missing = [input.matchColumn, ...mapped.map(([c]) => c)].filter((c) => !header!.includes(c));
        if (missing.length)
          throw new AppError('invalid_csv', `The file has no column ${missing.map((m) => `"${m}"`).join(', ')}.`);
      }
      if (rows.length >= MAX_ROWS) throw new AppError('invalid_csv', `At most ${MAX_ROWS} rows per import.`);
      const line = info.lines;
      const invalid = (errors: string[], entityId: string | null = null) => {
        summary.invalid++;
        rows.push({ line, entityId, status: 'invalid', errors });
      };
      const needle = record[input.matchColumn] ?? '';
      if (!needle) {
        invalid([`${input.matchColumn}: empty`]);
        continue;
      }
      const ids = match(needle);
      if (ids.length === 0) {
        summary.unmatched++;
        rows.push({ line, entityId: null, status: 'unmatched' });
        continue;
      }
      if (ids.length > 1) {
        invalid([`${input.matchColumn}: "${needle}" matches ${ids.length} ${input.entityType}s`]);
        continue;
      }
      const entityId = ids[0]!;
      const errors: string[] = [];
      const rowWrites: Write[] = [];
      for (const [column, def] of mapped) {
        const cell = record[column] ?? '';
        if (cell === '') continue;
        if (!isStorable(cell)) {
          errors.push(`${column}: must not contain NUL characters or unpaired surrogates`);
          continue;
        }
        const checked = parseCell(def, cell);
        if (checked.ok) rowWrites.push({ entityId, definitionId: def.id, value: checked.value });
        else errors.push(`${column}: ${checked.message}`);
      }
      const earlier = seen.get(entityId);
      if (earlier !== undefined) errors.push(`${input.matchColumn}: the same ${input.entityType} as line ${earlier}`);
      if (errors.length) {
        invalid(errors, entityId);
        continue;
      }
      seen.set(entityId, line);
      writes.push(...rowWrites);
      summary.valid++;
      rows.push({ line, entityId, status: 'valid' });
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    const e = err as { code?: string; message?: string; lines?: number };
    if (typeof e.code === 'string' && e.code.startsWith('CSV_'))
      throw new AppError(
        'invalid_csv',
        `The CSV could not be read${e.lines ? ` (line ${e.lines})` : ''}: ${e.message}`,
      );
    throw err;
  }
  if (!header) throw new AppError('invalid_csv', 'The file has no rows.');
  return { org, summary, rows, writes, fields: [...usedKeys.keys()].sort() };
}

export async function previewImport(deps: Deps, p: Principal, input: ImportInput) {
  const { summary, rows } = await analyse(deps.db, p, input);
  return { summary, rows };
}

export async function commitImport(deps: Deps, p: Principal, input: ImportInput, meta: AuditRequestMeta) {
  return deps.db.transaction(async (tx) => {
    await lockImport(tx, input.orgId);
    const { org, summary, writes, fields } = await analyse(tx, p, input);
    const now = deps.clock.now();
    for (let i = 0; i < writes.length; i += BATCH) {
      await upsertValues(tx, writes.slice(i, i + BATCH), now);
    }
    const result = { written: summary.valid, skipped: summary.unmatched + summary.invalid };
    await deps.audit.record(
      tx,
      {
        action: 'custom_field.import',
        actor: actorOf(p),
        partnerId: org.partnerId,
        orgId: org.id,
        resourceType: 'organization',
        resourceId: org.id,
        details: { entityType: input.entityType, fields, ...result, values: writes.length },
      },
      meta,
    );
    return { summary: result };
  });
}

// Contacts CSV import: streamed through csv-parse, idempotent on externalId (or the
// previous tool's id), fuzzy matches held back until acknowledged, bad rows reported and skipped, dry run writes
// nothing. The writes and the audit record share one transaction; imports into one organisation take turns.
// Linear in rows whatever the data: matching goes through hash indexes (matching.ts), writes go in batches, and the
// loop hands the event loop back every few milliseconds so one import never stalls other requests.
import { randomUUID } from 'node:crypto';
import { pipeline, type Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { parse } from 'csv-parse';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { actorOf, type AuditRequestMeta } from '../audit/index.js';
import { accessibleOrg } from '../tenants/index.js';
import { ImportReport, type ImportSummary } from './import-report.js';
import { ContactIndex, flat, type ContactFields } from './matching.js';
import {
  type ContactWrite,
  contactPage,
  insertContactBatch,
  lockOrgImports,
  siteNamesOf,
  updateContactBatch,
} from './repo.js';

/** A new contact id as a flat string (see `flat`): the index keeps every id until the answer is written. */
const newId = () => {
  const id = randomUUID();
  return flat(id.slice(0, 18), id.slice(18));
};

export const COLUMNS = [
  'externalId',
  'previousId',
  'firstName',
  'lastName',
  'email',
  'phone',
  'title',
  'site',
] as const;
/**
 * Rows per INSERT / UPDATE statement. The embedded database executes a statement inside the main thread, so its
 * batches stay small enough (~10 ms) not to stall other requests; PostgreSQL takes bigger ones over the socket.
 */
const BATCH = { postgres: 500, pglite: 100 } as const;
const LOAD_BATCH = 5000;
/** The longest the import keeps the event loop before letting other requests run. */
const SLICE_MS = 8;

/** Longest accepted value per column. */
const MAX_LENGTH: Record<(typeof COLUMNS)[number], number> = {
  externalId: 255,
  previousId: 255,
  firstName: 255,
  lastName: 255,
  email: 255,
  phone: 32,
  title: 255,
  site: 255,
};
const PHONE = /^[+0-9][0-9 ()./-]{2,31}$/;
const EMAIL = z.regexes.email;

type Record8 = Record<string, string | undefined>;
type Values = Record<(typeof COLUMNS)[number], string | null>;

/**
 * Checks one row and gives its values (empty = null) or its errors, "<column>: <message>". Written by hand, not a zod
 * schema per row: a 100,000-row file spent more time building zod's issue objects than doing anything else.
 */
export function checkRow(record: Record8): { values: Values; errors: null } | { values: null; errors: string[] } {
  let errors: string[] | null = null;
  const fail = (message: string) => (errors ??= []).push(message);
  const values = {} as Values;
  for (const column of COLUMNS) {
    const raw = record[column] ?? '';
    const max = MAX_LENGTH[column];
    let ok = true;
    if (raw.length > max) {
      fail(`${column}: at most ${max} characters`);
      ok = false;
    }
    if (raw.includes('\u0000')) {
      fail(`${column}: contains a NUL character`);
      ok = false;
    }
    if (ok && raw !== '') {
      if (column === 'email' && !EMAIL.test(raw)) fail('email: not an email address');
      if (column === 'phone' && !PHONE.test(raw)) fail('phone: not a phone number');
    }
    values[column] = raw === '' ? null : raw;
  }
  if (!values.externalId && !values.previousId) fail('externalId: externalId or previousId is required');
  if (!values.firstName && !values.lastName && !values.email) fail('firstName: a name or an email is required');
  return errors ? { values: null, errors } : { values, errors: null };
}

/** The header, checked before any row: a repeated column would otherwise silently win over its twin. */
function checkHeader(names: string[]): string[] {
  const unknown = names.filter((h) => !(COLUMNS as readonly string[]).includes(h));
  if (unknown.length)
    throw new AppError('invalid_csv', `Unknown columns: ${unknown.join(', ')}. Expected: ${COLUMNS.join(', ')}.`);
  const repeated = [...new Set(names.filter((h, i) => names.indexOf(h) !== i))];
  if (repeated.length) throw new AppError('invalid_csv', `Columns appear more than once: ${repeated.join(', ')}.`);
  if (!names.includes('externalId') && !names.includes('previousId'))
    throw new AppError('invalid_csv', 'The file needs an externalId or a previousId column.');
  return names;
}

export interface ImportRequest {
  orgId: string;
  dryRun: boolean;
  acknowledge: { externalId: string; action: 'merge' | 'create' }[];
}
type ImportOptions = ImportRequest & { partnerId: string };

export interface ImportResult {
  summary: ImportSummary;
  /** One entry per data row, in file order (`rows.json()` writes the whole answer). */
  rows: ImportReport;
}

/** Yields to the event loop when the current slice of synchronous work has run for SLICE_MS. */
function slicer() {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < SLICE_MS) return;
    await nextTurn();
    since = performance.now();
  };
}

/** Indexes the organisation's contacts page by page (keyset): no page outlives its indexing. */
async function loadContacts(
  tx: Executor,
  orgId: string,
  index: ContactIndex,
  breathe: () => Promise<void>,
): Promise<void> {
  let after: string | null = null;
  for (;;) {
    const page = await contactPage(tx, orgId, after, LOAD_BATCH);
    for (const c of page) {
      index.add(c.id, c);
      await breathe();
    }
    if (page.length < LOAD_BATCH) return;
    after = page[page.length - 1]!.id;
  }
}

type Write = ContactWrite;

/**
 * Pending writes, flushed in batches: new contacts as one INSERT per batch, changed ones as one UPDATE per batch.
 * A change that re-keys a contact (externalId or previousId) is written at once, in file order, so the unique keys
 * never see two contacts holding the same id at the same time.
 */
class Writer {
  private inserts = new Map<string, Write>();
  private updates = new Map<string, Write>();
  constructor(
    private readonly tx: Executor,
    private readonly orgId: string,
    private readonly now: Date,
    private readonly enabled: boolean,
    private readonly batch: number,
  ) {}

  async insert(w: Write) {
    if (!this.enabled) return;
    this.inserts.set(w.id, w);
    if (this.inserts.size >= this.batch) await this.flush();
  }

  async update(w: Write, rekeys: boolean) {
    if (!this.enabled) return;
    const pending = this.inserts.get(w.id);
    if (pending) {
      // Created earlier in this file and not written yet: the INSERT carries the final values.
      if (rekeys) await this.flush();
      else return void this.inserts.set(w.id, w);
    }
    this.updates.set(w.id, w);
    if (rekeys || this.updates.size >= this.batch) await this.flush();
  }

  async flush() {
    const at = this.now.toISOString();
    // Each statement's JSON is built when it is called, before the pending map is cleared.
    if (this.updates.size) {
      const written = updateContactBatch(this.tx, this.orgId, this.updates.values(), at);
      this.updates.clear();
      await written;
    }
    if (this.inserts.size) {
      const written = insertContactBatch(this.tx, this.orgId, this.inserts.values(), at);
      this.inserts.clear();
      await written;
    }
  }
}

/** Imports into an organisation the caller may act on (404 otherwise, before the file is read). */
export async function importContacts(
  deps: Deps,
  p: Principal,
  source: Readable,
  request: ImportRequest,
  meta: AuditRequestMeta,
): Promise<ImportResult> {
  const org = await accessibleOrg(deps.db, p, request.orgId);
  const opts: ImportOptions = { ...request, orgId: org.id, partnerId: org.partnerId };
  const run = async (tx: Executor): Promise<ImportResult> => {
    if (!opts.dryRun) await lockOrgImports(tx, opts.orgId);
    const breathe = slicer();
    const siteRows = await siteNamesOf(tx, opts.orgId);
    const siteByName = new Map(siteRows.map((s) => [s.name.trim().toLowerCase(), s.id]));
    const index = new ContactIndex();
    await loadContacts(tx, opts.orgId, index, breathe);
    const ack = new Map(opts.acknowledge.map((a) => [a.externalId, a.action]));
    // Keys met in this file (externalId and previousId apart, as the unique indexes are).
    const seenExternal = new Set<string>();
    const seenPrevious = new Set<string>();
    const report = new ImportReport(index);
    const writer = new Writer(tx, opts.orgId, deps.clock.now(), !opts.dryRun, BATCH[deps.database.kind]);
    const change = async (at: number, f: ContactFields) => {
      const rekeys = index.externalIdOf(at) !== f.externalId || index.previousIdOf(at) !== f.previousId;
      await writer.update({ ...f, id: index.idOf(at) }, rekeys);
      index.update(at, f);
    };

    const parser = parse({
      columns: checkHeader,
      bom: true,
      trim: true,
      skip_empty_lines: true,
      info: true,
      relax_quotes: false,
      max_record_size: 64 * 1024,
    });
    // pipeline, not pipe: an error of the source (413, an aborted upload) ends the loop below instead of stalling it.
    pipeline(source, parser, () => {});
    try {
      for await (const { record, info } of parser as AsyncIterable<{ record: Record8; info: { lines: number } }>) {
        await breathe();
        const line = info.lines;
        const externalId = record.externalId || null;
        const checked = checkRow(record);
        if (!checked.values) {
          report.fail(line, externalId, checked.errors);
          continue;
        }
        const r = checked.values;
        const siteId = r.site ? (siteByName.get(r.site.trim().toLowerCase()) ?? null) : null;
        if (r.site && !siteId) {
          report.fail(line, externalId, [`site: no site named "${r.site}" in this organization`]);
          continue;
        }
        if ((r.externalId && seenExternal.has(r.externalId)) || (r.previousId && seenPrevious.has(r.previousId))) {
          report.fail(line, externalId, ['externalId: appears more than once in the file']);
          continue;
        }
        if (r.externalId) seenExternal.add(r.externalId);
        if (r.previousId) seenPrevious.add(r.previousId);
        const fields: ContactFields = {
          externalId: r.externalId,
          previousId: r.previousId,
          firstName: r.firstName,
          lastName: r.lastName,
          email: r.email,
          phone: r.phone,
          title: r.title,
          siteId,
        };

        const hit = index.exact(r.externalId, r.previousId);
        const previousOwner = r.previousId ? index.exact(null, r.previousId) : -1;
        if (hit >= 0 && previousOwner >= 0 && previousOwner !== hit) {
          report.fail(line, externalId, [
            `previousId: "${r.previousId}" belongs to another contact (externalId ${index.externalIdOf(previousOwner) ?? 'none'})`,
          ]);
          continue;
        }
        if (hit >= 0) {
          const merged: ContactFields = {
            ...fields,
            externalId: fields.externalId ?? index.externalIdOf(hit),
            previousId: fields.previousId ?? index.previousIdOf(hit),
          };
          if (index.holds(hit, merged)) report.add(line, externalId, 'unchanged', hit);
          else {
            await change(hit, merged);
            report.add(line, externalId, 'updated', hit);
          }
          continue;
        }
        const fuzzy = index.fuzzy(fields);
        const decision = r.externalId ? ack.get(r.externalId) : undefined;
        if (fuzzy && decision === 'merge') {
          await change(fuzzy.at, fields);
          report.add(line, externalId, 'updated', fuzzy.at, fuzzy);
          continue;
        }
        if (fuzzy && decision !== 'create') {
          report.add(line, externalId, 'held_back', -1, fuzzy);
          continue;
        }
        const id = newId();
        await writer.insert({ ...fields, id });
        const at = index.add(id, fields);
        report.add(line, externalId, 'created', opts.dryRun ? -1 : at);
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
    if (report.length === 0) throw new AppError('invalid_csv', 'The file has no rows.');
    await writer.flush();
    const summary = report.summary;
    if (!opts.dryRun) {
      await deps.audit.record(
        tx,
        {
          action: 'contact.import',
          actor: actorOf(p),
          partnerId: opts.partnerId,
          orgId: opts.orgId,
          resourceType: 'organization',
          resourceId: opts.orgId,
          details: { summary, rows: report.length },
        },
        meta,
      );
    }
    return { summary, rows: report };
  };
  return opts.dryRun ? run(deps.db) : deps.db.transaction((tx) => run(tx));
}

/** The import's answer as a byte stream of JSON (see ImportReport.json). */
export const importResultJson = (result: ImportResult): AsyncGenerator<string> => result.rows.json();

// Contacts CSV import (spec 1.7, 2.12; CONTRACT 7): streamed through csv-parse, idempotent on externalId (or the
// previous tool's id), fuzzy matches held back until acknowledged, bad rows reported and skipped, dry run writes
// nothing. The writes and the audit record share one transaction; imports into one organisation take turns.
// Linear in rows whatever the data: matching goes through hash indexes (matching.ts), writes go in batches, and the
// loop hands the event loop back every few milliseconds so one import never stalls other requests.
import { randomUUID } from 'node:crypto';
import { pipeline, type Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { parse } from 'csv-parse';
import { and, asc, eq, gt, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import { contacts, sites } from '../../db/schema/index.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import { actorOf, type AuditRequestMeta } from '../audit/writer.js';
import { ContactIndex, type ContactLike, type FuzzyMatch } from './matching.js';

export const COLUMNS = ['externalId', 'previousId', 'firstName', 'lastName', 'email', 'phone', 'title', 'site'] as const;
/**
 * Rows per INSERT / UPDATE statement. The embedded database executes a statement inside the main thread, so its
 * batches stay small enough (~10 ms) not to stall other requests; PostgreSQL takes bigger ones over the socket.
 */
const BATCH = { postgres: 500, pglite: 100 } as const;
const LOAD_BATCH = 5000;
/** The longest the import keeps the event loop before letting other requests run. */
const SLICE_MS = 8;

const opt = (max: number) =>
  z
    .string()
    .max(max, `at most ${max} characters`)
    .refine((s) => !s.includes('\u0000'), 'contains a NUL character')
    .transform((s) => (s === '' ? null : s))
    .nullable();
const rowSchema = z
  .object({
    externalId: opt(255),
    previousId: opt(255),
    firstName: opt(255),
    lastName: opt(255),
    email: opt(255).refine((e) => e === null || z.email().safeParse(e).success, 'not an email address'),
    phone: opt(32).refine((p) => p === null || /^[+0-9][0-9 ()./-]{2,31}$/.test(p), 'not a phone number'),
    title: opt(255),
    site: opt(255),
  })
  .refine((r) => r.externalId || r.previousId, { message: 'externalId or previousId is required', path: ['externalId'] })
  .refine((r) => r.firstName || r.lastName || r.email, { message: 'a name or an email is required', path: ['firstName'] });

export type RowStatus = 'created' | 'updated' | 'unchanged' | 'held_back' | 'failed';
export interface RowResult {
  line: number;
  externalId: string | null;
  status: RowStatus;
  contactId?: string;
  match?: FuzzyMatch;
  errors?: string[];
}

type Contact = ContactLike & { phone: string | null; title: string | null; siteId: string | null };
type Fields = Omit<Contact, 'id'>;

const same = (a: Contact, b: Fields) =>
  a.firstName === b.firstName && a.lastName === b.lastName && a.email === b.email && a.phone === b.phone && a.title === b.title && a.siteId === b.siteId && a.externalId === b.externalId && a.previousId === b.previousId;

/** The header, checked before any row: a repeated column would otherwise silently win over its twin. */
function checkHeader(names: string[]): string[] {
  const unknown = names.filter((h) => !(COLUMNS as readonly string[]).includes(h));
  if (unknown.length) throw new AppError('invalid_csv', `Unknown columns: ${unknown.join(', ')}. Expected: ${COLUMNS.join(', ')}.`);
  const repeated = [...new Set(names.filter((h, i) => names.indexOf(h) !== i))];
  if (repeated.length) throw new AppError('invalid_csv', `Columns appear more than once: ${repeated.join(', ')}.`);
  if (!names.includes('externalId') && !names.includes('previousId')) throw new AppError('invalid_csv', 'The file needs an externalId or a previousId column.');
  return names;
}

export interface ImportOptions {
  orgId: string;
  partnerId: string;
  dryRun: boolean;
  acknowledge: { externalId: string; action: 'merge' | 'create' }[];
}

export interface ImportResult {
  summary: { created: number; updated: number; unchanged: number; heldBack: number; failed: number };
  rows: RowResult[];
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

const contactColumns = { id: contacts.id, externalId: contacts.externalId, previousId: contacts.previousId, firstName: contacts.firstName, lastName: contacts.lastName, email: contacts.email, phone: contacts.phone, title: contacts.title, siteId: contacts.siteId };

/** The organisation's contacts in keyset pages: the driver never materialises one huge result at once. */
async function loadContacts(tx: Executor, orgId: string, breathe: () => Promise<void>): Promise<Contact[]> {
  const out: Contact[] = [];
  let after: string | null = null;
  for (;;) {
    const page: Contact[] = await tx
      .select(contactColumns)
      .from(contacts)
      .where(and(eq(contacts.orgId, orgId), after ? gt(contacts.id, after) : undefined))
      .orderBy(asc(contacts.id))
      .limit(LOAD_BATCH);
    for (const c of page) out.push(c);
    await breathe();
    if (page.length < LOAD_BATCH) return out;
    after = page[page.length - 1]!.id;
  }
}

type Write = Fields & { id: string; orgId: string };

/**
 * A batch travels as one JSON parameter expanded by jsonb_to_recordset: building and binding a multi-row VALUES list
 * costs about a millisecond of main-thread time per row through the ORM, the JSON text a few microseconds.
 */
const RECORD = sql.raw('id uuid, org_id uuid, site_id uuid, external_id text, previous_id text, first_name text, last_name text, email text, phone text, title text');
const recordset = (rows: Write[]) =>
  JSON.stringify(rows.map((w) => ({ id: w.id, org_id: w.orgId, site_id: w.siteId, external_id: w.externalId, previous_id: w.previousId, first_name: w.firstName, last_name: w.lastName, email: w.email, phone: w.phone, title: w.title })));

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
    if (this.updates.size) {
      const rows = recordset([...this.updates.values()]);
      this.updates.clear();
      await this.tx.execute(sql`
        update contacts c set site_id = x.site_id, external_id = x.external_id, previous_id = x.previous_id, first_name = x.first_name,
          last_name = x.last_name, email = x.email, phone = x.phone, title = x.title, updated_at = ${this.now.toISOString()}::timestamptz
        from jsonb_to_recordset(${rows}::jsonb) as x(${RECORD})
        where c.id = x.id and c.org_id = x.org_id`);
    }
    if (this.inserts.size) {
      const rows = recordset([...this.inserts.values()]);
      this.inserts.clear();
      await this.tx.execute(sql`
        insert into contacts (id, org_id, site_id, external_id, previous_id, first_name, last_name, email, phone, title, created_at, updated_at)
        select x.id, x.org_id, x.site_id, x.external_id, x.previous_id, x.first_name, x.last_name, x.email, x.phone, x.title, ${this.now.toISOString()}::timestamptz, ${this.now.toISOString()}::timestamptz
        from jsonb_to_recordset(${rows}::jsonb) as x(${RECORD})`);
    }
  }
}

export async function importContacts(deps: Deps, p: Principal, source: Readable, opts: ImportOptions, meta: AuditRequestMeta): Promise<ImportResult> {
  const run = async (tx: Executor): Promise<ImportResult> => {
    if (!opts.dryRun) await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`contacts-import:${opts.orgId}`}, 0))`);
    const breathe = slicer();
    const siteRows = await tx.select({ id: sites.id, name: sites.name }).from(sites).where(eq(sites.orgId, opts.orgId));
    const siteByName = new Map(siteRows.map((s) => [s.name.trim().toLowerCase(), s.id]));
    const existing = await loadContacts(tx, opts.orgId, breathe);
    const byId = new Map<string, Contact>();
    const index = new ContactIndex();
    for (const c of existing) {
      byId.set(c.id, c);
      index.add(c);
      await breathe();
    }
    existing.length = 0;
    const ack = new Map(opts.acknowledge.map((a) => [a.externalId, a.action]));
    const seen = new Set<string>();
    const summary = { created: 0, updated: 0, unchanged: 0, heldBack: 0, failed: 0 };
    const rows: RowResult[] = [];
    const writer = new Writer(tx, deps.clock.now(), !opts.dryRun, BATCH[deps.database.kind]);
    const rekeys = (before: Contact, after: Fields) => before.externalId !== after.externalId || before.previousId !== after.previousId;
    const change = async (target: Contact, f: Fields) => {
      await writer.update({ ...f, id: target.id, orgId: opts.orgId }, rekeys(target, f));
      const after = { ...f, id: target.id };
      index.replace(target, after);
      byId.set(target.id, after);
    };

    const parser = parse({ columns: checkHeader, bom: true, trim: true, skip_empty_lines: true, info: true, relax_quotes: false, max_record_size: 64 * 1024 });
    // pipeline, not pipe: an error of the source (413, an aborted upload) ends the loop below instead of stalling it.
    pipeline(source, parser, () => {});
    let sawRow = false;
    try {
      for await (const { record, info } of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
        await breathe();
        sawRow = true;
        const line = info.lines;
        const parsed = rowSchema.safeParse(Object.fromEntries(COLUMNS.map((c) => [c, record[c] ?? ''])));
        const externalId = (record.externalId ?? '') || null;
        const fail = (errors: string[]) => {
          summary.failed++;
          rows.push({ line, externalId, status: 'failed', errors });
        };
        if (!parsed.success) {
          fail(parsed.error.issues.map((i) => `${i.path.join('.') || 'row'}: ${i.message}`));
          continue;
        }
        const r = parsed.data;
        const siteId = r.site ? (siteByName.get(r.site.trim().toLowerCase()) ?? null) : null;
        if (r.site && !siteId) {
          fail([`site: no site named "${r.site}" in this organization`]);
          continue;
        }
        const keys = [r.externalId && `e:${r.externalId}`, r.previousId && `p:${r.previousId}`].filter((k): k is string => Boolean(k));
        if (keys.some((k) => seen.has(k))) {
          fail(['externalId: appears more than once in the file']);
          continue;
        }
        keys.forEach((k) => seen.add(k));
        const fields: Fields = { externalId: r.externalId, previousId: r.previousId, firstName: r.firstName, lastName: r.lastName, email: r.email, phone: r.phone, title: r.title, siteId };

        const hit = index.exact(r.externalId, r.previousId) as Contact | null;
        const previousOwner = r.previousId ? index.exact(null, r.previousId) : null;
        if (hit && previousOwner && previousOwner.id !== hit.id) {
          fail([`previousId: "${r.previousId}" belongs to another contact (externalId ${previousOwner.externalId ?? 'none'})`]);
          continue;
        }
        if (hit) {
          const merged: Fields = { ...fields, externalId: fields.externalId ?? hit.externalId, previousId: fields.previousId ?? hit.previousId };
          if (same(hit, merged)) {
            summary.unchanged++;
            rows.push({ line, externalId, status: 'unchanged', contactId: hit.id });
          } else {
            await change(hit, merged);
            summary.updated++;
            rows.push({ line, externalId, status: 'updated', contactId: hit.id });
          }
          continue;
        }
        const fuzzy = index.fuzzy(fields);
        const decision = r.externalId ? ack.get(r.externalId) : undefined;
        if (fuzzy && decision === 'merge') {
          await change(byId.get(fuzzy.contactId)!, fields);
          summary.updated++;
          rows.push({ line, externalId, status: 'updated', contactId: fuzzy.contactId, match: fuzzy });
          continue;
        }
        if (fuzzy && decision !== 'create') {
          summary.heldBack++;
          rows.push({ line, externalId, status: 'held_back', match: fuzzy });
          continue;
        }
        const id = randomUUID();
        await writer.insert({ ...fields, id, orgId: opts.orgId });
        const created = { ...fields, id };
        index.add(created);
        byId.set(id, created);
        summary.created++;
        rows.push({ line, externalId, status: 'created', contactId: opts.dryRun ? undefined : id });
      }
    } catch (err) {
      if (err instanceof AppError) throw err;
      const e = err as { code?: string; message?: string; lines?: number };
      if (typeof e.code === 'string' && e.code.startsWith('CSV_')) throw new AppError('invalid_csv', `The CSV could not be read${e.lines ? ` (line ${e.lines})` : ''}: ${e.message}`);
      throw err;
    }
    if (!sawRow) throw new AppError('invalid_csv', 'The file has no rows.');
    await writer.flush();
    if (!opts.dryRun) {
      await deps.audit.record(tx, { action: 'contact.import', actor: actorOf(p), partnerId: opts.partnerId, orgId: opts.orgId, resourceType: 'organization', resourceId: opts.orgId, details: { summary, rows: rows.length } }, meta);
    }
    return { summary, rows };
  };
  return opts.dryRun ? run(deps.db) : deps.db.transaction((tx) => run(tx));
}

/**
 * The import's answer as a byte stream of JSON, a slice of rows per chunk: a 100,000-row report is neither
 * validated nor stringified in one blocking call.
 */
export async function* importResultJson(result: ImportResult, rowsPerChunk = 2000): AsyncGenerator<string> {
  yield `{"summary":${JSON.stringify(result.summary)},"rows":[`;
  for (let i = 0; i < result.rows.length; i += rowsPerChunk) {
    if (i > 0) await nextTurn();
    const slice = result.rows.slice(i, i + rowsPerChunk).map((r) => JSON.stringify(r));
    yield (i === 0 ? '' : ',') + slice.join(',');
  }
  yield ']}';
}

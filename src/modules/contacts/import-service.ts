// Contacts CSV import (spec 1.7, 2.12; CONTRACT 7): streamed through csv-parse, idempotent on externalId (or the
// previous tool's id), fuzzy matches held back until acknowledged, bad rows reported and skipped, dry run writes
// nothing. The writes and the audit record share one transaction; imports into one organisation take turns.
import { randomUUID } from 'node:crypto';
import { pipeline, type Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import { contacts, sites } from '../../db/schema/index.js';
import type { Principal } from '../../http/context.js';
import { AppError } from '../../http/errors.js';
import type { AuditRequestMeta } from '../audit/writer.js';
import { ContactIndex, type ContactLike, type FuzzyMatch } from './matching.js';

export const COLUMNS = ['externalId', 'previousId', 'firstName', 'lastName', 'email', 'phone', 'title', 'site'] as const;
const BATCH = 500;

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

export async function importContacts(deps: Deps, p: Principal, source: Readable, opts: ImportOptions, meta: AuditRequestMeta) {
  const run = async (tx: Executor) => {
    if (!opts.dryRun) await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`contacts-import:${opts.orgId}`}, 0))`);
    const siteRows = await tx.select({ id: sites.id, name: sites.name }).from(sites).where(eq(sites.orgId, opts.orgId));
    const siteByName = new Map(siteRows.map((s) => [s.name.trim().toLowerCase(), s.id]));
    const existing: Contact[] = await tx
      .select({ id: contacts.id, externalId: contacts.externalId, previousId: contacts.previousId, firstName: contacts.firstName, lastName: contacts.lastName, email: contacts.email, phone: contacts.phone, title: contacts.title, siteId: contacts.siteId })
      .from(contacts)
      .where(eq(contacts.orgId, opts.orgId));
    const byId = new Map(existing.map((c) => [c.id, c]));
    const index = new ContactIndex(existing);
    const ack = new Map(opts.acknowledge.map((a) => [a.externalId, a.action]));
    const seen = new Set<string>();
    const summary = { created: 0, updated: 0, unchanged: 0, heldBack: 0, failed: 0 };
    const rows: RowResult[] = [];
    let inserts: (Fields & { id: string; orgId: string })[] = [];
    const now = deps.clock.now();

    const flush = async () => {
      if (opts.dryRun || inserts.length === 0) return;
      await tx.insert(contacts).values(inserts.map((c) => ({ ...c, createdAt: now, updatedAt: now })));
      inserts = [];
    };
    const update = async (id: string, f: Fields) => {
      if (!opts.dryRun) await tx.update(contacts).set({ ...f, updatedAt: now }).where(eq(contacts.id, id));
    };

    const parser = parse({ columns: checkHeader, bom: true, trim: true, skip_empty_lines: true, info: true, relax_quotes: false, max_record_size: 64 * 1024 });
    // pipeline, not pipe: an error of the source (413, an aborted upload) ends the loop below instead of stalling it.
    pipeline(source, parser, () => {});
    let sawRow = false;
    try {
      for await (const { record, info } of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
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
            await update(hit.id, merged);
            const after = { ...merged, id: hit.id };
            index.replace(hit, after);
            byId.set(hit.id, after);
            summary.updated++;
            rows.push({ line, externalId, status: 'updated', contactId: hit.id });
          }
          continue;
        }
        const fuzzy = index.fuzzy(fields);
        const decision = r.externalId ? ack.get(r.externalId) : undefined;
        if (fuzzy && decision === 'merge') {
          const target = byId.get(fuzzy.contactId)!;
          await update(target.id, fields);
          const after = { ...fields, id: target.id };
          index.replace(target, after);
          byId.set(target.id, after);
          summary.updated++;
          rows.push({ line, externalId, status: 'updated', contactId: target.id, match: fuzzy });
          continue;
        }
        if (fuzzy && decision !== 'create') {
          summary.heldBack++;
          rows.push({ line, externalId, status: 'held_back', match: fuzzy });
          continue;
        }
        const id = randomUUID();
        inserts.push({ ...fields, id, orgId: opts.orgId });
        const created = { ...fields, id };
        index.add(created);
        byId.set(id, created);
        summary.created++;
        rows.push({ line, externalId, status: 'created', contactId: opts.dryRun ? undefined : id });
        if (inserts.length >= BATCH) await flush();
      }
    } catch (err) {
      if (err instanceof AppError) throw err;
      const e = err as { code?: string; message?: string; lines?: number };
      if (typeof e.code === 'string' && e.code.startsWith('CSV_')) throw new AppError('invalid_csv', `The CSV could not be read${e.lines ? ` (line ${e.lines})` : ''}: ${e.message}`);
      throw err;
    }
    if (!sawRow) throw new AppError('invalid_csv', 'The file has no rows.');
    await flush();
    if (!opts.dryRun) {
      await deps.audit.record(tx, { action: 'contact.import', actor: { userId: p.userId, email: p.email }, partnerId: opts.partnerId, orgId: opts.orgId, resourceType: 'organization', resourceId: opts.orgId, details: { summary, rows: rows.length } }, meta);
    }
    return { summary, rows };
  };
  return opts.dryRun ? run(deps.db) : deps.db.transaction((tx) => run(tx));
}

// The streamed export: keyset batches turned into CSV or JSON Lines, pulled only as fast as the client reads.
import { Readable } from 'node:stream';
import type { Executor } from '../../db/connect.js';
import type { AuditVisibility } from '../../db/tenant-filter.js';
import { newestFirst, type AuditRow } from './repo.js';
import type { AuditFilters, AuditRecordJson } from './schemas.js';

export const EXPORT_BATCH = 1000;
export type ExportFormat = 'csv' | 'jsonl';

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  jsonl: 'application/x-ndjson; charset=utf-8',
};

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export function recordJson(row: AuditRow): AuditRecordJson {
  return {
    id: row.id,
    at: row.at.toISOString(),
    action: row.action,
    result: row.result,
    actorUserId: row.actorUserId,
    actorEmail: row.actorEmail,
    partnerId: row.partnerId,
    orgId: row.orgId,
    resourceType: row.resourceType,
    resourceId: row.resourceId,
    ip: row.ip,
    userAgent: row.userAgent,
    details: isPlainObject(row.details) ? row.details : { value: row.details },
  };
}

export const CSV_COLUMNS = [
  'id',
  'at',
  'action',
  'result',
  'actorUserId',
  'actorEmail',
  'partnerId',
  'orgId',
  'resourceType',
  'resourceId',
  'ip',
  'userAgent',
  'details',
] as const;

/**
 * RFC 4180 quoting, plus the OWASP guard against formula injection: a cell a spreadsheet would evaluate (starting
 * with = + - @ tab or CR; user agents and failed-login emails are attacker-chosen) is prefixed with a quote.
 * JSON Lines carries every value unchanged.
 */
export function csvCell(value: unknown): string {
  let s = value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export const CSV_HEADER = `${CSV_COLUMNS.join(',')}\r\n`;

function csvLine(row: AuditRow): string {
  const r = recordJson(row);
  return `${CSV_COLUMNS.map((c) => csvCell(r[c])).join(',')}\r\n`;
}

const jsonLine = (row: AuditRow) => `${JSON.stringify(recordJson(row))}\n`;

/** One chunk per batch; the generator is suspended (no query runs) while the stream's buffer is full. */
async function* chunks(
  db: Executor,
  v: AuditVisibility,
  f: AuditFilters,
  format: ExportFormat,
  batchSize: number,
): AsyncGenerator<string> {
  const line = format === 'csv' ? csvLine : jsonLine;
  if (format === 'csv') yield CSV_HEADER;
  let beforeSeq: number | null = null;
  for (;;) {
    const rows = await newestFirst(db, v, f, { beforeSeq, limit: batchSize });
    if (rows.length) yield rows.map(line).join('');
    if (rows.length < batchSize) return;
    beforeSeq = rows[rows.length - 1]!.seq;
  }
}

/** A byte stream of every matching record, newest first. Destroying it (client gone) stops the queries. */
export function exportStream(
  db: Executor,
  v: AuditVisibility,
  f: AuditFilters,
  format: ExportFormat,
  batchSize = EXPORT_BATCH,
): Readable {
  return Readable.from(chunks(db, v, f, format, batchSize), { objectMode: false });
}

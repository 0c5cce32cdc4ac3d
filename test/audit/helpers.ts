// Reading the audit trail the way an auditor does: through GET /audit-logs and the export, with a token.
import { expect } from 'vitest';
import type { AuditRecordJson } from '../../src/modules/audit/schemas.js';
import type { TestApp } from '../support/app.js';
import type { ApiClient } from '../support/client.js';

export type Query = Record<string, string | number | undefined>;

/** Every page of GET /audit-logs for the query, newest first. */
export async function listAll(api: ApiClient, query: Query = {}, limit = 200): Promise<AuditRecordJson[]> {
  const out: AuditRecordJson[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 1000; page++) {
    const res = await api.get('/audit-logs', { query: { ...query, limit, cursor } });
    expect(res.status, res.text).toBe(200);
    out.push(...res.body.data);
    cursor = res.body.nextCursor ?? undefined;
    if (!cursor) return out;
  }
  throw new Error('more than 1000 pages');
}

/** Polls GET /audit-logs until a matching record appears (records written after the response, such as denials). */
export async function waitForRecord(
  api: ApiClient,
  query: Query,
  match: (r: AuditRecordJson) => boolean = () => true,
  timeoutMs = 5000,
): Promise<AuditRecordJson> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = (await listAll(api, query)).find(match);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no audit record for ${JSON.stringify(query)} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export interface Download {
  status: number;
  contentType: string;
  disposition: string;
  text: string;
}

/** GET /audit-logs/export as a browser download would fetch it (the typed client would try to parse JSON). */
export async function download(t: TestApp, token: string, query: Query): Promise<Download> {
  const url = new URL('/api/v1/audit-logs/export', t.baseUrl);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  return {
    status: res.status,
    contentType: res.headers.get('content-type') ?? '',
    disposition: res.headers.get('content-disposition') ?? '',
    text: await res.text(),
  };
}

/** JSON Lines → records. */
export const jsonLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as AuditRecordJson);

/** RFC 4180 CSV → rows of cells (quoted cells may hold commas, quotes and line breaks). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += c;
  }
  if (cell !== '' || row.length) throw new Error('CSV does not end with CRLF');
  return rows;
}

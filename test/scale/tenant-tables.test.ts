// Every table is classified in docs/scaling.md: tenant tables that carry partner_id (the Citus
// distribution column), tenant tables that do not yet (documented, reached through org_id), and global tables.
// The lists in the document are the source: a new table, or a partner_id added or dropped, fails here until the
// document says so.
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';

const doc = readFileSync(new URL('../../docs/scaling.md', import.meta.url), 'utf8');
function listOf(name: string): string[] {
  const m = new RegExp(`<!-- tables:${name} -->([\\s\\S]*?)<!-- /tables -->`).exec(doc);
  if (!m) throw new Error(`docs/scaling.md has no tables:${name} list`);
  return m[1]!
    .split('\n')
    .map((l) => l.replace(/^\s*-\s*/, '').trim())
    .filter(Boolean);
}

let t: TestApp;
let columns: Map<string, Set<string>>;
beforeAll(async () => {
  t = await startApp();
  const r = await t.deps.db.execute(sql`
    select c.table_name, c.column_name from information_schema.columns c
    join information_schema.tables tb on tb.table_schema = c.table_schema and tb.table_name = c.table_name
    where c.table_schema = 'public' and tb.table_type = 'BASE TABLE'`);
  columns = new Map();
  for (const row of (r as unknown as { rows: { table_name: string; column_name: string }[] }).rows) {
    if (!columns.has(row.table_name)) columns.set(row.table_name, new Set());
    columns.get(row.table_name)!.add(row.column_name);
  }
});
afterAll(async () => t?.close());

describe('every tenant table carries partner_id, or docs/scaling.md says which do not', () => {
  const carry = listOf('carry-partner-id');
  const without = listOf('tenant-without-partner-id');
  const global = listOf('global');

  it('every table of the database is in exactly one list of docs/scaling.md', () => {
    const listed = [...carry, ...without, ...global];
    expect(new Set(listed).size).toBe(listed.length);
    expect([...listed].sort()).toEqual([...columns.keys()].sort());
  });

  it('the tables listed as carrying partner_id have the column', () => {
    expect(carry.filter((tb) => !columns.get(tb)?.has('partner_id'))).toEqual([]);
  });

  it('the tenant tables listed without partner_id lack it, and each reaches its partner through org_id or its parent row', () => {
    expect(without.filter((tb) => columns.get(tb)?.has('partner_id'))).toEqual([]);
    const parentKey = [
      'org_id',
      'device_id',
      'entity_id',
      'definition_id',
      'service_account_id',
      'key_id',
      'webhook_id',
    ];
    expect(without.filter((tb) => !parentKey.some((k) => columns.get(tb)?.has(k)))).toEqual([]);
  });
});

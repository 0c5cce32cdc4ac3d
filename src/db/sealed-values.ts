// `gatehouse keys rotate-encryption`: re-seals every value of the sealed-value catalogue under the current
// ENCRYPTION_KEY.
import { sql } from 'drizzle-orm';
import type { SecretBox } from '../platform/secret-box.js';
import type { Db } from './connect.js';
import { reseal, SEALED_KINDS } from './sealed-catalogue.js';
import { rowsOf } from './rows.js';

export interface ResealProgress {
  label: string;
  done: number;
  total: number;
  failed: number;
}

/**
 * Re-seals, batch by batch, every value not sealed with the current key (the old key must be among
 * ENCRYPTION_KEYS_PREVIOUS). Each value is replaced only if unchanged meanwhile; an interrupted run resumes where it
 * stopped, since only stale values are selected. Values no configured key opens are counted as failed and left.
 */
export async function resealAll(
  db: Db,
  box: SecretBox,
  onProgress: (p: ResealProgress) => void,
  batch = 200,
): Promise<ResealProgress[]> {
  const current = `gh1.${box.currentKeyId}.%`;
  const out: ResealProgress[] = [];
  for (const loc of SEALED_KINDS) {
    const value = loc.jsonField
      ? sql`(${sql.identifier(loc.column)} ->> ${loc.jsonField})`
      : sql.identifier(loc.column);
    const stale = sql`${value} is not null and ${value} not like ${current}${loc.where ? sql` and ${sql.raw(loc.where)}` : sql``}`;
    const table = sql.identifier(loc.table);
    const id = sql.identifier(loc.id);
    const bound = loc.boundTo ? sql.identifier(loc.boundTo) : sql`''`;
    const [{ n }] = rowsOf<{ n: number }>(
      await db.execute(sql`select count(*)::int as n from ${table} where ${stale}`),
    ) as [{ n: number }];
    const progress: ResealProgress = { label: loc.label, done: 0, total: n, failed: 0 };
    onProgress(progress);
    let after = '';
    for (;;) {
      const rows = rowsOf<{ id: string; bound: string; value: string }>(
        await db.execute(
          sql`select ${id}::text as id, ${bound}::text as bound, ${value} as value from ${table} where ${stale} and ${id}::text > ${after} order by ${id}::text limit ${batch}`,
        ),
      );
      if (!rows.length) break;
      for (const row of rows) {
        after = row.id;
        let fresh: string;
        try {
          fresh = reseal(box, loc, row.value, row.bound);
        } catch {
          progress.failed++;
          continue;
        }
        const set = loc.jsonField
          ? sql`${sql.identifier(loc.column)} = jsonb_set(${sql.identifier(loc.column)}, ${`{${loc.jsonField}}`}::text[], to_jsonb(${fresh}::text))`
          : sql`${sql.identifier(loc.column)} = ${fresh}`;
        await db.execute(sql`update ${table} set ${set} where ${id}::text = ${row.id} and ${value} = ${row.value}`);
        progress.done++;
      }
      onProgress(progress);
    }
    out.push(progress);
  }
  return out;
}

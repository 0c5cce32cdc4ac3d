// The statements of the database budget store (src/platform/budget-store.ts, used when REDIS_URL is not set): marks per
// key and member, counted over a sliding window and written under the principal's transaction-level advisory lock,
// so a count and the marks that follow it cannot interleave between instances.
import { sql } from 'drizzle-orm';
import type { Executor } from './connect.js';
import { rowsOf } from './rows.js';

/** Serialises the charges of one principal until the end of the (outer) transaction. */
export async function lockBudget(tx: Executor, lockKey: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${lockKey}, 0))`);
}

/**
 * For each check, the members of its key marked after its `since`, counting those of its `members` not yet among them
 * as if marked now: one statement for every check.
 */
export async function countChecks(
  tx: Executor,
  checks: { key: string; since: Date; members: string[] }[],
): Promise<number[]> {
  if (checks.length === 0) return [];
  const parts = checks.map((c, i) => {
    const fresh = c.members.length
      ? sql` + (select count(*) from (values ${sql.join(
          c.members.map((m) => sql`(${m}::text)`),
          sql`, `,
        )}) as v(member) where not exists (select 1 from governor_marks g where g.key = ${c.key} and g.member = v.member and g.at > ${c.since}))`
      : sql``;
    return sql`select ${i}::int as i, ((select count(*) from governor_marks where key = ${c.key} and at > ${c.since})${fresh})::int as n`;
  });
  const res = await tx.execute(sql.join(parts, sql` union all `));
  const out: number[] = new Array(checks.length).fill(0);
  for (const r of rowsOf<{ i: number; n: number }>(res)) out[Number(r.i)] = Number(r.n);
  return out;
}

/** Marks the members at `at` (a member marked before moves to `at`), in one statement. */
export async function markMembers(tx: Executor, marks: { key: string; member: string }[], at: Date): Promise<void> {
  if (marks.length === 0) return;
  await tx.execute(
    sql`insert into governor_marks (key, member, at) values ${sql.join(
      marks.map((m) => sql`(${m.key}, ${m.member}, ${at})`),
      sql`, `,
    )} on conflict (key, member) do update set at = excluded.at`,
  );
}

/** Forgets the keys' marks at or before `before`. */
export async function forgetMarks(tx: Executor, keys: string[], before: Date): Promise<void> {
  await tx.execute(
    sql`delete from governor_marks where key in (${sql.join(
      keys.map((k) => sql`${k}`),
      sql`, `,
    )}) and at <= ${before}`,
  );
}

/**
 * Takes one action from the principal's approved co-signature in force at `now` (the oldest first), or null when none
 * is left. The row is locked, so two instances never spend the same action (the second waits, then sees what is left).
 */
export async function spendCoSign(
  tx: Executor,
  principalId: string,
  now: Date,
): Promise<{ id: string; remaining: number; approved_by_name: string | null } | null> {
  const res = await tx.execute(sql`
    update co_sign_requests set remaining = remaining - 1
    where id = (
      select id from co_sign_requests
      where principal_id = ${principalId} and status = 'approved' and remaining > 0 and unlock_expires_at > ${now}
      order by approved_at limit 1 for update)
    returning id, remaining, approved_by_name`);
  return rowsOf<{ id: string; remaining: number; approved_by_name: string | null }>(res)[0] ?? null;
}

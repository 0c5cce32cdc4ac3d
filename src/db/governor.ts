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

/** Members of `key` marked after `since`, counting those of `members` not yet among them as if marked now. */
export async function countWithMembers(tx: Executor, key: string, since: Date, members: string[]): Promise<number> {
  const fresh = members.length
    ? sql` + (select count(*) from (values ${sql.join(
        members.map((m) => sql`(${m}::text)`),
        sql`, `,
      )}) as v(member) where not exists (select 1 from governor_marks g where g.key = ${key} and g.member = v.member and g.at > ${since}))`
    : sql``;
  const res = await tx.execute(
    sql`select ((select count(*) from governor_marks where key = ${key} and at > ${since})${fresh})::int as n`,
  );
  return rowsOf<{ n: number }>(res)[0]?.n ?? 0;
}

/** Marks the members at `at` (a member marked before moves to `at`) and forgets the key's marks at or before `forget`. */
export async function markMembers(tx: Executor, key: string, members: string[], at: Date, forget: Date): Promise<void> {
  if (members.length)
    await tx.execute(
      sql`insert into governor_marks (key, member, at) values ${sql.join(
        members.map((m) => sql`(${key}, ${m}, ${at})`),
        sql`, `,
      )} on conflict (key, member) do update set at = excluded.at`,
    );
  await tx.execute(sql`delete from governor_marks where key = ${key} and at <= ${forget}`);
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

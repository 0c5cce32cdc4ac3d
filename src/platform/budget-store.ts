// The blast-radius governor's shared counts: per principal, the distinct organisations and devices its destructive
// actions touched and the uses themselves, over sliding windows. In Redis when REDIS_URL is set (one script: the
// checks and the marks are atomic), otherwise in the database (under the principal's advisory lock). Every instance
// shares them, so a principal that crosses a budget on one instance is refused on the next.
import type { Redis } from 'ioredis';
import type { Executor } from '../db/connect.js';
import { countChecks, forgetMarks, lockBudget, markMembers } from '../db/governor.js';

export const BUDGET_DIMENSIONS = ['organizations', 'devices', 'destructive'] as const;
export type BudgetDimension = (typeof BUDGET_DIMENSIONS)[number];

export interface BudgetCheck {
  dimension: BudgetDimension;
  /** Count marks after this instant (ms). */
  sinceMs: number;
  limit: number;
}

export interface BudgetCharge {
  /** The principal: `user:<id>` or `service_account:<id>`. */
  principal: string;
  /** What this action adds to each dimension (a member already marked in a window counts once there). */
  members: Record<BudgetDimension, string[]>;
  checks: BudgetCheck[];
  nowMs: number;
  /** How long marks are kept (at least the longest window). */
  keepMs: number;
  /**
   * `within`: mark only when no check trips; `always`: mark even then (an action a step-up or a co-signature lets
   * through still counts); `never`: count only (explain, the console).
   */
  mark: 'within' | 'always' | 'never';
}

export interface BudgetOutcome {
  /** The first check that trips (index into `checks`), or -1. */
  tripped: number;
  /** Per check: the count with this action's members. */
  counts: number[];
  /** Whether the members were marked. */
  marked: boolean;
}

export interface BudgetStore {
  readonly kind: 'redis' | 'database';
  /** Checks and (unless tripped and not forced) marks, atomically for the principal. `ex`: the request's executor. */
  charge(c: BudgetCharge, ex: Executor): Promise<BudgetOutcome>;
}

const keyOf = (prefix: string, principal: string, d: BudgetDimension) => `${prefix}gov:${principal}:${d}`;

const CHARGE_LUA = `
local spec = cjson.decode(ARGV[1])
local counts = {}
local tripped = -1
for i, c in ipairs(spec.checks) do
  local key = KEYS[c.d]
  local n = redis.call('ZCOUNT', key, '(' .. c.since, '+inf')
  for _, m in ipairs(spec.members[c.d]) do
    local score = redis.call('ZSCORE', key, m)
    if (not score) or tonumber(score) <= c.since then n = n + 1 end
  end
  counts[i] = n
  if n > c.limit and tripped < 0 then tripped = i - 1 end
end
local marked = 0
if spec.mark == 'always' or (tripped < 0 and spec.mark == 'within') then
  marked = 1
  for d = 1, #KEYS do
    for _, m in ipairs(spec.members[d]) do redis.call('ZADD', KEYS[d], spec.now, m) end
    redis.call('ZREMRANGEBYSCORE', KEYS[d], '-inf', spec.now - spec.keep)
    if redis.call('ZCARD', KEYS[d]) > 0 then redis.call('PEXPIRE', KEYS[d], spec.keep) end
  end
end
return { tripped, marked, unpack(counts) }
`;

export class RedisBudgetStore implements BudgetStore {
  readonly kind = 'redis';
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async charge(c: BudgetCharge): Promise<BudgetOutcome> {
    const keys = BUDGET_DIMENSIONS.map((d) => keyOf(this.prefix, c.principal, d));
    const spec = {
      now: c.nowMs,
      keep: c.keepMs,
      mark: c.mark,
      members: BUDGET_DIMENSIONS.map((d) => c.members[d]),
      checks: c.checks.map((k) => ({
        d: BUDGET_DIMENSIONS.indexOf(k.dimension) + 1,
        since: k.sinceMs,
        limit: k.limit,
      })),
    };
    const [tripped, marked, ...counts] = (await this.redis.eval(
      CHARGE_LUA,
      keys.length,
      ...keys,
      JSON.stringify(spec),
    )) as number[];
    return { tripped: tripped!, marked: marked === 1, counts };
  }
}

export class DatabaseBudgetStore implements BudgetStore {
  readonly kind = 'database';
  private charges = 0;
  constructor(private readonly prefix: string) {}

  charge(c: BudgetCharge, ex: Executor): Promise<BudgetOutcome> {
    const key = (d: BudgetDimension) => keyOf(this.prefix, c.principal, d);
    // Inside the request's transaction when there is one (PGlite has one connection; the marks then commit with the action).
    return ex.transaction(async (tx) => {
      await lockBudget(tx, `${this.prefix}gov:${c.principal}`);
      const counts = await countChecks(
        tx,
        c.checks.map((k) => ({ key: key(k.dimension), since: new Date(k.sinceMs), members: c.members[k.dimension] })),
      );
      const tripped = c.checks.findIndex((k, i) => counts[i]! > k.limit);
      const mark = c.mark === 'always' || (tripped < 0 && c.mark === 'within');
      if (mark) {
        await markMembers(
          tx,
          BUDGET_DIMENSIONS.flatMap((d) => c.members[d].map((member) => ({ key: key(d), member }))),
          new Date(c.nowMs),
        );
        // Marks past the longest window are dropped now and then, not on every charge.
        if (++this.charges % 50 === 0) await forgetMarks(tx, BUDGET_DIMENSIONS.map(key), new Date(c.nowMs - c.keepMs));
      }
      return { tripped, counts, marked: mark };
    });
  }
}

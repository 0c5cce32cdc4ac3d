// Shared short-lived state: sliding-window rate limits and single-use markers.
// In Redis when REDIS_URL is set (several instances, fast), otherwise in the database.
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import type { Db } from '../db/connect.js';
import { claimMarker, countHits, deleteHits, recordHitUnlessFull, sweepKv } from '../db/kv.js';

export interface WindowResult {
  allowed: boolean;
  /** Hits left in the window after this one. */
  remaining: number;
  /** Whole seconds until a hit would be allowed again (0 when allowed). */
  retryAfter: number;
}

export interface SharedStore {
  readonly kind: 'redis' | 'database';
  /** Records a hit in a sliding window unless the window is full. Exact under concurrency. */
  hit(key: string, limit: number, windowMs: number, nowMs: number): Promise<WindowResult>;
  /** Counts hits in the window without recording one. */
  count(key: string, windowMs: number, nowMs: number): Promise<number>;
  /** Forgets a window (e.g. a successful sign-in clears its failure count). */
  reset(key: string): Promise<void>;
  /** Sets key only if absent; true when this call set it. Single-use markers. */
  claim(key: string, ttlMs: number, nowMs: number): Promise<boolean>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

const ceilSeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

const SLIDING_WINDOW_LUA = `
local key = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
if count < limit then
  redis.call('ZADD', key, now, ARGV[4])
  redis.call('PEXPIRE', key, window)
  return {1, limit - count - 1, 0}
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return {0, 0, tonumber(oldest[2]) + window - now}
`;

// Taken when absent or when its stored expiry has passed (a value that is not an expiry holds until PX ends).
const CLAIM_LUA = `
local held = redis.call('GET', KEYS[1])
if held then
  local expires = tonumber(held)
  if held == '1' or not expires or expires > tonumber(ARGV[1]) then return 0 end
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`;

export class RedisStore implements SharedStore {
  readonly kind = 'redis';
  constructor(
    /** The connection, shared with the governor's budget store. */
    readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  static connect(url: string, prefix: string): RedisStore {
    // ioredis (~7 MB, ~0.1 s) is loaded only when REDIS_URL is set; a synchronous require keeps connect() synchronous.
    const { Redis } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
    const redis = new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false });
    // Reconnects by itself; a failed command reaches the request, and the outage is logged once (src/http/outage.ts),
    // not once per reconnect attempt as an unhandled 'error' event would be.
    redis.on('error', () => {});
    return new RedisStore(redis, prefix);
  }

  async hit(key: string, limit: number, windowMs: number, nowMs: number): Promise<WindowResult> {
    const [ok, remaining, waitMs] = (await this.redis.eval(
      SLIDING_WINDOW_LUA,
      1,
      `${this.prefix}rl:${key}`,
      nowMs,
      windowMs,
      limit,
      `${nowMs}:${randomUUID()}`,
    )) as [number, number, number];
    return { allowed: ok === 1, remaining, retryAfter: ok === 1 ? 0 : ceilSeconds(waitMs) };
  }

  async count(key: string, windowMs: number, nowMs: number): Promise<number> {
    return this.redis.zcount(`${this.prefix}rl:${key}`, nowMs - windowMs + 1, '+inf');
  }

  async reset(key: string): Promise<void> {
    await this.redis.del(`${this.prefix}rl:${key}`);
  }

  /** The expiry is kept in the value, on the caller's clock like the database store; PX only cleans up. */
  async claim(key: string, ttlMs: number, nowMs: number): Promise<boolean> {
    const ttl = Math.max(1, Math.round(ttlMs));
    return (await this.redis.eval(CLAIM_LUA, 1, `${this.prefix}kv:${key}`, nowMs, nowMs + ttl, ttl)) === 1;
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

/**
 * Database store: a log of hits per key, serialised per key by a transaction-level advisory lock,
 * so the count and the insert cannot interleave between instances (the statements: src/db/kv.ts).
 */
export class DatabaseStore implements SharedStore {
  readonly kind = 'database';
  private hitsSinceSweep = 0;
  constructor(
    private readonly db: Db,
    private readonly prefix: string,
  ) {}

  async hit(key: string, limit: number, windowMs: number, nowMs: number): Promise<WindowResult> {
    const r = await recordHitUnlessFull(this.db, this.prefix + key, limit, new Date(nowMs - windowMs), new Date(nowMs));
    const result: WindowResult = r.full
      ? { allowed: false, remaining: 0, retryAfter: ceilSeconds(r.oldest.getTime() + windowMs - nowMs) }
      : { allowed: true, remaining: limit - r.before - 1, retryAfter: 0 };
    if (++this.hitsSinceSweep >= 500) {
      this.hitsSinceSweep = 0;
      void this.sweep(nowMs).catch(() => {});
    }
    return result;
  }

  count(key: string, windowMs: number, nowMs: number): Promise<number> {
    return countHits(this.db, this.prefix + key, new Date(nowMs - windowMs));
  }

  reset(key: string): Promise<void> {
    return deleteHits(this.db, this.prefix + key);
  }

  claim(key: string, ttlMs: number, nowMs: number): Promise<boolean> {
    return claimMarker(this.db, this.prefix + key, new Date(nowMs + ttlMs), new Date(nowMs));
  }

  /** Drops hits older than a day and expired markers. */
  sweep(nowMs: number): Promise<void> {
    return sweepKv(this.db, new Date(nowMs - 86_400_000), new Date(nowMs));
  }

  async ping(): Promise<void> {}
  async close(): Promise<void> {}
}

// The shared store behind rate limits and single-use markers, on both backends: the database of the test app
// (PGlite, or PostgreSQL when DATABASE_URL is set: the run where races are real) and a real Redis.
// Time is driven through the nowMs argument, never by sleeping.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { AppError } from '../../src/http/errors.js';
import { RateLimits } from '../../src/http/rate-limit.js';
import { DatabaseStore, RedisStore, type SharedStore, type WindowResult } from '../../src/platform/kv.js';
import { startApp, type TestApp } from '../support/app.js';

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const prefix = () => `test:${randomBytes(6).toString('hex')}:`;
const key = () => `k:${randomBytes(6).toString('hex')}`;

let t: TestApp;
let redisPrefix: string;
let inspect: Redis;
const stores = {} as Record<'database' | 'redis', SharedStore>;

beforeAll(async () => {
  t = await startApp();
  stores.database = new DatabaseStore(t.deps.db, prefix());
  redisPrefix = prefix();
  stores.redis = RedisStore.connect(REDIS_URL, redisPrefix);
  await stores.redis.ping();
  inspect = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
});
afterAll(async () => {
  await stores.redis?.close();
  await inspect?.quit();
  await t?.close();
});

const allowedOf = (rs: WindowResult[]) => rs.filter((r) => r.allowed);
const deniedOf = (rs: WindowResult[]) => rs.filter((r) => !r.allowed);

describe.each(['database', 'redis'] as const)('the %s store', (kind) => {
  const store = () => stores[kind];

  it('checks the store in use is the one named (PostgreSQL when DATABASE_URL is set)', () => {
    expect(store().kind).toBe(kind);
    if (kind === 'database') expect(t.deps.database.kind).toBe(process.env.DATABASE_URL ? 'postgres' : 'pglite');
  });

  describe('a sliding window is exact under concurrency', () => {
    it('50 concurrent hits with limit 10: exactly 10 allowed, the other 40 told when to retry', async () => {
      const k = key();
      const now = Date.now();
      const results = await Promise.all(Array.from({ length: 50 }, () => store().hit(k, 10, 60_000, now)));
      const allowed = allowedOf(results);
      expect(allowed).toHaveLength(10);
      // Each allowed hit saw a distinct count: no two read the same state.
      expect(allowed.map((r) => r.remaining).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(allowed.every((r) => r.retryAfter === 0)).toBe(true);
      const denied = deniedOf(results);
      expect(denied).toHaveLength(40);
      for (const r of denied) {
        expect(r.retryAfter).toBeGreaterThanOrEqual(1);
        expect(Number.isInteger(r.retryAfter)).toBe(true);
        expect(r.retryAfter).toBe(60); // every hit is at `now`: the window frees in exactly 60 s
        expect(r.remaining).toBe(0);
      }
      expect(await store().count(k, 60_000, now)).toBe(10);
    });

    it('concurrent hits on different keys do not count against each other', async () => {
      const keys = [key(), key(), key()];
      const now = Date.now();
      const results = await Promise.all(
        keys.flatMap((k) =>
          Array.from({ length: 8 }, () =>
            store()
              .hit(k, 5, 60_000, now)
              .then((r) => ({ k, r })),
          ),
        ),
      );
      for (const k of keys) expect(results.filter((x) => x.k === k && x.r.allowed)).toHaveLength(5);
    });
  });

  describe('the window slides', () => {
    it('a hit stops counting once it is a full window old; refused hits are not recorded', async () => {
      const k = key();
      const t0 = Date.now();
      const W = 10_000;
      expect((await store().hit(k, 3, W, t0)).allowed).toBe(true);
      expect((await store().hit(k, 3, W, t0 + 4_000)).allowed).toBe(true);
      expect(await store().hit(k, 3, W, t0 + 8_000)).toEqual({ allowed: true, remaining: 0, retryAfter: 0 });
      // Full: the oldest hit (t0) leaves the window at t0 + 10 s.
      expect(await store().hit(k, 3, W, t0 + 9_000)).toEqual({ allowed: false, remaining: 0, retryAfter: 1 });
      expect(await store().hit(k, 3, W, t0 + 9_999)).toMatchObject({ allowed: false, retryAfter: 1 });
      expect(await store().count(k, W, t0 + 9_999)).toBe(3);
      // At t0 + 10 s the t0 hit no longer counts (the refused hits at 9 s and 9.999 s never did).
      expect(await store().count(k, W, t0 + 10_000)).toBe(2);
      expect(await store().hit(k, 3, W, t0 + 10_000)).toEqual({ allowed: true, remaining: 0, retryAfter: 0 });
      // Now hits at 4 s, 8 s and 10 s: the next slot frees when the 4 s hit turns 10 s old.
      expect(await store().hit(k, 3, W, t0 + 10_001)).toEqual({ allowed: false, remaining: 0, retryAfter: 4 });
      expect(await store().hit(k, 3, W, t0 + 13_999)).toMatchObject({ allowed: false, retryAfter: 1 });
      expect((await store().hit(k, 3, W, t0 + 14_000)).allowed).toBe(true);
      // Long after, the whole window is free again.
      expect(await store().hit(k, 3, W, t0 + 60_000)).toEqual({ allowed: true, remaining: 2, retryAfter: 0 });
    });

    it('retryAfter rounds a partial second up, never down to 0', async () => {
      const k = key();
      const t0 = Date.now();
      await store().hit(k, 1, 1_000, t0);
      expect(await store().hit(k, 1, 1_000, t0 + 999)).toEqual({ allowed: false, remaining: 0, retryAfter: 1 });
      expect(await store().hit(k, 1, 1_000, t0 + 1)).toEqual({ allowed: false, remaining: 0, retryAfter: 1 });
    });
  });

  describe('reset() forgets a window', () => {
    it('a full window is empty after reset; other keys keep theirs', async () => {
      const [k, other] = [key(), key()];
      const now = Date.now();
      for (let i = 0; i < 2; i++) {
        await store().hit(k, 2, 60_000, now);
        await store().hit(other, 2, 60_000, now);
      }
      expect((await store().hit(k, 2, 60_000, now)).allowed).toBe(false);
      await store().reset(k);
      expect(await store().count(k, 60_000, now)).toBe(0);
      expect(await store().hit(k, 2, 60_000, now)).toEqual({ allowed: true, remaining: 1, retryAfter: 0 });
      expect(await store().count(other, 60_000, now)).toBe(2);
      expect((await store().hit(other, 2, 60_000, now)).allowed).toBe(false);
    });
  });

  describe('claim() is single-use', () => {
    it('20 concurrent claims of one key: exactly one wins', async () => {
      const k = key();
      const now = Date.now();
      const results = await Promise.all(Array.from({ length: 20 }, () => store().claim(k, 5_000, now)));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await store().claim(k, 5_000, now + 1)).toBe(false);
    });

    it('the marker holds until its ttl has passed, then can be claimed once more', async () => {
      const k = key();
      const t0 = Date.now();
      const ttl = 5_000;
      expect(await store().claim(k, ttl, t0)).toBe(true);
      expect(await store().claim(k, ttl, t0 + ttl - 1)).toBe(false);
      const again = await Promise.all(Array.from({ length: 10 }, () => store().claim(k, ttl, t0 + ttl)));
      expect(again.filter(Boolean)).toHaveLength(1);
      expect(await store().claim(k, ttl, t0 + ttl + 1)).toBe(false);
      expect(await store().claim(k, ttl, t0 + 2 * ttl)).toBe(true);
    });

    it('different keys are independent', async () => {
      const now = Date.now();
      expect(await Promise.all([store().claim(key(), 5_000, now), store().claim(key(), 5_000, now)])).toEqual([
        true,
        true,
      ]);
    });
  });
});

describe('Redis keys expire on their own', () => {
  it('window and marker keys carry a TTL no longer than their window or ttl', async () => {
    const [w, m] = [key(), key()];
    const now = Date.now();
    await stores.redis.hit(w, 5, 30_000, now);
    await stores.redis.claim(m, 20_000, now);
    const windowTtl = await inspect.pttl(`${redisPrefix}rl:${w}`);
    const markerTtl = await inspect.pttl(`${redisPrefix}kv:${m}`);
    expect(windowTtl).toBeGreaterThan(0);
    expect(windowTtl).toBeLessThanOrEqual(30_000);
    expect(markerTtl).toBeGreaterThan(0);
    expect(markerTtl).toBeLessThanOrEqual(20_000);
  });
});

describe.each(['database', 'redis'] as const)('RateLimits.enforce over the %s store', (kind) => {
  it('throws AppError rate_limited with a whole-second retryAfter once the window is full', async () => {
    let nowMs = Date.now();
    const clock = { now: () => new Date(nowMs) };
    const limits = { ...loadConfig({}).rateLimits, login: { limit: 2, windowSeconds: 60 } };
    const rl = new RateLimits(stores[kind], clock, limits);
    const who = `203.0.113.7:${randomBytes(4).toString('hex')}@x.test`;
    await rl.enforce('login', who);
    nowMs += 500;
    await rl.enforce('login', who);
    nowMs += 1_000;
    const err = await rl.enforce('login', who).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AppError);
    const appErr = err as AppError;
    expect(appErr.code).toBe('rate_limited');
    expect(appErr.status).toBe(429);
    // First hit at 0 s, now 1.5 s: it leaves the 60 s window in 58.5 s, rounded up to whole seconds.
    expect(appErr.extra.retryAfter).toBe(59);
    expect(Number.isInteger(appErr.extra.retryAfter)).toBe(true);
    expect(appErr.toBody()).toMatchObject({
      code: 'rate_limited',
      retryAfter: 59,
      error: expect.any(String),
      message: expect.any(String),
    });

    // Limits are per name: the same key under another limit is untouched.
    await expect(rl.enforce('mfaVerify', who)).resolves.toBeUndefined();
    // After the window the same caller may try again.
    nowMs += 60_000;
    await expect(rl.enforce('login', who)).resolves.toBeUndefined();
  });

  it('under 30 concurrent requests exactly the limit passes', async () => {
    const clock = { now: () => new Date() };
    const limits = { ...loadConfig({}).rateLimits, mfaVerify: { limit: 5, windowSeconds: 300 } };
    const rl = new RateLimits(stores[kind], clock, limits);
    const user = randomBytes(8).toString('hex');
    const outcomes = await Promise.all(
      Array.from({ length: 30 }, () =>
        rl.enforce('mfaVerify', user).then(
          () => 'ok',
          (e: AppError) => e.code,
        ),
      ),
    );
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(5);
    expect(outcomes.filter((o) => o === 'rate_limited')).toHaveLength(25);
  });
});

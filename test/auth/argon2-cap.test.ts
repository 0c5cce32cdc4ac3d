// argon2id runs off the event loop with at most one computation per core: a login storm queues hashes instead of
// stretching every other request.
import { describe, expect, it } from 'vitest';
import { ARGON2_CONCURRENCY, argon2Load, hashPassword, verifyPassword } from '../../src/modules/identity/passwords.js';

describe('argon2id concurrency is capped at the number of cores', () => {
  it('three times as many hashes as cores: never more than the cap at once, the rest queued, every result right', async () => {
    const n = ARGON2_CONCURRENCY * 3;
    let maxRunning = 0;
    let maxWaiting = 0;
    let sampling = true;
    const sample = () => {
      const { running, waiting } = argon2Load();
      maxRunning = Math.max(maxRunning, running);
      maxWaiting = Math.max(maxWaiting, waiting);
      if (sampling) setImmediate(sample);
    };
    sample();
    const hashes = await Promise.all(Array.from({ length: n }, (_, i) => hashPassword(`password number ${i}`)));
    const checks = await Promise.all(hashes.map((h, i) => verifyPassword(h, i % 2 ? `password number ${i}` : 'wrong')));
    sampling = false;
    expect(maxRunning).toBe(ARGON2_CONCURRENCY);
    expect(maxWaiting).toBeGreaterThan(0);
    expect(checks).toEqual(hashes.map((_, i) => i % 2 === 1));
    expect(argon2Load()).toEqual({ running: 0, waiting: 0 });
  });

  it('a failing verification (malformed hash) releases its slot', async () => {
    const results = await Promise.all(
      Array.from({ length: ARGON2_CONCURRENCY * 2 }, () => verifyPassword('not-a-hash', 'x')),
    );
    expect(results.every((r) => r === false)).toBe(true);
    expect(argon2Load()).toEqual({ running: 0, waiting: 0 });
  });
});

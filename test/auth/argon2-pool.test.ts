// argon2id runs on its own worker threads at a lower CPU priority than the event loop: the kernel serves
// the event loop first during a login storm. The threads start on the first hash, never exceed the cap, and never keep
// the process alive.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ARGON2_NICE, Argon2Pool } from '../../src/modules/identity/argon2-pool.js';
import {
  ARGON2_CONCURRENCY,
  argon2Load,
  argon2Pool,
  hashPassword,
  verifyPassword,
} from '../../src/modules/identity/passwords.js';
import { startApp } from '../support/app.js';
import { orgMember, PASSWORD, signIn } from './helpers.js';

/** Fields of /proc/self/task/<tid>/stat, numbered as proc(5) numbers them (1 = pid, 19 = nice). */
function taskStat(tid: number | 'self'): (field: number) => number {
  const path = tid === 'self' ? '/proc/thread-self/stat' : `/proc/self/task/${tid}/stat`;
  const stat = readFileSync(path, 'utf8');
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // field 3 onwards (the name may hold spaces)
  return (field) => Number(rest[field - 3]);
}
const threadCount = () => readdirSync('/proc/self/task').length;
const linux = existsSync('/proc/thread-self');

describe('argon2id runs on the pool', () => {
  it('hashes and verifies through the worker threads (argon2id, OWASP parameters), never more threads than the cap', async () => {
    const hash = await hashPassword('a password for the pool 1');
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(await verifyPassword(hash, 'a password for the pool 1')).toBe(true);
    expect(await verifyPassword(hash, 'a password for the pool 2')).toBe(false);
    expect(await verifyPassword('not-a-hash', 'x')).toBe(false);
    expect(await verifyPassword(null, 'x')).toBe(false);
    await Promise.all(Array.from({ length: ARGON2_CONCURRENCY * 3 }, (_, i) => hashPassword(`burst ${i}`)));
    expect(argon2Pool.started).toBeGreaterThan(0);
    expect(argon2Pool.started).toBeLessThanOrEqual(ARGON2_CONCURRENCY);
    expect(argon2Load()).toEqual({ running: 0, waiting: 0 });
  });

  it.runIf(linux)(
    'the pool threads run at nice ARGON2_NICE, the event loop stays where it was, and the hashing happens there',
    async () => {
      const mainNice = taskStat('self')(19);
      await Promise.all(Array.from({ length: ARGON2_CONCURRENCY }, (_, i) => hashPassword(`warm ${i}`)));
      const tids = argon2Pool.threadIds();
      expect(tids.length).toBe(argon2Pool.started);
      expect(tids).not.toContain(Number(readFileSync('/proc/thread-self/stat', 'utf8').split(' ')[0]));
      for (const tid of tids) expect(taskStat(tid)(19)).toBe(mainNice + ARGON2_NICE);
      expect(taskStat('self')(19)).toBe(mainNice);

      // utime + stime (fields 14, 15, in 10 ms ticks) of the pool threads grows by the hashes' cost: the computation runs
      // on these threads, not on libuv's pool at the process's priority.
      const cpuTicks = () => tids.reduce((sum, tid) => sum + taskStat(tid)(14) + taskStat(tid)(15), 0);
      const before = cpuTicks();
      for (let i = 0; i < 20; i++) await hashPassword(`sequential ${i}`);
      expect(cpuTicks() - before).toBeGreaterThanOrEqual(10); // 20 hashes of ~10 ms each; at least half of that
    },
  );
});

describe('the priority step never fails a hash', () => {
  it('a thread that cannot set its priority (a nice value the kernel refuses) still hashes and verifies', async () => {
    const pool = new Argon2Pool(1, 99);
    const options = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 };
    const hash = await pool.run({ op: 'hash', password: 'still hashed 1', options });
    expect(await pool.run({ op: 'verify', hash, password: 'still hashed 1' })).toBe(true);
    expect(await pool.run({ op: 'verify', hash, password: 'still hashed 2' })).toBe(false);
    expect(pool.niceError).toMatch(/nice|priority|range/i);
    if (linux) expect(taskStat(pool.threadIds()[0]!)(19)).toBe(taskStat('self')(19));
  });
});

describe('the pool leaks no threads and keeps no process alive', () => {
  it.runIf(linux)(
    'apps started and stopped with sign-ins in each share the one pool: the thread count does not grow',
    async () => {
      const cycle = async () => {
        const t = await startApp();
        try {
          const { user } = await orgMember(t);
          await Promise.all([signIn(t, user.email), signIn(t, user.email), signIn(t, user.email)]);
        } finally {
          await t.close();
        }
      };
      await cycle();
      const threadsAfterFirst = threadCount();
      for (let i = 0; i < 2; i++) await cycle();
      expect(argon2Pool.started).toBeLessThanOrEqual(ARGON2_CONCURRENCY);
      expect(threadCount()).toBeLessThanOrEqual(threadsAfterFirst);
    },
    180_000,
  );

  it('a process that hashes and has nothing else to do exits: busy threads hold it, idle ones do not', async () => {
    const passwords = fileURLToPath(new URL('../../src/modules/identity/passwords.ts', import.meta.url));
    const script = `const m = await import(${JSON.stringify(passwords)});
      const h = await m.hashPassword(${JSON.stringify(PASSWORD)});
      console.log(await m.verifyPassword(h, ${JSON.stringify(PASSWORD)}), m.argon2Pool.started);`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      { timeout: 20_000, killSignal: 'SIGKILL' },
    );
    expect(stdout.trim()).toBe('true 1');
  }, 30_000);
});

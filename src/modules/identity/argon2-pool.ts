// argon2id in dedicated worker threads at a lower CPU priority than the event loop. The kernel gives the
// event loop, PostgreSQL and everything else a core first and argon2 what is left; an idle core still goes to argon2.
import { createRequire } from 'node:module';
import { debuglog } from 'node:util';
import { Worker } from 'node:worker_threads';

/**
 * The argon2 threads' nice value (the event loop keeps the process's own). Against a nice-0 thread on a contended core,
 * CFS gives a nice-10 one a weight of 110 to 1,024: argon2 yields at once but still gets ~10 %, so under a saturated
 * machine logins slow down instead of stopping. A constant: no deployment has needed another value.
 */
export const ARGON2_NICE = 10;

/**
 * The worker, given as code: the same under tsx, vitest (which cannot load a TypeScript worker file on Node 20) and the
 * esbuild bundle, with no second entry file to locate. It renices its own thread (Linux: the nice value is per thread)
 * and runs the synchronous argon2 functions, so the hash runs on this thread (the async ones would run on libuv's pool
 * at the process's priority).
 */
const WORKER_CODE = `
const { parentPort, workerData } = require('node:worker_threads');
const { hashSync, verifySync } = require(workerData.argon2);
let tid = null;
let niceError = null;
try {
  tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
  require('node:os').setPriority(tid, workerData.nice);
} catch (err) {
  niceError = String((err && err.message) || err);
}
parentPort.postMessage({ ready: true, tid, niceError });
parentPort.on('message', (task) => {
  try {
    const result = task.op === 'hash' ? hashSync(task.password, task.options) : verifySync(task.hash, task.password);
    parentPort.postMessage({ result });
  } catch (err) {
    parentPort.postMessage({ error: String((err && err.message) || err) });
  }
});
`;

export type Argon2Task =
  | { op: 'hash'; password: string; options: Record<string, number> }
  | { op: 'verify'; hash: string; password: string };

interface Slot {
  worker: Worker;
  tid: number | null;
  task: { resolve: (value: unknown) => void; reject: (err: Error) => void } | null;
}

const debug = debuglog('gatehouse');
/** Resolved here, in the parent: the worker has no module path of its own to resolve from. */
let argon2Path: string | null = null;
let niceReported = false;

/**
 * A fixed-size pool: at most `size` threads, started one at a time as tasks need them (none at start, so idle RSS does
 * not grow), kept afterwards. A thread is referenced only while it runs a task, so an idle pool never keeps the process
 * alive. One task per thread; the caller queues (passwords.ts `capped`, FIFO, the cap = `size`).
 */
export class Argon2Pool {
  private readonly slots = new Set<Slot>();
  private readonly idle: Slot[] = [];
  /** Why a thread could not lower its priority (it then hashes at the normal one), or null. */
  niceError: string | null = null;

  constructor(
    private readonly size: number,
    private readonly nice = ARGON2_NICE,
  ) {}

  run(task: { op: 'hash'; password: string; options: Record<string, number> }): Promise<string>;
  run(task: { op: 'verify'; hash: string; password: string }): Promise<boolean>;
  run(task: Argon2Task): Promise<unknown> {
    const slot = this.idle.pop() ?? this.spawn();
    return new Promise((resolve, reject) => {
      slot.task = { resolve, reject };
      slot.worker.ref();
      slot.worker.postMessage(task);
    });
  }

  /** Thread ids (Linux tids) of the started threads whose id is known (for the priority test). */
  threadIds(): number[] {
    return [...this.slots].flatMap((s) => (s.tid === null ? [] : [s.tid]));
  }

  get started(): number {
    return this.slots.size;
  }

  private spawn(): Slot {
    if (this.slots.size >= this.size) throw new Error(`argon2 pool: more than ${this.size} tasks at once`);
    argon2Path ??= createRequire(import.meta.url).resolve('@node-rs/argon2');
    const worker = new Worker(WORKER_CODE, {
      eval: true,
      execArgv: [], // no tsx loader, no --cpu-prof: the worker needs neither
      workerData: { argon2: argon2Path, nice: this.nice },
    });
    const slot: Slot = { worker, tid: null, task: null };
    this.slots.add(slot);
    worker.on('message', (msg: { ready?: true; tid?: number | null; niceError?: string | null } & TaskResult) => {
      if (msg.ready) {
        slot.tid = msg.tid ?? null;
        if (msg.niceError) {
          this.niceError ??= msg.niceError;
          if (!niceReported) debug('argon2 threads run at the normal priority: %s', msg.niceError);
          niceReported = true;
        }
        return;
      }
      const task = slot.task;
      slot.task = null;
      worker.unref();
      this.idle.push(slot);
      if (!task) return;
      if (msg.error !== undefined) task.reject(new Error(msg.error));
      else task.resolve(msg.result);
    });
    const fail = (err: Error) => {
      this.slots.delete(slot);
      const at = this.idle.indexOf(slot);
      if (at >= 0) this.idle.splice(at, 1);
      const task = slot.task;
      slot.task = null;
      task?.reject(err);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`argon2 worker exited (${code})`)));
    return slot;
  }
}

interface TaskResult {
  result?: unknown;
  error?: string;
}

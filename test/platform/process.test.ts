// The service as the operator runs it: `node --import tsx src/main.ts` as a child process on the embedded
// database. Start on a fresh directory (migrations applied by the process), one process per data directory,
// graceful shutdown that lets in-flight requests finish, restart with the data intact, crash recovery,
// refusal of a bad environment. The tests run in order and share one data directory.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR, openPglite } from '../../src/db/connect.js';
import { freePort } from '../support/app.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** One `node --import tsx src/main.ts` child with a clean environment (no DATABASE_URL, REDIS_URL or key inherited). */
class ServiceProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<Exit>;
  stdout = '';
  stderr = '';
  private exit: Exit | null = null;

  constructor(
    readonly port: number,
    env: Record<string, string>,
  ) {
    const base = Object.fromEntries(
      ['PATH', 'HOME', 'TMPDIR', 'LANG'].flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : [])),
    );
    this.child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: { ...base, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (d: Buffer) => (this.stdout += d.toString()));
    this.child.stderr!.on('data', (d: Buffer) => (this.stderr += d.toString()));
    // 'close' fires after the output streams are drained, so the last log lines are in stdout/stderr.
    this.exited = new Promise((resolve) =>
      this.child.once('close', (code, signal) => resolve((this.exit = { code, signal }))),
    );
    running.add(this);
    void this.exited.then(() => running.delete(this));
  }

  get url() {
    return `http://127.0.0.1:${this.port}`;
  }
  get alive() {
    return this.exit === null;
  }
  output() {
    return `--- stdout\n${this.stdout}\n--- stderr\n${this.stderr}`;
  }

  async waitForLog(pattern: RegExp, timeoutMs = 100_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pattern.test(this.stdout)) {
      if (!this.alive)
        throw new Error(`process exited (${JSON.stringify(this.exit)}) before logging ${pattern}\n${this.output()}`);
      if (Date.now() > deadline) throw new Error(`no ${pattern} within ${timeoutMs} ms\n${this.output()}`);
      await sleep(25);
    }
  }

  ready(timeoutMs?: number) {
    return this.waitForLog(/"msg":"gatehouse ready"/, timeoutMs);
  }

  async exitWithin(timeoutMs: number): Promise<Exit> {
    const timeout = sleep(timeoutMs).then(() => {
      throw new Error(`process still running after ${timeoutMs} ms\n${this.output()}`);
    });
    return Promise.race([this.exited, timeout]);
  }

  async stop(): Promise<Exit> {
    this.child.kill('SIGTERM');
    return this.exitWithin(30_000);
  }
}

const running = new Set<ServiceProcess>();
const start = async (env: Record<string, string>) => new ServiceProcess(await freePort(), env);

async function readyz(s: ServiceProcess) {
  const res = await fetch(`${s.url}/readyz`);
  return { status: res.status, body: (await res.json()) as unknown };
}

async function signingKid(s: ServiceProcess): Promise<string> {
  const res = await fetch(`${s.url}/api/v1/.well-known/jwks.json`);
  expect(res.status).toBe(200);
  const { keys } = (await res.json()) as { keys: { kid: string }[] };
  expect(keys).toHaveLength(1);
  return keys[0]!.kid;
}

let dataDir: string;
let scratchDirs: string[] = [];
let first: ServiceProcess;
let kid: string;
const lockFile = () => join(dataDir, 'gatehouse.lock');

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-process-'));
});
afterAll(async () => {
  for (const s of [...running]) {
    s.child.kill('SIGKILL');
    await s.exited;
  }
  for (const d of [dataDir, ...scratchDirs]) if (d) rmSync(d, { recursive: true, force: true });
});

describe('the service process on the embedded database', () => {
  it('starts on a fresh data directory, applying the migrations itself, and /readyz answers 200', async () => {
    expect(readdirSync(dataDir)).toEqual([]);
    const t0 = Date.now();
    first = await start({ DATA_DIR: dataDir });
    await first.ready();
    console.info(`first start on a fresh directory: ${Date.now() - t0} ms`);

    expect(await readyz(first)).toEqual({
      status: 200,
      body: { status: 'ready', database: 'pglite', store: 'database', devMode: false },
    });
    // The signing key lives in a migrated table: its presence shows the schema was built by this process.
    kid = await signingKid(first);
    expect(readFileSync(lockFile(), 'utf8').trim()).toBe(String(first.child.pid));
    expect(existsSync(join(dataDir, 'encryption.key'))).toBe(true);
    expect(first.stdout).toMatch(/generated a development encryption key/);
  }, 120_000);

  it('a second process on the same DATA_DIR refuses to start while the first still serves', async () => {
    expect(first.alive).toBe(true);
    const second = await start({ DATA_DIR: dataDir });
    const exit = await second.exitWithin(60_000);
    expect(exit.code, second.output()).not.toBe(0);
    expect(exit.code).not.toBeNull();
    expect(second.stderr).toMatch(/in use/);
    expect(second.stderr).toContain(dataDir);
    expect(second.stderr).toContain(`process ${first.child.pid}`);
    expect(second.stdout).not.toMatch(/gatehouse ready/);

    // The first process and its lock are untouched.
    expect(readFileSync(lockFile(), 'utf8').trim()).toBe(String(first.child.pid));
    expect((await readyz(first)).status).toBe(200);
    expect(await signingKid(first)).toBe(kid);
  }, 120_000);

  it('on SIGTERM an in-flight request completes, the process exits 0 and releases the directory', async () => {
    // A request held in flight by its body arriving slowly: Fastify reads the body before routing it to the
    // 404 handler, so the request cannot finish before the last byte is sent.
    const body = JSON.stringify({ probe: 'in-flight', padding: 'x'.repeat(200) });
    const socket = connect(first.port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    let response = '';
    socket.on('data', (d: Buffer) => (response += d.toString()));
    const responded = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(
      `POST /api/v1/in-flight-probe HTTP/1.1\r\nHost: 127.0.0.1:${first.port}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: in-flight-1\r\n\r\n${body.slice(0, 20)}`,
    );
    // Request lines are logged when they complete; give the server a moment to read the headers.
    await sleep(500);

    first.child.kill('SIGTERM');
    await first.waitForLog(/"msg":"shutting down/, 10_000);

    // While draining, no new work is taken on.
    let turnedAway = false;
    for (let i = 0; i < 40 && !turnedAway; i++) {
      turnedAway = await fetch(`${first.url}/healthz`).then(
        (r) => r.status === 503,
        () => true, // connection refused: the listener is closed
      );
      if (!turnedAway) await sleep(50);
    }
    expect(turnedAway).toBe(true);

    // The process waits for the request: still alive, nothing answered yet.
    await sleep(500);
    expect(first.alive, first.output()).toBe(true);
    expect(response).toBe('');
    expect(first.stdout).not.toMatch(/shutdown complete/);

    socket.write(body.slice(20));
    await responded;
    expect(response).toMatch(/^HTTP\/1\.1 404 /);
    expect(response).toMatch(/x-request-id: in-flight-1/i);
    expect(response).toContain('"code":"not_found"');

    expect(await first.exitWithin(30_000)).toEqual({ code: 0, signal: null });
    expect(first.stdout).toMatch(/"msg":"shutdown complete"/);
    expect(first.stdout).toMatch(/"reqId":"in-flight-1"[^\n]*"status":404/);
    expect(existsSync(lockFile())).toBe(false);
  }, 120_000);

  let restarted: ServiceProcess;
  it('restarts on the same directory with its data: the same signing key', async () => {
    const t0 = Date.now();
    restarted = await start({ DATA_DIR: dataDir });
    await restarted.ready();
    console.info(`restart on an existing directory: ${Date.now() - t0} ms`);
    expect((await readyz(restarted)).status).toBe(200);
    expect(await signingKid(restarted)).toBe(kid);
    expect(restarted.stdout).not.toMatch(/generated a development encryption key/);
  }, 120_000);

  it('after a crash (SIGKILL) the stale lock does not block the next start, and the data survives', async () => {
    const crashing = restarted;
    expect(crashing.alive).toBe(true);
    crashing.child.kill('SIGKILL');
    expect(await crashing.exitWithin(10_000)).toEqual({ code: null, signal: 'SIGKILL' });
    expect(readFileSync(lockFile(), 'utf8').trim()).toBe(String(crashing.child.pid));

    const next = await start({ DATA_DIR: dataDir });
    await next.ready();
    expect((await readyz(next)).status).toBe(200);
    expect(await signingKid(next)).toBe(kid);
    expect(readFileSync(lockFile(), 'utf8').trim()).toBe(String(next.child.pid));
    expect(await next.stop()).toEqual({ code: 0, signal: null });
  }, 120_000);

  it('the directory left behind holds every migration and opens in-process', async () => {
    const journal = JSON.parse(readFileSync(join(MIGRATIONS_DIR, 'meta', '_journal.json'), 'utf8')) as {
      entries: unknown[];
    };
    const db = await openPglite(dataDir);
    const rows = async (q: ReturnType<typeof sql>) => ((await db.db.execute(q)) as unknown as { rows: unknown[] }).rows;
    try {
      expect(await rows(sql`select count(*)::int as n from drizzle.__drizzle_migrations`)).toEqual([
        { n: journal.entries.length },
      ]);
      expect(await rows(sql`select kid from signing_keys`)).toEqual([{ kid }]);
    } finally {
      await db.close();
    }
  }, 60_000);

  it('a bad environment stops the start with a message naming the variable', async () => {
    const dirs = [mkdtempSync(join(tmpdir(), 'gatehouse-badenv-')), mkdtempSync(join(tmpdir(), 'gatehouse-badenv-'))];
    scratchDirs = dirs;
    const [badPort, prodWithoutKey] = await Promise.all([
      start({ DATA_DIR: dirs[0]!, PORT: 'abc' }),
      start({ DATA_DIR: dirs[1]!, NODE_ENV: 'production', PUBLIC_URL: 'https://id.example.com' }),
    ]);
    const [e1, e2] = await Promise.all([badPort.exitWithin(60_000), prodWithoutKey.exitWithin(60_000)]);

    expect(e1.code, badPort.output()).not.toBe(0);
    expect(e1.code).not.toBeNull();
    expect(badPort.stderr).toMatch(/^gatehouse: cannot start: invalid configuration: PORT: /m);
    expect(e2.code, prodWithoutKey.output()).not.toBe(0);
    expect(e2.code).not.toBeNull();
    expect(prodWithoutKey.stderr).toMatch(/ENCRYPTION_KEY: required in production/);
    expect(prodWithoutKey.stderr).toMatch(/DATABASE_URL: /);
    // Refused before touching anything.
    for (const d of dirs) expect(readdirSync(d)).toEqual([]);
  }, 120_000);
});

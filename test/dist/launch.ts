// The built server (dist/, or GATEHOUSE_DIST_DIR) as its own process, started as `npm start` starts it: node with the
// start script's flags, default logging, settings only through the environment, a fresh DATA_DIR, or (DATABASE_URL
// set) an empty PostgreSQL database of its own that the first start migrates, plus REDIS_URL when the run has it.
// Tests and benchmarks drive it over HTTP only; what it prints is kept for the setup link and for failure messages.
// No vitest and no src/ here: bench/ runs it from plain node.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { distDir, ROOT, serverCommand } from '../../scripts/built-server.js';
import { adminUrl, freePort } from '../support/addresses.js';
import { ApiClient } from '../support/client.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface BuiltServer {
  /** http://localhost:PORT: where it listens (WebAuthn refuses 127.0.0.1); the first process's PUBLIC_URL and APP_URL. */
  baseUrl: string;
  env: Record<string, string>;
  /** The setup link of the current process's "First run:" line, or null once a partner exists. */
  setupLink(): string | null;
  output(): string;
  /** The server process's id (CPU time and memory of the running process, for the benchmarks). */
  pid(): number;
  client(): ApiClient;
  /** Runs the compiled CLI of the same build with the server's environment (stop the server first on PGlite). */
  cli(args: string[], env?: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }>;
  stop(): Promise<void>;
  /** Starts it again on the same database and port. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface LaunchOptions {
  /** PostgreSQL server to create the empty database on; default DATABASE_URL, none: PGlite in DATA_DIR. */
  databaseUrl?: string | undefined;
  /** Default REDIS_URL. */
  redisUrl?: string | undefined;
  /** Put before the command line, e.g. ['taskset', '-c', '0'] to pin the server to a core. */
  prefix?: string[];
  /** Node flags given with npm start's own, e.g. --cpu-prof. */
  nodeFlags?: string[];
}

async function emptyPostgresDatabase(
  base: string | undefined,
): Promise<{ url: string; drop: () => Promise<void> } | null> {
  if (!base) return null;
  const name = `gh_dist_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl(base) });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  await admin.end();
  return {
    url: adminUrl(base, name),
    drop: async () => {
      const a = new pg.Client({ connectionString: adminUrl(base) });
      await a.connect();
      await a.query(`drop database if exists "${name}" with (force)`);
      await a.end();
    },
  };
}

export async function startBuiltServer(
  extraEnv: Record<string, string> = {},
  options: LaunchOptions = {},
): Promise<BuiltServer> {
  const { databaseUrl = process.env.DATABASE_URL, redisUrl = process.env.REDIS_URL } = options;
  const port = await freePort();
  const baseUrl = `http://localhost:${port}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'gh-dist-'));
  const database = await emptyPostgresDatabase(databaseUrl);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: baseUrl,
    APP_URL: baseUrl,
    DATA_DIR: dataDir,
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    ...(database ? { DATABASE_URL: database.url } : {}),
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    // Redis outlives each server: every test file's setup and sign-up come from 127.0.0.1 into one window per address.
    RATE_LIMIT_REGISTER_PARTNER: '1000/3600',
    RATE_LIMIT_REGISTER: '1000/3600',
    ...extraEnv,
  };
  return launch(env, port, options, async () => {
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });
}

/**
 * Another process of the same service beside `first`, as a replica behind a load balancer: the same settings, database
 * and store, the same public address, its own port (and DATA_DIR, unused on PostgreSQL).
 */
export async function startReplica(first: BuiltServer): Promise<BuiltServer> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'gh-dist-'));
  return launch({ ...first.env, PORT: String(port), DATA_DIR: dataDir }, port, {}, async () =>
    rmSync(dataDir, { recursive: true, force: true }),
  );
}

async function launch(
  env: Record<string, string>,
  port: number,
  options: LaunchOptions,
  cleanup: () => Promise<void>,
): Promise<BuiltServer> {
  const baseUrl = `http://localhost:${port}`;
  let child: ChildProcess | null = null;
  let out = '';
  let current = '';

  async function start() {
    const [node, ...rest] = serverCommand();
    const [cmd, ...args] = [...(options.prefix ?? []), node!, ...(options.nodeFlags ?? []), ...rest];
    current = '';
    child = spawn(cmd!, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const take = (d: Buffer) => {
      out += d.toString();
      current += d.toString();
    };
    child.stdout!.on('data', take);
    child.stderr!.on('data', take);
    const until = Date.now() + 120_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the built server exited (${child.exitCode}):\n${current}`);
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`)
        .then((r) => r.status === 200)
        .catch(() => false);
      // The setup link is printed just after the ready line; wait for it when setup is still needed.
      if (ready && (/First run: /.test(current) || /"msg":"gatehouse ready"/.test(current))) {
        const status = (await (await fetch(`${baseUrl}/api/v1/setup/status`)).json()) as { needed: boolean };
        if (!status.needed || /First run: /.test(current)) return;
      }
      if (Date.now() > until) throw new Error(`the built server did not become ready:\n${current}`);
      await sleep(100);
    }
  }

  async function stop() {
    const c = child as ChildProcess | null;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = once(c, 'exit');
    c.kill('SIGTERM');
    const timer = setTimeout(() => c.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  }

  await start();
  return {
    baseUrl,
    env,
    setupLink: () => /First run: .* at (\S+) \(/.exec(current)?.[1] ?? null,
    output: () => out,
    pid: () => (child as ChildProcess | null)?.pid ?? 0,
    client: () => new ApiClient(baseUrl),
    cli: (args, more = {}) =>
      new Promise((resolve) => {
        // `npx gatehouse` (bin/gatehouse.js loads dist/cli); another build's CLI directly.
        const entry = process.env.GATEHOUSE_DIST_DIR
          ? join(distDir(), 'cli', 'main.js')
          : join(ROOT, 'bin', 'gatehouse.js');
        const p = spawn(process.execPath, [entry, ...args], {
          cwd: ROOT,
          env: { ...env, ...more },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        p.on('close', (code) => resolve({ code, stdout, stderr }));
      }),
    stop,
    restart: async () => {
      await stop();
      await start();
    },
    close: async () => {
      await stop();
      await cleanup();
    },
  };
}

/** The mails' and the setup link's token parameter. */
export const tokenOf = (link: string) => new URL(link).searchParams.get('token')!;

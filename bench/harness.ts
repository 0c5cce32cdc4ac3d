// Shared by the load benchmarks: child processes for servers and the load generator, pinned to their own cores
// when taskset is there, and the "quiet machine" thresholds the load generator judges each second by.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startFlags } from '../scripts/built-server.js';
import type { LoadgenConfig, LoadgenResult } from './framework/loadgen.js';

export { startFlags };

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..');
export const QUIET = { otherOnServerCorePercent: 10, otherMachinePercent: 20, loadgenRunDelayPercent: 5 };
export const arg = (name: string, dflt: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt;
export const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
export const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');

export function canPin(): boolean {
  if (os.platform() !== 'linux' || os.availableParallelism() < 2) return false;
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export function spawnNode(args: string[], cpu: number | null, env: NodeJS.ProcessEnv): ChildProcess {
  const argv = [process.execPath, ...startFlags(), '--import', 'tsx', ...args];
  if (cpu !== null) argv.unshift('taskset', '-c', String(cpu));
  const [cmd, ...rest] = argv;
  return spawn(cmd!, rest, {
    cwd: ROOT,
    env: { ...env, BENCH_EXIT_WITH_PARENT: '1' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
}

export function firstLine(child: ChildProcess, prefix: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error(`no "${prefix}" within ${timeoutMs} ms`)), timeoutMs);
    child.once('exit', (code) => reject(new Error(`child exited (${code}) before "${prefix}"`)));
    rl.on('line', (line) => {
      if (!line.startsWith(prefix)) return;
      clearTimeout(timer);
      child.stdout!.resume();
      resolve(line.slice(prefix.length).trim());
    });
  });
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

export async function loadgen(config: LoadgenConfig, cpu: number | null): Promise<LoadgenResult> {
  const child = spawnNode([join(HERE, 'framework/loadgen.ts'), JSON.stringify(config)], cpu, process.env);
  let result: LoadgenResult | undefined;
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line.startsWith('{')) result = JSON.parse(line) as LoadgenResult;
  });
  const [code] = (await once(child, 'close')) as [number | null];
  if (code !== 0 || !result) throw new Error(`loadgen failed (${code})`);
  return result;
}

/**
 * The ceiling of the load benchmarks: a raw node:http server answering GET /api/v1/hello, measured with the same load
 * generator, connections and pinning as the app it is compared with, in the same run.
 */
export async function measureCeiling(o: {
  duration: number;
  warmup: number;
  connections: number;
  pin: boolean;
}): Promise<LoadgenResult> {
  const { generateKeyPair, exportJWK } = await import('jose');
  const { publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const child = spawnNode([join(HERE, 'framework/server-node.ts'), String(port)], o.pin ? 0 : null, {
    ...process.env,
    NODE_ENV: 'production',
    BENCH_JWT_PUBLIC_JWK: JSON.stringify(await exportJWK(publicKey)),
  });
  try {
    await firstLine(child, 'LISTENING', 20_000);
    return await loadgen(
      {
        url: `http://127.0.0.1:${port}/api/v1/hello`,
        connections: o.connections,
        warmupSeconds: o.warmup,
        durationSeconds: o.duration,
        headers: {},
        serverPid: child.pid!,
        serverCore: o.pin ? 0 : null,
        quiet: QUIET,
      },
      o.pin ? 1 : null,
    );
  } finally {
    await stop(child);
  }
}

/** The databases to run on: PGlite always; PostgreSQL (+ Redis) when DATABASE_URL / BENCH_DATABASE_URL is set. */
export function databases(): { name: string; env: NodeJS.ProcessEnv }[] {
  const base = { ...process.env };
  delete base.DATABASE_URL;
  delete base.REDIS_URL;
  const pgUrl = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL;
  const redisUrl = process.env.BENCH_REDIS_URL ?? process.env.REDIS_URL;
  const wanted = arg('db', 'pglite,postgres').split(',');
  const out: { name: string; env: NodeJS.ProcessEnv }[] = [];
  if (wanted.includes('postgres') && pgUrl)
    out.push({
      name: redisUrl ? 'PostgreSQL + Redis' : 'PostgreSQL',
      env: { ...base, DATABASE_URL: pgUrl, ...(redisUrl ? { REDIS_URL: redisUrl } : {}) },
    });
  if (wanted.includes('pglite')) out.push({ name: 'PGlite', env: base });
  return out;
}

/** A benchmark file's entry: `--serve` runs its server half (spawned as a child), otherwise the measurement; a failure exits 1. */
export function runBench(serve: () => Promise<unknown>, measure: () => Promise<unknown>): void {
  (process.argv.includes('--serve') ? serve() : measure()).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}

/**
 * Bulk data a benchmark cannot make over HTTP in reasonable time (a million audit records, 10,000 users), written
 * straight into a built server's database as its owner (no row security), then the server started again on it so it
 * reads the data as it would after any restart. On PGlite the server is stopped first: one process at a time may open
 * its DATA_DIR. Everything a customer could do over HTTP is still done over HTTP; only the volume comes this way.
 */
export async function seedDatabase<T>(
  server: { env: Record<string, string>; stop(): Promise<void>; restart(): Promise<void> },
  seed: (db: import('../src/db/connect.js').Db) => Promise<T>,
): Promise<T> {
  const { openDatabase } = await import('../src/db/connect.js');
  await server.stop();
  const database = await openDatabase({
    ...(server.env.DATABASE_URL ? { databaseUrl: server.env.DATABASE_URL } : {}),
    dataDir: server.env.DATA_DIR!,
    rowSecurity: false,
  });
  try {
    return await seed(database.db);
  } finally {
    await database.close();
    await server.restart();
  }
}

/**
 * Start and memory: the compiled server (`node dist/main.js`, what `npm start` execs) spawned as its
 * own process and timed from spawn to the first `GET /readyz` 200 (polled every 10 ms):
 * - first start: a fresh DATA_DIR (PGlite initdb + migrations), goal ≤ 8 s;
 * - restart: the same DATA_DIR again, goal ≤ 1 s;
 * - PostgreSQL (DATABASE_URL / BENCH_DATABASE_URL set; REDIS_URL too when set): a database of its own, created and
 *   migrated by the first start, then restarts timed; idle RSS goal ≤ 120 MB;
 * - idle RSS after ready and a few requests (probes, an unauthenticated call, a failed sign-in), then 1 s quiet;
 *   PGlite goal ≤ 350 MB. VmHWM (the process's peak) is printed beside it.
 * Ceiling in the same run: an empty `node -e` node:http server, spawned and polled the same way.
 * dist/ is rebuilt first when any file under src/ is newer than it. Options: --runs=5 --first-runs=3 --db=pglite,postgres
 * --dist=DIR (another build, e.g. of an older commit, for a before/after; not rebuilt); --dist=A,B compares builds on
 * PGlite, interleaved (e.g. the bundle against `node scripts/build-server.mjs --plain --outdir .build-plain`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import os, { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { ensureBuilt, startFlags } from '../scripts/built-server.js';
import { arg, databases } from './harness.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const GOALS = { firstStartMs: 8000, restartMs: 1000, rssPostgresMb: 120, rssPgliteMb: 350 };
const runs = Number(arg('runs', '5'));
const firstRuns = Number(arg('first-runs', '3'));
const distDir = arg('dist', '');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function call(port: number, method: string, path: string, body?: unknown): Promise<number> {
  return new Promise((resolve) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        timeout: 2000,
        headers: data ? { 'content-type': 'application/json' } : {},
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
    req.end(data);
  });
}

/** VmRSS and VmHWM of a live process, in MB (Linux /proc). */
function memory(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

/** CPU time (user + system, all threads) a live process has used, in ms: less bent by a busy machine than wall time. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(timer);
}

interface Sample {
  readyMs: number;
  cpuMs: number;
  rss: number;
  hwm: number;
}

/** Spawns argv with PORT set, times spawn → /readyz 200, runs a few requests, waits 1 s, reads the memory, stops it. */
async function sample(argv: string[], env: NodeJS.ProcessEnv, requests: boolean): Promise<Sample> {
  const port = await freePort();
  let stderr = '';
  const t0 = performance.now();
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: ROOT,
    env: { ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`exited (${child.exitCode}) before ready: ${stderr.slice(0, 2000)}`);
      if ((await call(port, 'GET', '/readyz')) === 200) break;
      if (performance.now() - t0 > 60_000) throw new Error(`not ready within 60 s: ${stderr.slice(0, 2000)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    const readyMs = performance.now() - t0;
    const cpu = cpuMs(child.pid!);
    if (requests) {
      for (let i = 0; i < 3; i++) {
        await call(port, 'GET', '/healthz');
        await call(port, 'GET', '/api/v1/auth/me'); // 401: the authentication guard
        await call(port, 'POST', '/api/v1/auth/login', {
          email: `nobody${i}@example.com`,
          password: 'not-the-password-1',
        }); // 401
      }
    }
    await new Promise((r) => setTimeout(r, 1000));
    return { readyMs, cpuMs: cpu, ...memory(child.pid!) };
  } finally {
    await stop(child);
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

interface Row {
  label: string;
  samples: Sample[];
}
function summarise({ label, samples }: Row): { ready: number; rss: number; hwm: number } {
  const ready = median(samples.map((s) => s.readyMs));
  const cpu = median(samples.map((s) => s.cpuMs));
  const rss = median(samples.map((s) => s.rss));
  const hwm = Math.max(...samples.map((s) => s.hwm));
  const spread = `${Math.min(...samples.map((s) => s.readyMs)).toFixed(0)}–${Math.max(...samples.map((s) => s.readyMs)).toFixed(0)}`;
  console.log(
    `${label.padEnd(40)} ready ${ready.toFixed(0).padStart(6)} ms (${spread}, n=${samples.length}, CPU ${cpu.toFixed(0)} ms)   idle RSS ${rss.toFixed(0).padStart(4)} MB   peak ${hwm.toFixed(0).padStart(4)} MB`,
  );
  return { ready, rss, hwm };
}

const verdicts: string[] = [];
function goal(name: string, figure: number, target: number, unit: string, ceiling: number) {
  const ratio = figure / target;
  const line = `${name.padEnd(40)} ${figure.toFixed(0).padStart(6)} ${unit}   goal ≤ ${target} ${unit}   ratio ${ratio.toFixed(2)}   (${(figure / ceiling).toFixed(1)}× empty node)   ${ratio <= 1 ? 'MET' : 'NOT MET'}`;
  verdicts.push(line);
}

/** An empty PostgreSQL database beside the one `url` names, and how to drop it. */
async function ownDatabase(url: string, name: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const adminUrl = new URL(url);
  adminUrl.pathname = '/postgres';
  const run = async (q: string) => {
    const c = new pg.Client({ connectionString: adminUrl.toString() });
    await c.connect();
    await c.query(q);
    await c.end();
  };
  await run(`create database "${name}"`);
  const own = new URL(url);
  own.pathname = `/${name}`;
  return { url: own.toString(), drop: () => run(`drop database if exists "${name}" with (force)`) };
}

/**
 * `--dist=A,B`: builds compared on PGlite, their samples interleaved so that load from elsewhere on the machine falls
 * on both alike: a first start on an empty DATA_DIR and restarts, CPU time beside wall time.
 */
async function compare(dirs: string[]) {
  const base = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' };
  const root = mkdtempSync(join(tmpdir(), 'gh-bench-start-ab-'));
  const rows = dirs.map((d) => ({
    first: { label: `${d}: first start (unpack + migrate)`, samples: [] as Sample[] },
    restart: { label: `${d}: restart`, samples: [] as Sample[] },
    pg: null as Row | null,
  }));
  try {
    const onPglite = arg('db', 'pglite,postgres').split(',').includes('pglite');
    for (let i = 0; onPglite && i < firstRuns + runs; i++) {
      for (const [k, d] of dirs.entries()) {
        const server = [process.execPath, ...startFlags(), join(d, 'main.js')];
        const dir = join(root, `${k}-${i}`);
        if (i < firstRuns) rows[k]!.first.samples.push(await sample(server, { ...base, DATA_DIR: dir }, true));
        else rows[k]!.restart.samples.push(await sample(server, { ...base, DATA_DIR: join(root, `${k}-0`) }, true));
      }
    }
    const pgUrl = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL;
    if (pgUrl && arg('db', 'pglite,postgres').split(',').includes('postgres')) {
      // One database of its own, migrated by the first start; then restarts of each build in turn.
      const db = await ownDatabase(pgUrl, `gh_bench_ab_${process.pid}`);
      const redis = process.env.BENCH_REDIS_URL ?? process.env.REDIS_URL;
      const pgEnv = { ...base, DATABASE_URL: db.url, ...(redis ? { REDIS_URL: redis } : {}), DATA_DIR: root };
      try {
        await sample([process.execPath, ...startFlags(), join(dirs[0]!, 'main.js')], pgEnv, false);
        for (const r of rows) r.pg = { label: `${dirs[rows.indexOf(r)]}: PostgreSQL restart`, samples: [] };
        for (let i = 0; i < runs; i++)
          for (const [k, d] of dirs.entries())
            rows[k]!.pg!.samples.push(
              await sample([process.execPath, ...startFlags(), join(d, 'main.js')], pgEnv, true),
            );
      } finally {
        await db.drop();
      }
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  console.log(
    `\nStart, builds compared (median; ${os.availableParallelism()} cores, load ${os.loadavg()[0]!.toFixed(1)})`,
  );
  for (const r of rows) {
    if (r.first.samples.length) summarise(r.first);
    if (r.restart.samples.length) summarise(r.restart);
    if (r.pg) summarise(r.pg);
  }
}

async function main() {
  if (distDir.includes(',')) return compare(distDir.split(','));
  if (!distDir) ensureBuilt();
  const node = process.execPath;
  const base = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' };

  const empty = "require('http').createServer((q,s)=>s.end('ok')).listen(+process.env.PORT,'127.0.0.1')";
  const ceilingRow: Row = { label: 'ceiling: node -e http server', samples: [] };
  for (let i = 0; i < runs; i++) ceilingRow.samples.push(await sample([node, '-e', empty], base, false));
  const ceiling = summarise(ceilingRow);

  const server = [node, ...startFlags(), join(distDir || 'dist', 'main.js')];
  for (const { name, env } of databases()) {
    const dbEnv = {
      ...base,
      ...(env.DATABASE_URL ? { DATABASE_URL: env.DATABASE_URL } : {}),
      ...(env.REDIS_URL ? { REDIS_URL: env.REDIS_URL } : {}),
    };
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-bench-start-'));
    let dropDb: (() => Promise<void>) | null = null;
    try {
      if (env.DATABASE_URL) {
        // A database of its own (created empty, migrated by the first start), dropped at the end.
        const u = new URL(env.DATABASE_URL);
        const dbName = `gh_bench_start_${process.pid}`;
        const adminUrl = new URL(u);
        adminUrl.pathname = '/postgres';
        const admin = new pg.Client({ connectionString: adminUrl.toString() });
        await admin.connect();
        await admin.query(`create database "${dbName}"`);
        await admin.end();
        dropDb = async () => {
          const a = new pg.Client({ connectionString: adminUrl.toString() });
          await a.connect();
          await a.query(`drop database if exists "${dbName}" with (force)`);
          await a.end();
        };
        u.pathname = `/${dbName}`;
        const pgEnv = { ...dbEnv, DATABASE_URL: u.toString(), DATA_DIR: dataDir };
        const first = summarise({
          label: `${name}: first start (migrate)`,
          samples: [await sample(server, pgEnv, true)],
        });
        const restartRow: Row = { label: `${name}: restart`, samples: [] };
        for (let i = 0; i < runs; i++) restartRow.samples.push(await sample(server, pgEnv, true));
        const restart = summarise(restartRow);
        goal(`${name}: restart to ready`, restart.ready, GOALS.restartMs, 'ms', ceiling.ready);
        goal(`${name}: idle RSS`, restart.rss, GOALS.rssPostgresMb, 'MB', ceiling.rss);
        void first;
      } else {
        const firstRow: Row = { label: `${name}: first start (initdb)`, samples: [] };
        for (let i = 0; i < firstRuns; i++) {
          const dir = join(dataDir, `first-${i}`);
          firstRow.samples.push(await sample(server, { ...dbEnv, DATA_DIR: dir }, true));
        }
        const first = summarise(firstRow);
        const restartRow: Row = { label: `${name}: restart`, samples: [] };
        for (let i = 0; i < runs; i++)
          restartRow.samples.push(await sample(server, { ...dbEnv, DATA_DIR: join(dataDir, 'first-0') }, true));
        const restart = summarise(restartRow);
        goal(`${name}: first start to ready`, first.ready, GOALS.firstStartMs, 'ms', ceiling.ready);
        goal(`${name}: restart to ready`, restart.ready, GOALS.restartMs, 'ms', ceiling.ready);
        goal(`${name}: idle RSS`, restart.rss, GOALS.rssPgliteMb, 'MB', ceiling.rss);
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
      await dropDb?.();
    }
  }
  console.log('\nStart and memory (median; ratio = figure ÷ goal)');
  for (const v of verdicts) console.log(v);
}

await main();

/**
 * Hot path: authenticated GET /api/v1/users/me on the built server against raw node:http (a JSON hello world) in
 * the same run.
 *
 *   npx tsx bench/hot-path.ts [--duration=8] [--warmup=2] [--connections=20] [--profile] [--db=pglite,postgres]
 *
 * - The server is the build `npm start` runs (dist/, rebuilt first when src/ is newer): node with the start script's
 *   flags, default logging, settings through the environment only, a fresh DATA_DIR, or a fresh PostgreSQL database
 *   (+ REDIS_URL) when DATABASE_URL / BENCH_DATABASE_URL is set (test/dist/launch.ts). The API rate limit is raised
 *   through its env var, as the output says. The user is the first administrator, made over HTTP through the printed
 *   setup link with TOTP enrolled (test/dist/flows.ts); its access token (15 minutes) carries the load.
 * - The load generator (bench/framework/loadgen.ts, autocannon) is its own process. With taskset the server is pinned
 *   to CPU 0 and the load generator to CPU 1 (PostgreSQL and Redis float): the same for the ceiling and for the app.
 * - --profile runs the app once more under `node --cpu-prof` and prints where its main thread spent its time (start-up
 *   and setup included, the load dominating).
 * - The machine is shared with other people's test runs: absolute figures are noisy; the ratio to the ceiling
 *   measured in the same run is the figure that counts.
 */
import { mkdtempSync, readdirSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoadgenResult } from './framework/loadgen.js';
import { ensureBuilt, startFlags } from '../scripts/built-server.js';
import { firstAdmin } from '../test/dist/flows.js';
import { startBuiltServer } from '../test/dist/launch.js';
import { arg, canPin, databases, int, loadgen, measureCeiling, ms, QUIET } from './harness.js';
import { renderProfile, summariseProfile } from './cpu-profile.js';

export interface HotPathFigure {
  db: string;
  ceiling: LoadgenResult;
  app: LoadgenResult;
  ratio: number;
  /** The same app with DATABASE_ROW_SECURITY=off, measured in the same run. */
  noRls: LoadgenResult;
}

// ---------------------------------------------------------------------------------------------
// Parent.

interface Opts {
  duration: number;
  warmup: number;
  connections: number;
  pin: boolean;
}

/** Settings the benchmark changes from the defaults, through the environment, printed with the figures. */
const RAISED_LIMITS = { RATE_LIMIT_API: '100000000/60' };

async function measureApp(
  o: Opts,
  env: NodeJS.ProcessEnv,
  extraEnv: Record<string, string>,
  profileDir: string | null,
): Promise<LoadgenResult> {
  const server = await startBuiltServer(
    { ...RAISED_LIMITS, ...extraEnv },
    {
      databaseUrl: env.DATABASE_URL,
      redisUrl: env.REDIS_URL,
      prefix: o.pin ? ['taskset', '-c', '0'] : [],
      nodeFlags: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
    },
  );
  try {
    const admin = await firstAdmin(server);
    const res = await admin.api.raw.get('/users/me');
    if (res.status !== 200) throw new Error(`GET /users/me answered ${res.status}: ${res.text}`);
    return await loadgen(
      {
        // The server listens on 127.0.0.1; its public address says localhost.
        url: `${server.baseUrl.replace('localhost', '127.0.0.1')}/api/v1/users/me`,
        connections: o.connections,
        warmupSeconds: o.warmup,
        durationSeconds: o.duration,
        headers: { authorization: `Bearer ${admin.api.token}` },
        serverPid: server.pid(),
        serverCore: o.pin ? 0 : null,
        quiet: QUIET,
      },
      o.pin ? 1 : null,
    );
  } finally {
    await server.close();
  }
}

async function main(): Promise<void> {
  const o: Opts = {
    duration: Number(arg('duration', '8')),
    warmup: Number(arg('warmup', '2')),
    connections: Number(arg('connections', '20')),
    pin: canPin() && !process.argv.includes('--no-pin'),
  };
  const profile = process.argv.includes('--profile');
  ensureBuilt();
  const figures: HotPathFigure[] = [];
  for (const { name, env } of databases()) {
    process.stderr.write(`hot path · ${name}: ceiling (raw node:http) ... `);
    const ceiling = await measureCeiling(o);
    process.stderr.write(`${int(ceiling.all.reqPerSec)} req/s; app ... `);
    const app = await measureApp(o, env, {}, null);
    process.stderr.write(`${int(app.all.reqPerSec)} req/s\n`);
    process.stderr.write(`hot path · ${name}: the app without row-level security ... `);
    const noRls = await measureApp(o, env, { DATABASE_ROW_SECURITY: 'off' }, null);
    process.stderr.write(`${int(noRls.all.reqPerSec)} req/s\n`);
    figures.push({ db: name, ceiling, app, noRls, ratio: app.all.reqPerSec / ceiling.all.reqPerSec });
    if (profile) {
      const dir = mkdtempSync(join(tmpdir(), 'gh-prof-'));
      await measureApp({ ...o, warmup: 1, duration: Math.min(o.duration, 6) }, env, {}, dir);
      const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
      if (file)
        console.log(
          `\n${renderProfile(`GET /users/me on ${name} (${join(dir, file)})`, summariseProfile(join(dir, file)))}\n`,
        );
    }
  }
  console.log(
    `\n## Hot path: authenticated GET /api/v1/users/me, ${o.connections} connections, ${o.duration} s (${os.availableParallelism()} cores, Node ${process.versions.node}${o.pin ? ', server on CPU 0, load generator on CPU 1' : ''})\n`,
  );
  console.log(
    '| Database | Ceiling: raw node:http req/s | /users/me req/s | Ratio | p50 / p99 ms | server CPU µs/req: ceiling / app (ratio) | non-2xx | Verdict (≥ 40 %, p99 ≤ 20 ms) |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---|');
  for (const f of figures) {
    const met = f.ratio >= 0.4 && f.app.all.latencyP99Ms <= 20;
    const cpuRatio = f.ceiling.all.serverCpuMicrosPerReq / f.app.all.serverCpuMicrosPerReq;
    console.log(
      `| ${f.db} | ${int(f.ceiling.all.reqPerSec)} | ${int(f.app.all.reqPerSec)} | ${(f.ratio * 100).toFixed(1)} % | ${ms(f.app.all.latencyP50Ms)} / ${ms(f.app.all.latencyP99Ms)} ` +
        `| ${int(f.ceiling.all.serverCpuMicrosPerReq)} / ${int(f.app.all.serverCpuMicrosPerReq)} (${(cpuRatio * 100).toFixed(1)} %) | ${f.app.non2xx} | ${met ? 'met' : 'NOT met'} |`,
    );
  }
  console.log('\n### Row-level security: the same GET with and without it\n');
  console.log('| Database | without RLS req/s | with RLS req/s | cost | server CPU µs/req without / with | Verdict |');
  console.log('|---|---:|---:|---:|---:|---|');
  for (const f of figures) {
    const cost = 1 - f.app.all.reqPerSec / f.noRls.all.reqPerSec;
    console.log(
      `| ${f.db} | ${int(f.noRls.all.reqPerSec)} | ${int(f.app.all.reqPerSec)} | ${(cost * 100).toFixed(1)} % ` +
        `| ${int(f.noRls.all.serverCpuMicrosPerReq)} / ${int(f.app.all.serverCpuMicrosPerReq)} | ${cost <= 0.1 ? 'met' : 'NOT met'} |`,
    );
  }
  console.log(
    `\nThe app is the built server (node ${startFlags().join(' ')} dist/main.js, default logging); raised through env: ${Object.entries(
      RAISED_LIMITS,
    )
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}.`,
  );
  console.log(
    'The machine is shared: absolute req/s are noisy; the ratio to the ceiling measured in the same run is what counts.',
  );
  console.log(
    'Server CPU per request (Linux /proc, the server process only: PostgreSQL and Redis are other processes) does not',
  );
  console.log(
    'depend on how busy the machine is; its ratio is the capacity the app would have beside the ceiling on an idle core.',
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

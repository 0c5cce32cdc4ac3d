/**
 * P1 hot path: authenticated GET /api/v1/users/me against raw node:http (a JSON hello world) in the same run.
 *
 *   npx tsx bench/hot-path.ts [--duration=8] [--warmup=2] [--connections=20] [--profile] [--db=pglite,postgres]
 *
 * - PGlite always; PostgreSQL + Redis too when DATABASE_URL (and REDIS_URL) are set, or BENCH_DATABASE_URL /
 *   BENCH_REDIS_URL. Each server is its own child process; the load generator (bench/framework/loadgen.ts,
 *   autocannon) is another, never inside a server. With taskset the server is pinned to CPU 0 and the load
 *   generator to CPU 1 (PostgreSQL and Redis float): the same for the ceiling and for the app.
 * - --profile runs the app once more with the V8 CPU profiler (node:inspector, the same profiler as
 *   `node --cpu-prof`, started after the fixtures so only the load is in it) and prints where its main thread spent its time.
 * - The machine is shared with other people's test runs: absolute figures are noisy; the ratio to the ceiling
 *   measured in the same run is the figure that counts.
 */
import { mkdtempSync, readdirSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LoadgenResult } from './framework/loadgen.js';
import { arg, canPin, databases, firstLine, int, loadgen, ms, QUIET, runBench, spawnNode, stop } from './harness.js';
import { renderProfile, summariseProfile } from './cpu-profile.js';

const HERE = dirname(fileURLToPath(import.meta.url));

export interface HotPathFigure {
  db: string;
  ceiling: LoadgenResult;
  app: LoadgenResult;
  ratio: number;
  /** The same app with DATABASE_ROW_SECURITY=off, measured in the same run. */
  noRls: LoadgenResult;
}

// ---------------------------------------------------------------------------------------------
// Child: the app.

async function serve(): Promise<void> {
  const { prepareTemplate } = await import('../test/support/db.js');
  const { startApp } = await import('../test/support/app.js');
  const { addOrgMember, createOrg, createPartner, createUser, sessionFor } = await import(
    '../test/support/fixtures.js'
  );
  const { ORG_ADMIN_ROLE_ID } = await import('../src/modules/roles/catalog.js');
  await prepareTemplate();
  const t = await startApp({ LOG_LEVEL: 'warn', RATE_LIMIT_API: '100000000/60', RATE_LIMIT_LOGIN: '100000000/60' });
  const partner = await createPartner(t);
  const org = await createOrg(t, partner.id);
  const user = await createUser(t, { email: 'hot-path@example.test' });
  await addOrgMember(t, { orgId: org.id, userId: user.id, roleId: ORG_ADMIN_ROLE_ID });
  const session = await sessionFor(t, user.id, {
    scope: 'organization',
    orgId: org.id,
    partnerId: partner.id,
    roleId: ORG_ADMIN_ROLE_ID,
  });
  // Access tokens last 15 minutes: long enough for a run.
  const res = await fetch(`${t.baseUrl}/api/v1/users/me`, {
    headers: { authorization: `Bearer ${session.accessToken}` },
  });
  if (res.status !== 200) throw new Error(`GET /users/me answered ${res.status}: ${await res.text()}`);
  // The profile covers the load only (warm-up included), not start-up and fixtures.
  const profileDir = process.env.BENCH_PROFILE_DIR;
  let profiler: import('node:inspector/promises').Session | null = null;
  if (profileDir) {
    const { Session } = await import('node:inspector/promises');
    profiler = new Session();
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.start');
  }
  process.stdout.write(
    `READY ${JSON.stringify({ url: `${t.baseUrl}/api/v1/users/me`, token: session.accessToken })}\n`,
  );
  const stop = async () => {
    if (profiler && profileDir) {
      const { profile } = await profiler.post('Profiler.stop');
      const { writeFileSync } = await import('node:fs');
      writeFileSync(join(profileDir, 'app.cpuprofile'), JSON.stringify(profile));
    }
    await t.close().catch(() => {});
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

// ---------------------------------------------------------------------------------------------
// Parent.

interface Opts {
  duration: number;
  warmup: number;
  connections: number;
  pin: boolean;
}

async function measureCeiling(o: Opts): Promise<LoadgenResult> {
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

async function measureApp(o: Opts, env: NodeJS.ProcessEnv, profileDir: string | null): Promise<LoadgenResult> {
  const child = spawnNode(
    [fileURLToPath(import.meta.url), '--serve'],
    o.pin ? 0 : null,
    profileDir ? { ...env, BENCH_PROFILE_DIR: profileDir } : env,
  );
  try {
    const ready = JSON.parse(await firstLine(child, 'READY', 120_000)) as { url: string; token: string };
    return await loadgen(
      {
        url: ready.url,
        connections: o.connections,
        warmupSeconds: o.warmup,
        durationSeconds: o.duration,
        headers: { authorization: `Bearer ${ready.token}` },
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

async function main(): Promise<void> {
  const o: Opts = {
    duration: Number(arg('duration', '8')),
    warmup: Number(arg('warmup', '2')),
    connections: Number(arg('connections', '20')),
    pin: canPin() && !process.argv.includes('--no-pin'),
  };
  const profile = process.argv.includes('--profile');
  const figures: HotPathFigure[] = [];
  for (const { name, env } of databases()) {
    process.stderr.write(`hot path · ${name}: ceiling (raw node:http) ... `);
    const ceiling = await measureCeiling(o);
    process.stderr.write(`${int(ceiling.all.reqPerSec)} req/s; app ... `);
    const app = await measureApp(o, env, null);
    process.stderr.write(`${int(app.all.reqPerSec)} req/s\n`);
    process.stderr.write(`hot path · ${name}: the app without row-level security ... `);
    const noRls = await measureApp(o, { ...env, DATABASE_ROW_SECURITY: 'off' }, null);
    process.stderr.write(`${int(noRls.all.reqPerSec)} req/s\n`);
    figures.push({ db: name, ceiling, app, noRls, ratio: app.all.reqPerSec / ceiling.all.reqPerSec });
    if (profile) {
      const dir = mkdtempSync(join(tmpdir(), 'gh-prof-'));
      await measureApp({ ...o, warmup: 1, duration: Math.min(o.duration, 6) }, env, dir);
      const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
      if (file)
        console.log(
          `\n${renderProfile(`GET /users/me on ${name} (${join(dir, file)})`, summariseProfile(join(dir, file)))}\n`,
        );
    }
  }
  console.log(
    `\n## P1 hot path: authenticated GET /api/v1/users/me, ${o.connections} connections, ${o.duration} s (${os.availableParallelism()} cores, Node ${process.versions.node}${o.pin ? ', server on CPU 0, load generator on CPU 1' : ''})\n`,
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
  console.log('\n### Row-level security: the same GET with and without it (issue 12 §4; goal: within 10 %)\n');
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
    '\nThe machine is shared: absolute req/s are noisy; the ratio to the ceiling measured in the same run is what counts.',
  );
  console.log(
    'Server CPU per request (Linux /proc, the server process only: PostgreSQL and Redis are other processes) does not',
  );
  console.log(
    'depend on how busy the machine is; its ratio is the capacity the app would have beside the ceiling on an idle core.',
  );
}

runBench(
  () => serve(),
  () => main(),
);

/**
 * Permission-check benchmark: what a protected route costs when the caller's role is flat versus at the bottom
 * of a 16-deep inheritance chain (the permission granted only at the top).
 *
 *   npx tsx bench/permissions.ts [--duration=10] [--warmup=2] [--connections=20] [--runs=1] [--no-pin]
 *
 * - The real app (test/support/app.ts startApp: every module, the real authenticate pipeline) runs in its own child
 *   process on a fresh PGlite database, or on PostgreSQL when DATABASE_URL is set (REDIS_URL is honoured too).
 * - Two organisation users are set up through the API: one whose role holds users:read directly, one whose role is
 *   the 16th of a chain where only the 1st holds it. Both call GET /api/v1/permissions/catalog, which is guarded
 *   by users:read: per request, JWT verification, the session/membership/epoch query, the role resolution (cached per
 *   role, invalidated by the authz epoch) and the permission check.
 * - autocannon runs in another child process (never inside the server), for `duration` seconds after a discarded
 *   warm-up; latencies are taken per response (float ms), req/s over the measured window. With `taskset` and at
 *   least 2 CPUs the server is pinned to CPU 0 and the load generator to CPU 1. Runs are interleaved (flat, deep,
 *   flat, deep, ...) so drift on a shared machine hits both alike.
 * - Prints a markdown table. The claim under test: the deep chain costs the same as the flat role.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);
const ROUTE = '/api/v1/permissions/catalog';
const DEPTH = 16;

interface ServerInfo {
  url: string;
  pid: number;
  database: string;
  store: string;
  tokens: { flat: string; deep: string };
  chainDepth: number;
}

interface LoadConfig {
  url: string;
  token: string;
  connections: number;
  warmupSeconds: number;
  durationSeconds: number;
}

interface LoadResult {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  ok: number;
  non2xx: number;
  errors: number;
}

// ---------------------------------------------------------------------------------------------
// Child: the server

async function serve(): Promise<void> {
  const { prepareTemplate } = await import('../test/support/db.js');
  const { startApp } = await import('../test/support/app.js');
  const { createOrg, createPartner, signedInOrgMember, signedInPartnerMember } = await import(
    '../test/support/fixtures.js'
  );
  const { PARTNER_ADMIN_ROLE_ID } = await import('../src/modules/roles/catalog.js');

  await prepareTemplate();
  // warn: no per-request log lines (the test app keeps every line in memory).
  const t = await startApp({ LOG_LEVEL: 'warn', ACCESS_TOKEN_TTL: '86400' });
  const partner = await createPartner(t);
  const admin = await signedInPartnerMember(t, partner.id, { roleId: PARTNER_ADMIN_ROLE_ID });
  const org = await createOrg(t, partner.id);
  const must = async (what: string, p: Promise<{ status: number; body: any; text: string }>, status = 201) => {
    const r = await p;
    if (r.status !== status) throw new Error(`${what}: ${r.status} ${r.text}`);
    return r.body;
  };
  const readUsers = [{ resource: 'users', action: 'read' }];
  const flat = await must(
    'flat role',
    admin.api.post('/roles', { name: 'Bench flat', permissions: readUsers, orgId: org.id }),
  );
  let parentRoleId: string | null = null;
  for (let i = 1; i <= DEPTH; i++) {
    const role: { id: string } = await must(
      `chain role ${i}`,
      admin.api.post('/roles', {
        name: `Bench chain ${i}`,
        permissions: i === 1 ? readUsers : [],
        parentRoleId,
        orgId: org.id,
      }),
    );
    parentRoleId = role.id;
  }
  const eff = await must(
    'effective permissions',
    admin.api.get(`/roles/${parentRoleId}/effective-permissions`, { query: { orgId: org.id } }),
    200,
  );
  const flatUser = await signedInOrgMember(t, org, { roleId: flat.id });
  const deepUser = await signedInOrgMember(t, org, { roleId: parentRoleId! });
  for (const [name, u] of [
    ['flat', flatUser],
    ['deep', deepUser],
  ] as const)
    await must(`${name} user on ${ROUTE}`, u.api.get(ROUTE), 200);

  const info: ServerInfo = {
    url: t.baseUrl.replace('//localhost:', '//127.0.0.1:'),
    pid: process.pid,
    database: t.deps.database.kind,
    store: t.deps.store.kind,
    tokens: { flat: flatUser.session.accessToken, deep: deepUser.session.accessToken },
    chainDepth: eff.inheritanceChain.length,
  };
  process.stdout.write(`${JSON.stringify(info)}\n`);
  const stop = async () => {
    await t.close().catch(() => {});
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

// ---------------------------------------------------------------------------------------------
// Child: the load generator

function nearestRank(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1]!;
}

async function load(config: LoadConfig): Promise<void> {
  const { default: autocannon } = await import('autocannon');
  const run = (seconds: number, onResponse?: (status: number, ms: number) => void) =>
    new Promise<import('autocannon').Result>((resolve, reject) => {
      const inst = autocannon(
        {
          url: config.url,
          connections: config.connections,
          duration: seconds,
          headers: { authorization: `Bearer ${config.token}` },
        },
        (err, res) => (err ? reject(err) : resolve(res)),
      );
      if (onResponse) inst.on('response', (_c, status, _b, ms) => onResponse(status, ms));
    });
  if (config.warmupSeconds > 0) await run(config.warmupSeconds);
  const latencies: number[] = [];
  let non2xx = 0;
  const started = process.hrtime.bigint();
  const res = await run(config.durationSeconds, (status, ms) => {
    if (status >= 200 && status < 300) latencies.push(ms);
    else non2xx++;
  });
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const sorted = Float64Array.from(latencies).sort();
  const out: LoadResult = {
    reqPerSec: latencies.length / wall,
    p50Ms: nearestRank(sorted, 50),
    p99Ms: nearestRank(sorted, 99),
    ok: latencies.length,
    non2xx,
    errors: res.errors,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

// ---------------------------------------------------------------------------------------------
// Parent

function option(name: string, fallback: number): number {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  const v = arg ? Number(arg.split('=')[1]) : fallback;
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name} must be a number`);
  return v;
}

function canPin(): boolean {
  if (process.argv.includes('--no-pin') || os.cpus().length < 2) return false;
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function spawnSelf(args: string[], cpu: number | null): ChildProcess {
  const argv = [process.execPath, '--import', 'tsx', SELF, ...args];
  if (cpu !== null) argv.unshift('taskset', '-c', String(cpu));
  const [cmd, ...rest] = argv;
  return spawn(cmd!, rest, { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
}

/** The first stdout line of a child, parsed as JSON. */
function firstLine<T>(child: ChildProcess, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once('line', (line) => {
      rl.close();
      try {
        resolve(JSON.parse(line) as T);
      } catch {
        reject(new Error(`${what}: unexpected output ${line}`));
      }
    });
    child.once('exit', (code) => reject(new Error(`${what} exited with ${code}`)));
  });
}

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function main(): Promise<void> {
  const durationSeconds = option('duration', 10);
  const warmupSeconds = option('warmup', 2);
  const connections = option('connections', 20);
  const runs = Math.max(1, Math.floor(option('runs', 1)));
  const pin = canPin();

  const server = spawnSelf(['--serve'], pin ? 0 : null);
  const stopServer = () => server.exitCode === null && server.kill('SIGTERM');
  process.once('SIGINT', () => {
    stopServer();
    process.exit(130);
  });
  try {
    const info = await firstLine<ServerInfo>(server, 'server');
    if (info.chainDepth !== DEPTH) throw new Error(`the chain is ${info.chainDepth} deep, expected ${DEPTH}`);
    const cases = [
      { name: 'flat role (users:read direct)', depth: 1, token: info.tokens.flat },
      { name: `${DEPTH}-deep chain (users:read at the top)`, depth: DEPTH, token: info.tokens.deep },
    ];
    const results = new Map<string, LoadResult[]>(cases.map((c) => [c.name, []]));
    for (let run = 1; run <= runs; run++) {
      for (const c of cases) {
        process.stderr.write(`run ${run}/${runs}: ${c.name} (${warmupSeconds}s warm-up + ${durationSeconds}s)\n`);
        const config: LoadConfig = {
          url: `${info.url}${ROUTE}`,
          token: c.token,
          connections,
          warmupSeconds,
          durationSeconds,
        };
        const child = spawnSelf([`--load=${JSON.stringify(config)}`], pin ? 1 : null);
        results.get(c.name)!.push(await firstLine<LoadResult>(child, 'load generator'));
      }
    }

    const lines = [
      `### Permission check: GET ${ROUTE} (users:read)`,
      '',
      `${info.database}${info.store === 'redis' ? ' + Redis' : ''} · Node ${process.version} · ${os.cpus().length} CPUs · ${connections} connections · ` +
        `${warmupSeconds}s warm-up + ${durationSeconds}s × ${runs} run(s) · ${pin ? 'server on CPU 0, autocannon on CPU 1' : 'unpinned'}`,
      '',
      "| caller's role | chain depth | req/s | p50 ms | p99 ms | 2xx | non-2xx | errors |",
      '|---|---:|---:|---:|---:|---:|---:|---:|',
    ];
    for (const c of cases) {
      const rs = results.get(c.name)!;
      lines.push(
        `| ${c.name} | ${c.depth} | ${fmt(median(rs.map((r) => r.reqPerSec)))} | ${fmt(median(rs.map((r) => r.p50Ms)), 2)} | ${fmt(median(rs.map((r) => r.p99Ms)), 2)} | ` +
          `${rs.reduce((a, r) => a + r.ok, 0)} | ${rs.reduce((a, r) => a + r.non2xx, 0)} | ${rs.reduce((a, r) => a + r.errors, 0)} |`,
      );
    }
    const [flat, deep] = cases.map((c) => median(results.get(c.name)!.map((r) => r.reqPerSec)));
    lines.push(
      '',
      `Deep chain throughput relative to flat: ${fmt((deep! / flat!) * 100, 1)} %${runs > 1 ? ' (medians of the runs)' : ''}.`,
    );
    process.stdout.write(`${lines.join('\n')}\n`);
    const bad = [...results.values()].flat().some((r) => r.non2xx > 0 || r.ok === 0);
    if (bad) {
      process.stderr.write(
        'some requests were not answered 2xx: the measurement is not of the permission check alone\n',
      );
      process.exitCode = 1;
    }
  } finally {
    stopServer();
  }
}

const loadArg = process.argv.find((a) => a.startsWith('--load='));
const entry = process.argv.includes('--serve')
  ? serve()
  : loadArg
    ? load(JSON.parse(loadArg.slice('--load='.length)) as LoadConfig)
    : main();
entry.catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

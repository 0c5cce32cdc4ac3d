/**
 * Permission-check benchmark: what a protected route costs when the caller's role is flat versus at the bottom
 * of a 16-deep inheritance chain (the permission granted only at the top).
 *
 *   npx tsx bench/permissions.ts [--duration=10] [--warmup=2] [--connections=20] [--runs=1] [--no-pin]
 *
 * - The server is the build `npm start` runs (test/dist/launch.ts: the start script's flags, default logging,
 *   settings through the environment only; ACCESS_TOKEN_TTL=86400 so a token outlasts the runs) on a fresh DATA_DIR,
 *   or a fresh PostgreSQL database when DATABASE_URL / BENCH_DATABASE_URL is set (REDIS_URL is honoured too).
 * - Everything is set up over HTTP: the first administrator (setup link, TOTP), an organisation, the roles, and two
 *   organisation users invited by mail who accept with a password: one whose role holds users:read directly, one
 *   whose role is the 16th of a chain where only the 1st holds it. Both call GET /api/v1/permissions/catalog, which is guarded
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
import { ensureBuilt, startFlags } from '../scripts/built-server.js';
import { firstAdmin, strongPassword } from '../test/dist/flows.js';
import { startBuiltServer, type BuiltServer } from '../test/dist/launch.js';
import { linkToken, startMailCatcher, type MailCatcher } from '../test/support/smtp.js';

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

/** Settings the benchmark changes from the defaults, through the environment, printed with the figures. */
const SETTINGS = { ACCESS_TOKEN_TTL: '86400' };

async function startServer(pin: boolean, mail: MailCatcher): Promise<{ server: BuiltServer; info: ServerInfo }> {
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL;
  const redisUrl = process.env.BENCH_REDIS_URL ?? process.env.REDIS_URL;
  const server = await startBuiltServer(
    { ...SETTINGS, SMTP_URL: mail.url },
    { databaseUrl, redisUrl, prefix: pin ? ['taskset', '-c', '0'] : [] },
  );
  try {
    const admin = await firstAdmin(server);
    const must = async (what: string, p: Promise<{ status: number; body: any; text: string }>, status = 201) => {
      const r = await p;
      if (r.status !== status) throw new Error(`${what}: ${r.status} ${r.text}`);
      return r.body;
    };
    const org: { id: string } = await must(
      'organisation',
      admin.api.raw.post('/orgs/organizations', { name: 'Perm Org' }),
    );
    const readUsers = [{ resource: 'users', action: 'read' }];
    const flat = await must(
      'flat role',
      admin.api.raw.post('/roles', { name: 'Bench flat', permissions: readUsers, orgId: org.id }),
    );
    let parentRoleId: string | null = null;
    for (let i = 1; i <= DEPTH; i++) {
      const role: { id: string } = await must(
        `chain role ${i}`,
        admin.api.raw.post('/roles', {
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
      admin.api.raw.get(`/roles/${parentRoleId}/effective-permissions`, { query: { orgId: org.id } }),
      200,
    );
    const member = async (name: string, roleId: string) => {
      const email = `${name}@perm.test`;
      await must('invite', admin.api.raw.post('/users/invite', { email, name, roleId, orgId: org.id }));
      const token = linkToken(await mail.waitFor(email, undefined, 30_000));
      const res = await must(
        'accept-invite',
        server.client().raw.post('/auth/accept-invite', { token, password: strongPassword() }),
        200,
      );
      return res.accessToken as string;
    };
    const tokens = { flat: await member('flat', flat.id), deep: await member('deep', parentRoleId!) };
    for (const [name, token] of Object.entries(tokens))
      await must(`${name} user on ${ROUTE}`, server.client().withToken(token).raw.get(ROUTE), 200);
    const info: ServerInfo = {
      // The server listens on 127.0.0.1; its public address says localhost.
      url: server.baseUrl.replace('//localhost:', '//127.0.0.1:'),
      pid: server.pid(),
      database: databaseUrl ? 'postgres' : 'pglite',
      store: redisUrl ? 'redis' : 'memory',
      tokens,
      chainDepth: eff.inheritanceChain.length,
    };
    return { server, info };
  } catch (err) {
    await server.close();
    throw err;
  }
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

  ensureBuilt();
  const mail = await startMailCatcher();
  const { server, info } = await startServer(pin, mail);
  const stopServer = async () => {
    await server.close();
    await mail.close();
  };
  process.once('SIGINT', () => {
    void stopServer().finally(() => process.exit(130));
  });
  try {
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
    lines.push(
      '',
      `The server is the build (node ${startFlags().join(' ')} dist/main.js, default logging); set through env: ${Object.entries(
        SETTINGS,
      )
        .map(([k, v]) => `${k}=${v}`)
        .join(', ')}.`,
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
    await stopServer();
  }
}

const loadArg = process.argv.find((a) => a.startsWith('--load='));
const entry = loadArg ? load(JSON.parse(loadArg.slice('--load='.length)) as LoadConfig) : main();
entry.catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

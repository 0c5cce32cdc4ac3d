/**
 * Framework benchmark: raw node:http vs Fastify 5 vs Hono 4 (@hono/node-server), each serving
 * a JWT-authenticated JSON route (EdDSA/Ed25519 via jose) and a plain JSON route.
 *
 *   npx tsx bench/framework/run.ts [--runs=2] [--duration=10] [--warmup=3] [--connections=50] [--no-pin]
 *
 * - Each server runs in its own child process, started fresh for each run.
 * - autocannon runs in a separate child process (loadgen.ts), never inside a server process.
 * - On Linux with `taskset`, the server is pinned to CPU 0 and the load generator to CPU 1 so
 *   they do not steal each other's core (turn off with --no-pin).
 * - Runs are interleaved (every configuration once, then all again) so slow drift on the
 *   machine hits every configuration alike instead of one of them.
 * - The machine is shared: every second, the load generator also records how much CPU other
 *   processes used, and results are given both for the whole window and for the "quiet" seconds.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import { HOST, JWT_ALG, JWT_AUDIENCE, JWT_ISSUER, PUBLIC_JWK_ENV, ROUTE_HELLO, ROUTE_PING } from './common.js';
import type { LoadgenConfig, LoadgenResult, QuietThresholds, WindowStats } from './loadgen.js';
import { machineCpu } from './procstat.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = join(HERE, '..', '..');

const SERVERS = [
  { name: 'node:http', file: 'server-node.ts' },
  { name: 'fastify 5', file: 'server-fastify.ts' },
  { name: 'hono 4', file: 'server-hono.ts' },
] as const;
type ServerName = (typeof SERVERS)[number]['name'];

const ROUTES = [
  { name: 'hello (no JWT)', path: ROUTE_HELLO, auth: false },
  { name: 'ping (JWT)', path: ROUTE_PING, auth: true },
] as const;
type RouteName = (typeof ROUTES)[number]['name'];

const TOKEN_SUB = 'user_01HBENCH0000000000000000';

/** Before each measurement, wait (at most QUIET_MAX_WAIT_MS) for the machine to be nearly idle. */
const QUIET_BUSY_PERCENT = 15;
const QUIET_MAX_WAIT_MS = 5_000;
/** When a measured second counts as "quiet" (undisturbed by other processes); see loadgen.ts. */
const QUIET: QuietThresholds = {
  otherOnServerCorePercent: 10,
  otherMachinePercent: 20,
  loadgenRunDelayPercent: 5,
};

interface Options {
  runs: number;
  durationSeconds: number;
  warmupSeconds: number;
  connections: number;
  pin: boolean;
}

interface Measurement extends LoadgenResult {
  server: ServerName;
  route: RouteName;
  run: number;
}

// ---------------------------------------------------------------------------------------------
// Options

function parseOptions(argv: readonly string[]): Options {
  const opts: Options = { runs: 2, durationSeconds: 10, warmupSeconds: 3, connections: 50, pin: true };
  const int = (flag: string, value: string, min: number, max = Number.MAX_SAFE_INTEGER): number => {
    const n = Number(value);
    if (value === '' || !Number.isInteger(n) || n < min || n > max) {
      throw new Error(`${flag} expects an integer in [${min}, ${max}], got "${value}"`);
    }
    return n;
  };
  for (const arg of argv) {
    const [flag = '', value = ''] = arg.split('=', 2);
    switch (flag) {
      case '--runs':
        opts.runs = int(flag, value, 1);
        break;
      case '--duration':
        opts.durationSeconds = int(flag, value, 2);
        break;
      case '--warmup':
        opts.warmupSeconds = int(flag, value, 0);
        break;
      case '--connections':
        opts.connections = int(flag, value, 1);
        break;
      case '--no-pin':
        opts.pin = false;
        break;
      default:
        throw new Error(`unknown argument: ${arg}`);
    }
  }
  return opts;
}

// ---------------------------------------------------------------------------------------------
// Process helpers

function canPin(): boolean {
  if (os.platform() !== 'linux' || os.availableParallelism() < 2) return false;
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const liveChildren = new Set<ChildProcess>();

/**
 * Spawns `node --import tsx <script> ...args`, optionally through `taskset` (which execs node,
 * so the child's pid is node's own pid). The child gets a stdin pipe and, with
 * BENCH_EXIT_WITH_PARENT=1, shuts down when it closes, so nothing outlives this script.
 */
function spawnTsNode(
  script: string,
  args: readonly string[],
  cpu: number | null,
  env: NodeJS.ProcessEnv,
): ChildProcess {
  const argv = [process.execPath, '--import', 'tsx', join(HERE, script), ...args];
  if (cpu !== null) argv.unshift('taskset', '-c', String(cpu));
  const [cmd = process.execPath, ...cmdArgs] = argv;
  const child = spawn(cmd, cmdArgs, {
    cwd: REPO_ROOT,
    env: { ...env, BENCH_EXIT_WITH_PARENT: '1' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  liveChildren.add(child);
  child.once('exit', () => liveChildren.delete(child));
  return child;
}

function killChildrenOnSignal(): void {
  const handler = (signal: NodeJS.Signals): void => {
    for (const child of liveChildren) child.kill('SIGTERM');
    process.stderr.write(`\n${signal}: stopped ${liveChildren.size} child process(es)\n`);
    process.exit(130);
  };
  process.once('SIGINT', handler);
  process.once('SIGTERM', handler);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, HOST, () => {
      const address = srv.address();
      srv.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not determine a free port'));
      });
    });
  });
}

function waitForLine(child: ChildProcess, expected: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    if (child.stdout === null) return reject(new Error('child has no stdout'));
    const rl = createInterface({ input: child.stdout });
    const done = (err?: Error): void => {
      clearTimeout(timer);
      child.off('exit', onExit);
      rl.close();
      child.stdout?.resume(); // keep draining so the child never blocks on a full pipe
      if (err) reject(err);
      else resolve();
    };
    const onLine = (line: string): void => {
      if (line.trim() === expected) done();
    };
    const onExit = (code: number | null): void => done(new Error(`child exited (code ${code}) before "${expected}"`));
    const timer = setTimeout(() => done(new Error(`timed out waiting for "${expected}"`)), timeoutMs);
    rl.on('line', onLine);
    child.once('exit', onExit);
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 5_000).unref());
  if ((await Promise.race([exited, timeout])) === 'timeout') {
    child.kill('SIGKILL');
    await exited;
  }
}

/**
 * Other people's processes share this machine. Waits until a 500 ms window shows less than
 * QUIET_BUSY_PERCENT machine-wide CPU use (our server is idle at this point), or gives up.
 */
async function waitForQuietMachine(): Promise<void> {
  const deadline = Date.now() + QUIET_MAX_WAIT_MS;
  for (;;) {
    const before = machineCpu().busySeconds;
    await sleep(500);
    const busyPercent = ((machineCpu().busySeconds - before) / 0.5) * 100;
    if (!(busyPercent >= QUIET_BUSY_PERCENT) || Date.now() >= deadline) return;
  }
}

// ---------------------------------------------------------------------------------------------
// Keys, tokens and a correctness check before measuring

interface Tokens {
  valid: string;
  badSignature: string;
  wrongAudience: string;
  wrongIssuer: string;
  otherKey: string;
}

function sign(key: CryptoKey, issuer: string, audience: string): Promise<string> {
  return new SignJWT({ scope: 'bench' })
    .setProtectedHeader({ alg: JWT_ALG })
    .setSubject(TOKEN_SUB)
    .setIssuer(issuer)
    .setAudience(audience)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(key);
}

async function makeKeysAndTokens(): Promise<{ publicJwkJson: string; tokens: Tokens }> {
  const { publicKey, privateKey } = await generateKeyPair(JWT_ALG, { crv: 'Ed25519' });
  const other = await generateKeyPair(JWT_ALG, { crv: 'Ed25519' });
  const valid = await sign(privateKey, JWT_ISSUER, JWT_AUDIENCE);
  // Flip one character well inside the signature segment (the last one carries unused bits).
  const i = valid.lastIndexOf('.') + 10;
  const badSignature = `${valid.slice(0, i)}${valid[i] === 'A' ? 'B' : 'A'}${valid.slice(i + 1)}`;
  return {
    publicJwkJson: JSON.stringify(await exportJWK(publicKey)),
    tokens: {
      valid,
      badSignature,
      wrongAudience: await sign(privateKey, JWT_ISSUER, 'someone-else'),
      wrongIssuer: await sign(privateKey, 'https://evil.invalid', JWT_AUDIENCE),
      otherKey: await sign(other.privateKey, JWT_ISSUER, JWT_AUDIENCE),
    },
  };
}

async function expectJson(
  url: string,
  headers: Record<string, string>,
  status: number,
  expected: Record<string, unknown>,
  label: string,
): Promise<void> {
  const res = await fetch(url, { headers });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // leave empty: the comparison below fails
  }
  const ok =
    res.status === status &&
    (res.headers.get('content-type') ?? '').startsWith('application/json') &&
    Object.entries(expected).every(([k, v]) => body[k] === v);
  if (!ok) throw new Error(`sanity check "${label}" failed on ${url}: ${res.status} ${text}`);
}

async function sanityCheck(base: string, tokens: Tokens): Promise<void> {
  const ping = `${base}${ROUTE_PING}`;
  const bearer = (t: string): Record<string, string> => ({ authorization: `Bearer ${t}` });
  await expectJson(`${base}${ROUTE_HELLO}`, {}, 200, { ok: true }, 'hello');
  await expectJson(ping, bearer(tokens.valid), 200, { sub: TOKEN_SUB, ok: true }, 'valid token');
  await expectJson(ping, {}, 401, { ok: false }, 'missing token');
  await expectJson(ping, { authorization: tokens.valid }, 401, { ok: false }, 'no Bearer prefix');
  await expectJson(ping, bearer(tokens.badSignature), 401, { ok: false }, 'bad signature');
  await expectJson(ping, bearer(tokens.wrongAudience), 401, { ok: false }, 'wrong audience');
  await expectJson(ping, bearer(tokens.wrongIssuer), 401, { ok: false }, 'wrong issuer');
  await expectJson(ping, bearer(tokens.otherKey), 401, { ok: false }, 'signed by another key');
}

// ---------------------------------------------------------------------------------------------
// Benchmark

async function runLoadgen(config: LoadgenConfig, cpu: number | null): Promise<LoadgenResult> {
  const child = spawnTsNode('loadgen.ts', [JSON.stringify(config)], cpu, process.env);
  if (child.stdout === null) throw new Error('loadgen has no stdout');
  let result: LoadgenResult | undefined;
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line.startsWith('{')) result = JSON.parse(line) as LoadgenResult;
  });
  // 'close' (not 'exit') so stdout has been fully read.
  const [code] = (await once(child, 'close')) as [number | null];
  if (code !== 0 || result === undefined) throw new Error(`loadgen failed (exit code ${code})`);
  return result;
}

async function benchServer(
  server: (typeof SERVERS)[number],
  run: number,
  opts: Options,
  publicJwkJson: string,
  tokens: Tokens,
): Promise<Measurement[]> {
  const port = await freePort();
  const child = spawnTsNode(server.file, [String(port)], opts.pin ? 0 : null, {
    ...process.env,
    NODE_ENV: 'production',
    [PUBLIC_JWK_ENV]: publicJwkJson,
  });
  const results: Measurement[] = [];
  try {
    await waitForLine(child, `LISTENING ${port}`, 20_000);
    if (child.pid === undefined) throw new Error('server has no pid');
    const base = `http://${HOST}:${port}`;
    await sanityCheck(base, tokens);

    for (const route of ROUTES) {
      process.stderr.write(`  run ${run} · ${server.name.padEnd(9)} · ${route.name.padEnd(14)} ... `);
      await waitForQuietMachine();
      const result = await runLoadgen(
        {
          url: `${base}${route.path}`,
          connections: opts.connections,
          warmupSeconds: opts.warmupSeconds,
          durationSeconds: opts.durationSeconds,
          headers: route.auth ? { authorization: `Bearer ${tokens.valid}` } : {},
          serverPid: child.pid,
          serverCore: opts.pin ? 0 : null,
          quiet: QUIET,
        },
        opts.pin ? 1 : null,
      );
      process.stderr.write(
        `${fmtInt(result.reqPerSecMean)} req/s; quiet seconds ${result.quiet.seconds}/${result.all.seconds}` +
          ` (${fmtInt(result.quiet.reqPerSec)} req/s)\n`,
      );
      results.push({ ...result, server: server.name, route: route.name, run });
    }
  } finally {
    await stopChild(child);
  }
  return results;
}

// ---------------------------------------------------------------------------------------------
// Reporting

const fmtInt = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
const fmtMs = (n: number): string => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');
const fmtPct = (n: number): string => (Number.isFinite(n) ? `${Math.round(n)}%` : 'n/a');
const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

function renderRunsTable(rows: readonly Measurement[]): string {
  const header =
    '| Server | Route | Run | req/s (mean ± sd) | p50 ms | p99 ms | non-2xx / err ' +
    '| server CPU | loadgen CPU | others: server core / machine | loadgen wait ' +
    '| quiet s | req/s (quiet s) | p99 ms (quiet s) | server µs/req (quiet s) |\n' +
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|';
  const lines = rows.map(
    (m) =>
      `| ${m.server} | ${m.route} | ${m.run} | ${fmtInt(m.reqPerSecMean)} ± ${fmtInt(m.reqPerSecStddev)} ` +
      `| ${fmtMs(m.all.latencyP50Ms)} | ${fmtMs(m.all.latencyP99Ms)} | ${m.non2xx} / ${m.errors + m.timeouts} ` +
      `| ${fmtPct(m.all.serverCpuPercent)} | ${fmtPct(m.all.loadgenCpuPercent)} ` +
      `| ${fmtPct(m.all.otherOnServerCorePercent)} / ${fmtPct(m.all.otherCpuPercent)} ` +
      `| ${fmtPct(m.all.loadgenRunDelayPercent)} ` +
      `| ${m.quiet.seconds}/${m.all.seconds} | ${fmtInt(m.quiet.reqPerSec)} | ${fmtMs(m.quiet.latencyP99Ms)} ` +
      `| ${fmtInt(m.quiet.serverCpuMicrosPerReq)} |`,
  );
  return [header, ...lines].join('\n');
}

/**
 * Per route and server: autocannon's req/s averaged over runs, then figures from our own
 * per-second accounting, with the quiet seconds of all runs pooled (weighted by their count).
 */
function renderSummaryTable(rows: readonly Measurement[]): string {
  const header =
    '| Route | Server | req/s, mean of runs | p50 / p99 ms, all s | server µs/req, all s ' +
    '| req/s, quiet s | vs node:http, quiet s | p50 / p99 ms, quiet s | server µs/req, quiet s | quiet s used |\n' +
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|';
  const pooled = (ms: readonly Measurement[], pick: (m: Measurement) => WindowStats, f: (w: WindowStats) => number) => {
    const total = ms.reduce((a, m) => a + pick(m).seconds, 0);
    return ms.reduce((a, m) => a + (pick(m).seconds > 0 ? f(pick(m)) * pick(m).seconds : 0), 0) / total;
  };
  const all = (m: Measurement): WindowStats => m.all;
  const quiet = (m: Measurement): WindowStats => m.quiet;
  const lines: string[] = [];
  for (const route of ROUTES) {
    const of = (name: ServerName): Measurement[] => rows.filter((m) => m.route === route.name && m.server === name);
    const ceiling = pooled(of('node:http'), quiet, (w) => w.reqPerSec);
    for (const server of SERVERS) {
      const ms = of(server.name);
      if (ms.length === 0) continue;
      const quietRps = pooled(ms, quiet, (w) => w.reqPerSec);
      lines.push(
        `| ${route.name} | ${server.name} | ${fmtInt(mean(ms.map((m) => m.reqPerSecMean)))} ` +
          `| ${fmtMs(pooled(ms, all, (w) => w.latencyP50Ms))} / ${fmtMs(pooled(ms, all, (w) => w.latencyP99Ms))} ` +
          `| ${fmtInt(pooled(ms, all, (w) => w.serverCpuMicrosPerReq))} ` +
          `| ${fmtInt(quietRps)} | ${fmtPct((quietRps / ceiling) * 100)} ` +
          `| ${fmtMs(pooled(ms, quiet, (w) => w.latencyP50Ms))} / ${fmtMs(pooled(ms, quiet, (w) => w.latencyP99Ms))} ` +
          `| ${fmtInt(pooled(ms, quiet, (w) => w.serverCpuMicrosPerReq))} ` +
          `| ${ms.reduce((a, m) => a + m.quiet.seconds, 0)}/${ms.reduce((a, m) => a + m.all.seconds, 0)} |`,
      );
    }
  }
  return [header, ...lines].join('\n');
}

function readVersion(pkg: string): string {
  const file = join(REPO_ROOT, 'node_modules', pkg, 'package.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version : '?';
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  killChildrenOnSignal();
  if (opts.pin && !canPin()) {
    process.stderr.write('taskset unavailable or fewer than 2 CPUs: running unpinned\n');
    opts.pin = false;
  }
  const { publicJwkJson, tokens } = await makeKeysAndTokens();
  const cpus = os.cpus();
  const setup =
    `${opts.connections} connections · ${opts.warmupSeconds}s warm-up + ${opts.durationSeconds}s measured · ` +
    `${opts.runs} run(s) · ${opts.pin ? 'server pinned to CPU 0, autocannon to CPU 1 (taskset)' : 'unpinned'}`;
  process.stderr.write(`node ${process.version} · ${cpus.length} CPU(s) (${cpus[0]?.model ?? '?'}) · ${setup}\n`);

  const started = Date.now();
  const measurements: Measurement[] = [];
  for (let run = 1; run <= opts.runs; run++) {
    for (const server of SERVERS) {
      measurements.push(...(await benchServer(server, run, opts, publicJwkJson, tokens)));
    }
  }
  const order = (m: Measurement): number =>
    ROUTES.findIndex((r) => r.name === m.route) * 1000 + SERVERS.findIndex((s) => s.name === m.server) * 10 + m.run;
  measurements.sort((a, b) => order(a) - order(b));

  const versions = ['fastify', 'hono', '@hono/node-server', 'jose', 'autocannon']
    .map((pkg) => `${pkg} ${readVersion(pkg)}`)
    .join(', ');
  process.stdout.write(
    [
      '',
      `Node ${process.version} · ${cpus.length} CPU(s) (${cpus[0]?.model ?? '?'}) · ${versions}`,
      `${setup} · took ${((Date.now() - started) / 1000).toFixed(0)}s`,
      '',
      '### All runs',
      '',
      renderRunsTable(measurements),
      '',
      'req/s (mean ± sd): autocannon’s mean of per-second samples over the whole window; p50/p99: from every ' +
        '2xx latency of the window. CPU figures are % of one core. "others": CPU used by other processes (and ' +
        'kernel network work) on the server’s core / on the whole machine. "loadgen wait": share of time the ' +
        'load generator was runnable but waiting for a CPU. "quiet s": seconds in which others used at most ' +
        `${QUIET.otherOnServerCorePercent}% of the server's core (unpinned: ${QUIET.otherMachinePercent}% of the ` +
        `machine) and loadgen wait was at most ${QUIET.loadgenRunDelayPercent}%; the last three columns use only those.`,
      '',
      '### Summary (per-second figures pooled over runs)',
      '',
      renderSummaryTable(measurements),
      '',
    ].join('\n'),
  );

  const failures = measurements.filter((m) => m.non2xx > 0 || m.errors > 0 || m.timeouts > 0);
  if (failures.length > 0) {
    process.stderr.write(`WARNING: ${failures.length} measurement(s) had non-2xx responses or errors\n`);
    process.exitCode = 1;
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

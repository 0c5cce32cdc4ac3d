/**
 * Login benchmark: how close password sign-in gets to its hardware bound, and what it does to other requests.
 *
 *   npx tsx bench/login.ts [--duration=10] [--connections=8] [--users=20] [--profile=DIR]
 *   (PostgreSQL + Redis: DATABASE_URL=postgres://... REDIS_URL=redis://... npx tsx bench/login.ts)
 *
 * - The bound: every login costs one argon2id verification, so a machine does at most
 *   cores ÷ (time of one hash) logins per second. The hash time is measured here, in this run
 *   (hashPassword from src/modules/identity/passwords.ts: the same worker-thread pool at the same lowered priority as
 *   the server's, median of 10; its CPU time when the machine is busy
 *   and the wall time includes waiting for a core).
 * - The real app (test/support/app.ts startApp: fresh database, migrations, real routes) runs in a child
 *   process, so the load generator (autocannon, in this process) never shares its event loop. The login rate
 *   limit is raised out of the way; ~20 users sign in round-robin with the right password for --duration s, each
 *   presenting the device cookie its warm-up sign-in set (a returning browser; a new one also writes a device row).
 * - Before the load, in the server process: the statements of one login (driver-counted, test/support/statement-count.ts)
 *   and the mean cost of each piece of the sign-in alone (token signing, the session statement, the audit chain write).
 * - GET /api/v1/auth/me p99 is measured at rest and again while the logins run (one sequential probe,
 *   one request every 10 ms): argon2 runs off the event loop, so authenticated reads should stay fast.
 * - The server process's CPU time per login (Linux /proc) gives a figure that does not depend on how busy the
 *   machine is: cores ÷ CPU per login is what the server would do with the machine to itself (PGlite runs
 *   inside the server process and is included; PostgreSQL and Redis are other processes and are not).
 */
import { runBench } from './harness.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon, { type Result } from 'autocannon';
import { argon2Pool, hashPassword } from '../src/modules/identity/passwords.js';

declare module 'autocannon' {
  interface Options {
    requests?: { method: string; path: string; headers?: Record<string, string>; body?: string }[];
  }
}

const PASSWORD = 'correct horse battery staple 42';

interface Ready {
  baseUrl: string;
  emails: string[];
  accessToken: string;
  /** Statements one login of a returning browser sends (driver-counted), and their first lines. */
  statements: string[];
  /** The nice value of each argon2 worker thread of the server (Linux; empty elsewhere). */
  argon2Nice: number[];
  /** Mean ms of each piece of the sign-in transaction, run alone in the server process (sequentially, N times). */
  parts: Record<string, number>;
}

/** The device cookie a sign-in set, so the load signs in as returning browsers do. */
const deviceCookie = (res: Response) =>
  res.headers
    .getSetCookie()
    .find((c) => c.startsWith('service_device='))
    ?.split(';')[0] ?? '';

/** Mean wall ms of `fn` over n sequential runs (after 5 to warm up). */
async function meanMs(n: number, fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 5; i++) await fn();
  const started = performance.now();
  for (let i = 0; i < n; i++) await fn();
  return (performance.now() - started) / n;
}

// ---------------------------------------------------------------------------------------------
// Child: the server.

async function serve(userCount: number): Promise<void> {
  const { prepareTemplate } = await import('../test/support/db.js');
  const { startApp } = await import('../test/support/app.js');
  const { addOrgMember, createOrg, createPartner, createUser, sessionFor } = await import(
    '../test/support/fixtures.js'
  );
  const { ORG_ADMIN_ROLE_ID } = await import('../src/modules/roles/catalog.js');
  await prepareTemplate();
  const t = await startApp({ LOG_LEVEL: 'warn', RATE_LIMIT_LOGIN: '100000000/60', RATE_LIMIT_API: '100000000/60' });
  const partner = await createPartner(t);
  const org = await createOrg(t, partner.id);
  const emails: string[] = [];
  let first: string | null = null;
  for (let i = 0; i < userCount; i++) {
    const user = await createUser(t, { email: `bench-${i}@example.test`, password: PASSWORD });
    await addOrgMember(t, { orgId: org.id, userId: user.id, roleId: ORG_ADMIN_ROLE_ID });
    emails.push(user.email);
    first ??= user.id;
  }
  const session = await sessionFor(t, first!, {
    scope: 'organization',
    orgId: org.id,
    partnerId: partner.id,
    roleId: ORG_ADMIN_ROLE_ID,
  });

  // Statements of one login of a returning browser, counted at the driver (background workers left out).
  const { countStatements, isBackground } = await import('../test/support/statement-count.js');
  const login = (cookie: string) =>
    fetch(`${t.baseUrl}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify({ email: emails[0], password: PASSWORD }),
    });
  const cookie = deviceCookie(await login(''));
  await (await login(cookie)).arrayBuffer();
  const log = countStatements(t.testDb.database);
  await (await login(cookie)).arrayBuffer();
  const statements = log.statements().filter((s) => !isBackground(s));
  log.restore();

  // The pieces of the sign-in, each alone: token signing, the session statement, the audit chain write.
  const { insertSignIn } = await import('../src/modules/identity/repo.js');
  const { sha256, randomToken } = await import('../src/platform/crypto.js');
  const ctx = { scope: 'organization' as const, partnerId: partner.id, orgId: org.id, roleId: ORG_ADMIN_ROLE_ID };
  const d = t.deps;
  const parts: Record<string, number> = {};
  parts['token signing (EdDSA)'] = await meanMs(300, () =>
    d.tokens.sign({ sub: first!, sid: first!, ...ctx, mfa: false, authTime: new Date() }),
  );
  parts['empty transaction (begin, commit)'] = await meanMs(100, () => d.db.transaction(async () => {}));
  const row = (now: Date) => ({
    userId: first!,
    tokenHash: sha256(randomToken()),
    ip: '127.0.0.1',
    userAgent: 'bench',
    context: ctx,
    mfa: false,
    expiresAt: new Date(now.getTime() + 3600_000),
    absoluteExpiresAt: new Date(now.getTime() + 7200_000),
    now,
    method: 'password',
  });
  parts['session statement in a transaction'] = await meanMs(100, () =>
    d.db.transaction((tx) => insertSignIn(d.db, tx, row(new Date()))),
  );
  parts['audit chain write in a transaction'] = await meanMs(100, () =>
    d.db.transaction((tx) =>
      d.audit.record(
        tx,
        {
          action: 'user.login',
          actor: { userId: first!, email: emails[0]! },
          partnerId: partner.id,
          orgId: org.id,
          resourceType: 'session',
          resourceId: first!,
          details: { method: 'password', mfa: false },
        },
        { ip: '127.0.0.1', userAgent: 'bench' },
      ),
    ),
  );
  const ready: Ready = {
    baseUrl: t.baseUrl,
    emails,
    accessToken: session.accessToken,
    statements,
    parts,
    argon2Nice: argon2Pool.threadIds().flatMap((tid) => {
      try {
        return [os.getPriority(tid)];
      } catch {
        return [];
      }
    }),
  };
  process.stdout.write(`READY ${JSON.stringify(ready)}\n`);
  const stop = async () => {
    await t.close().catch(() => {});
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

// ---------------------------------------------------------------------------------------------
// Parent: measurement.

const arg = (name: string, dflt: number) => {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? Number(hit.split('=')[1]) : dflt;
};

const percentile = (xs: number[], p: number) => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
};
const median = (xs: number[]) => percentile(xs, 50);

/** CPU seconds (user + system) a process has used so far; NaN where /proc is missing. */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ is 100 on Linux
  } catch {
    return Number.NaN;
  }
}

async function startServer(userCount: number): Promise<{ child: ChildProcess; ready: Ready }> {
  // --profile=DIR: the server writes a V8 CPU profile there on exit (summarise with bench/cpu-profile.ts).
  const profileDir = process.argv.find((a) => a.startsWith('--profile='))?.slice('--profile='.length);
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const child = spawn(
    process.execPath,
    [...profile, '--import', 'tsx', fileURLToPath(import.meta.url), '--serve', `--users=${userCount}`],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: process.env,
    },
  );
  const lines = createInterface({ input: child.stdout! });
  const ready = await new Promise<Ready>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('server did not start within 60 s')), 60_000);
    child.once('exit', (code) => reject(new Error(`server exited early (${code})`)));
    lines.on('line', (line) => {
      if (!line.startsWith('READY ')) return;
      clearTimeout(timer);
      resolve(JSON.parse(line.slice(6)) as Ready);
    });
  });
  return { child, ready };
}

/** Sequential GET /auth/me, one every `intervalMs`, until `until()` says stop; latencies in ms. */
async function probeMe(
  ready: Ready,
  until: () => boolean,
  intervalMs: number,
): Promise<{ latencies: number[]; failures: number }> {
  const latencies: number[] = [];
  let failures = 0;
  while (!until()) {
    const started = performance.now();
    const res = await fetch(`${ready.baseUrl}/api/v1/auth/me`, {
      headers: { authorization: `Bearer ${ready.accessToken}` },
    });
    await res.arrayBuffer();
    const ms = performance.now() - started;
    if (res.status === 200) latencies.push(ms);
    else failures++;
    const wait = intervalMs - ms;
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  return { latencies, failures };
}

async function measure(): Promise<void> {
  const durationSeconds = arg('duration', 10);
  const connections = arg('connections', 8);
  const userCount = arg('users', 20);
  const cores = os.availableParallelism();
  const loadBefore = os.loadavg()[0]!;

  // 1. One argon2id hash, on this machine, now.
  for (let i = 0; i < 2; i++) await hashPassword(PASSWORD);
  const hashMs: number[] = [];
  const hashCpuMs: number[] = [];
  for (let i = 0; i < 10; i++) {
    const started = performance.now();
    const cpu0 = process.cpuUsage();
    await hashPassword(PASSWORD);
    const cpu = process.cpuUsage(cpu0);
    hashMs.push(performance.now() - started);
    hashCpuMs.push((cpu.user + cpu.system) / 1000);
  }
  // On a busy machine the wall time includes waiting for a core; the CPU time is what one hash costs.
  const hashWallMs = median(hashMs);
  const hashMedianMs = Math.min(hashWallMs, median(hashCpuMs));
  const bound = cores / (hashMedianMs / 1000);

  const { child, ready } = await startServer(userCount);
  try {
    // 2. GET /auth/me at rest (after a warm-up).
    let n = 0;
    await probeMe(ready, () => n++ >= 30, 0);
    let m = 0;
    const rest = await probeMe(ready, () => m++ >= 300, 10);

    // 3. Logins for the duration, with the /auth/me probe running alongside.
    // Warm-up: one login per user, whose device cookie the load then presents (a returning browser, as most sign-ins are).
    const requests: { method: string; path: string; headers: Record<string, string>; body: string }[] = [];
    for (const email of ready.emails) {
      const body = JSON.stringify({ email, password: PASSWORD });
      const res = await fetch(`${ready.baseUrl}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      await res.arrayBuffer();
      requests.push({
        method: 'POST',
        path: '/api/v1/auth/login',
        headers: { 'content-type': 'application/json', cookie: deviceCookie(res) },
        body,
      });
    }
    const loginLatencies: number[] = [];
    let loadDone = false;
    const load = new Promise<Result>((resolve, reject) => {
      const instance = autocannon(
        { url: ready.baseUrl, connections, duration: durationSeconds, requests },
        (err, result) => (err ? reject(err) : resolve(result)),
      );
      instance.on('response', (_c, status, _b, ms) => {
        if (status === 200) loginLatencies.push(ms);
      });
    });
    const loaded = probeMe(ready, () => loadDone, 10);
    const cpuBefore = cpuSeconds(child.pid!);
    const result = await load;
    const serverCpu = cpuSeconds(child.pid!) - cpuBefore;
    loadDone = true;
    const underLoad = await loaded;

    const loginsPerSecond = result['2xx'] / durationSeconds;
    // The probe's requests cost server CPU too; they are few and cheap beside argon2, and left in.
    const cpuMsPerLogin = (serverCpu * 1000) / result['2xx'];
    const fmt = (v: number, d = 1) => (Number.isFinite(v) ? v.toFixed(d) : 'n/a');
    const db = process.env.DATABASE_URL ? `PostgreSQL${process.env.REDIS_URL ? ' + Redis' : ''}` : 'PGlite';
    console.log(
      `\n## Login benchmark (${db}, ${cores} cores, Node ${process.versions.node}, ${connections} connections, ${durationSeconds} s)\n`,
    );
    console.log('| Measure | Value |');
    console.log('|---|---|');
    console.log(`| argon2id hash (median of 10): CPU / wall | ${fmt(median(hashCpuMs))} / ${fmt(hashWallMs)} ms |`);
    console.log(`| Bound: cores ÷ hash time | ${fmt(bound, 0)} logins/s |`);
    console.log(
      `| Measured logins (200) | ${fmt(loginsPerSecond)} logins/s (${fmt((loginsPerSecond / bound) * 100, 0)} % of bound) |`,
    );
    console.log(
      `| Server CPU per login | ${fmt(cpuMsPerLogin)} ms (of which one argon2id verification ≈ ${fmt(hashMedianMs)} ms) |`,
    );
    console.log(
      `| Capacity at that cost: cores ÷ CPU per login | ${fmt(cores / (cpuMsPerLogin / 1000), 0)} logins/s (${fmt((cores / (cpuMsPerLogin / 1000) / bound) * 100, 0)} % of bound) |`,
    );
    console.log(
      `| Login latency p50 / p99 | ${fmt(median(loginLatencies))} / ${fmt(percentile(loginLatencies, 99))} ms |`,
    );
    console.log(`| Login non-200 / errors / timeouts | ${result.non2xx} / ${result.errors} / ${result.timeouts} |`);
    console.log(
      `| GET /auth/me p99 at rest | ${fmt(percentile(rest.latencies, 99), 2)} ms (p50 ${fmt(median(rest.latencies), 2)}, n=${rest.latencies.length}) |`,
    );
    console.log(
      `| GET /auth/me p99 during logins | ${fmt(percentile(underLoad.latencies, 99), 2)} ms (p50 ${fmt(median(underLoad.latencies), 2)}, n=${underLoad.latencies.length}) |`,
    );
    console.log(`| argon2 worker threads in the server: nice | ${ready.argon2Nice.join(', ') || 'n/a'} |`);
    console.log(
      `| Statements per login (returning browser, driver-counted) | ${ready.statements.length} (${ready.statements.filter((x) => /^gh_|^execute gh_/.test(x)).length} named prepared) |`,
    );
    for (const [name, value] of Object.entries(ready.parts))
      console.log(`| Alone, mean: ${name} | ${fmt(value, 2)} ms |`);
    console.log(
      `| Machine load average (1 min) before / after | ${fmt(loadBefore, 2)} / ${fmt(os.loadavg()[0]!, 2)} |`,
    );
    const share = loginsPerSecond / bound;
    const meRest = percentile(rest.latencies, 99);
    const meLoaded = percentile(underLoad.latencies, 99);
    const stretch = meLoaded / meRest;
    console.log(`\nStatements of one login:\n${ready.statements.map((x) => `  ${x.slice(0, 110)}`).join('\n')}`);
    console.log(
      `\nP2 login: bound ${fmt(bound, 0)}/s, measured ${fmt(loginsPerSecond)}/s, ratio ${fmt(share * 100, 0)} % (goal ≥ 90 %): ${share >= 0.9 ? 'met' : 'NOT met'}`,
    );
    console.log(
      `P2 /auth/me p99: idle ${fmt(meRest, 2)} ms, during the storm ${fmt(meLoaded, 2)} ms, ratio ${fmt(stretch, 2)} (goal ≤ 2): ${stretch <= 2 ? 'met' : 'NOT met'}`,
    );
    console.log(`P2 statements per login: ${ready.statements.length}`);
    if (loadBefore > cores)
      console.log(
        `\nThe machine was busy (load ${fmt(loadBefore, 2)} on ${cores} cores) before the run: treat the figures as a lower bound.`,
      );
    if (rest.failures + underLoad.failures > 0)
      console.log(`\n/auth/me failures: ${rest.failures} at rest, ${underLoad.failures} during logins`);
  } finally {
    child.kill('SIGTERM');
    await Promise.race([once(child, 'exit'), new Promise((r) => setTimeout(r, 10_000))]);
  }
}

runBench(
  () => serve(arg('users', 20)),
  () => measure(),
);

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
 * - The server is the build `npm start` runs (dist/, rebuilt first when src/ is newer: node with the start script's
 *   flags, default logging, settings through the environment only, a fresh DATA_DIR or, with DATABASE_URL /
 *   BENCH_DATABASE_URL, a fresh PostgreSQL database; test/dist/launch.ts), its own process, so the load generator
 *   (autocannon, in this process) never shares its event loop. The login and API rate limits are raised through their
 *   env vars, as the output says. Fixtures over HTTP only: the first administrator through the printed setup link
 *   (TOTP enrolled, test/dist/flows.ts), then ~20 technicians invited by mail (a real SMTP capture) who accept with
 *   a password; they sign in round-robin with it for --duration s, each presenting the device cookie its warm-up
 *   sign-in set (a returning browser; a new one also writes a device row).
 * - GET /api/v1/auth/me p99 is measured at rest and again while the logins run (one sequential probe,
 *   one request every 10 ms): argon2 runs off the event loop, so authenticated reads should stay fast.
 * - The server process's CPU time per login (Linux /proc) gives a figure that does not depend on how busy the
 *   machine is: cores ÷ CPU per login is what the server would do with the machine to itself (PGlite runs
 *   inside the server process and is included; PostgreSQL and Redis are other processes and are not).
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { readdirSync, readFileSync } from 'node:fs';
import autocannon, { type Result } from 'autocannon';
import { ensureBuilt, startFlags } from '../scripts/built-server.js';
import { firstAdmin, PARTNER_TECHNICIAN_ROLE_ID, strongPassword } from '../test/dist/flows.js';
import { startBuiltServer, type BuiltServer } from '../test/dist/launch.js';
import { linkToken, startMailCatcher, type MailCatcher } from '../test/support/smtp.js';
// The bound's hash, in this process: the service's own hashing (its worker pool and priority), not the server's.
import { hashPassword } from '../src/modules/identity/passwords.js';

declare module 'autocannon' {
  interface Options {
    requests?: { method: string; path: string; headers?: Record<string, string>; body?: string }[];
  }
}

const PASSWORD = strongPassword();
/** Settings the benchmark changes from the defaults, through the environment, printed with the figures. */
const RAISED_LIMITS = {
  RATE_LIMIT_LOGIN: '100000000/60',
  RATE_LIMIT_LOGIN_ACCOUNT: '100000000/60',
  RATE_LIMIT_API: '100000000/60',
};

interface Ready {
  baseUrl: string;
  emails: string[];
  accessToken: string;
}

/** The device cookie a sign-in set, so the load signs in as returning browsers do. */
const deviceCookie = (res: Response) =>
  res.headers
    .getSetCookie()
    .find((c) => c.startsWith('service_device='))
    ?.split(';')[0] ?? '';

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

/** Nice values of the server's threads that run at a lowered priority (the argon2 workers); Linux /proc. */
function loweredThreads(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const nice = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
      return nice > 0 ? [nice] : [];
    });
  } catch {
    return [];
  }
}

/** The built server with the first administrator and `userCount` technicians who signed up through invitations. */
async function startServer(userCount: number, mail: MailCatcher): Promise<{ server: BuiltServer; ready: Ready }> {
  // --profile=DIR: the server writes a V8 CPU profile there on exit (summarise with bench/cpu-profile.ts).
  const profileDir = process.argv.find((a) => a.startsWith('--profile='))?.slice('--profile='.length);
  const server = await startBuiltServer(
    { ...RAISED_LIMITS, SMTP_URL: mail.url },
    {
      databaseUrl: process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL,
      redisUrl: process.env.BENCH_REDIS_URL ?? process.env.REDIS_URL,
      nodeFlags: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
    },
  );
  try {
    const admin = await firstAdmin(server);
    const emails: string[] = [];
    for (let i = 0; i < userCount; i++) {
      const email = `bench-${i}@example.test`;
      const inv = await admin.api.raw.post('/users/invite', {
        email,
        name: `Bench ${i}`,
        roleId: PARTNER_TECHNICIAN_ROLE_ID,
        orgAccess: 'all',
      });
      if (inv.status !== 201) throw new Error(`invite answered ${inv.status}: ${inv.text}`);
      const token = linkToken(await mail.waitFor(email, undefined, 30_000));
      const accepted = await server.client().raw.post('/auth/accept-invite', { token, password: PASSWORD });
      if (accepted.status >= 300) throw new Error(`accept-invite answered ${accepted.status}: ${accepted.text}`);
      emails.push(email);
    }
    // The server listens on 127.0.0.1; its public address says localhost.
    const baseUrl = server.baseUrl.replace('localhost', '127.0.0.1');
    return { server, ready: { baseUrl, emails, accessToken: admin.api.token! } };
  } catch (err) {
    await server.close();
    throw err;
  }
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

  ensureBuilt();
  const mail = await startMailCatcher();
  const { server, ready } = await startServer(userCount, mail);
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
    const cpuBefore = cpuSeconds(server.pid());
    const result = await load;
    const serverCpu = cpuSeconds(server.pid()) - cpuBefore;
    const argon2Nice = loweredThreads(server.pid());
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
    console.log(`| Server threads at a lowered priority (argon2 workers): nice | ${argon2Nice.join(', ') || 'n/a'} |`);
    console.log(
      `| Machine load average (1 min) before / after | ${fmt(loadBefore, 2)} / ${fmt(os.loadavg()[0]!, 2)} |`,
    );
    const share = loginsPerSecond / bound;
    const meRest = percentile(rest.latencies, 99);
    const meLoaded = percentile(underLoad.latencies, 99);
    const stretch = meLoaded / meRest;
    console.log(
      `\nLogin: bound ${fmt(bound, 0)}/s, measured ${fmt(loginsPerSecond)}/s, ratio ${fmt(share * 100, 0)} % (goal ≥ 90 %): ${share >= 0.9 ? 'met' : 'NOT met'}`,
    );
    console.log(
      `/auth/me p99: idle ${fmt(meRest, 2)} ms, during the storm ${fmt(meLoaded, 2)} ms, ratio ${fmt(stretch, 2)} (goal ≤ 2): ${stretch <= 2 ? 'met' : 'NOT met'}`,
    );
    console.log(
      `\nThe server is the build (node ${startFlags().join(' ')} dist/main.js, default logging); raised through env: ${Object.entries(
        RAISED_LIMITS,
      )
        .map(([k, v]) => `${k}=${v}`)
        .join(', ')}.`,
    );
    if (loadBefore > cores)
      console.log(
        `\nThe machine was busy (load ${fmt(loadBefore, 2)} on ${cores} cores) before the run: treat the figures as a lower bound.`,
      );
    if (rest.failures + underLoad.failures > 0)
      console.log(`\n/auth/me failures: ${rest.failures} at rest, ${underLoad.failures} during logins`);
  } finally {
    await server.close();
    await mail.close();
  }
}

measure().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

/**
 * Audit export benchmark: GET /audit-logs/export streams with flat memory, however many records it sends.
 *
 *   npx tsx bench/audit-export.ts [--rows=100000] [--small=10000]
 *   (PostgreSQL: DATABASE_URL=postgres://... npx tsx bench/audit-export.ts)
 *
 * - This process makes a fresh migrated database (the test template), appends --rows records to one partner's hash
 *   chain in multi-row INSERTs hashed with src/modules/audit/chain.ts (every --rows/--small-th names one organisation,
 *   so an orgId filter selects --small of them), mints a session, and lets go of the database. GET /audit-logs/verify
 *   at the end proves the chain (and times the walk).
 * - The real app then runs in a child process on that database, sampling its own RSS and heap every 10 ms and
 *   sending them over IPC. The parent downloads exports (the small one, the large one in JSON Lines and in CSV, and
 *   the large one read by a slow client) and reports, for each, rows/s, the server's peak RSS over its idle baseline,
 *   and its live heap (probed after a forced full GC every 2 MB received, so garbage not yet collected does not count).
 *   Memory that grew with the rows would show the large export's growth ~rows/small times the small one's.
 */
import { runBench } from './harness.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

interface MemSample {
  t: number;
  rss: number;
  heap: number;
}
type FromChild = { type: 'ready'; baseUrl: string } | ({ type: 'mem' | 'live' } & MemSample);

const arg = (name: string, dflt: number) => {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? Number(hit.split('=')[1]) : dflt;
};
const MB = 1024 * 1024;
const fmt = (v: number, d = 1) => (Number.isFinite(v) ? v.toFixed(d) : 'n/a');

/** The environment both processes configure the app from (same keys: the parent's session verifies in the child). */
function appEnv(db: { url?: string; dataDir?: string }): Record<string, string> {
  return {
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    PORT: '0',
    PUBLIC_URL: 'http://localhost:3999',
    APP_URL: 'http://localhost:3999',
    LOG_LEVEL: 'warn',
    ENCRYPTION_KEY: process.env.BENCH_ENCRYPTION_KEY ?? randomBytes(32).toString('base64'),
    RATE_LIMIT_API: '100000000/60',
    ...(db.url ? { DATABASE_URL: db.url } : { DATA_DIR: db.dataDir! }),
  };
}

// ---------------------------------------------------------------------------------------------
// Child: the server, reporting its memory.

async function serve(): Promise<void> {
  const { loadConfig } = await import('../src/config.js');
  const { openDatabase } = await import('../src/db/connect.js');
  const { buildDeps } = await import('../src/deps.js');
  const { createApp } = await import('../src/app.js');
  const { createLogger } = await import('../src/platform/logger.js');
  const config = loadConfig(process.env);
  const logger = createLogger(config.logLevel);
  const database = await openDatabase(config);
  const deps = await buildDeps(config, database, logger);
  const app = await createApp(deps);
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const send = (m: FromChild) => {
    if (process.connected) process.send?.(m, undefined, undefined, () => {}); // the parent may be gone: never crash on it
  };
  const timer = setInterval(
    () =>
      send({ type: 'mem', t: performance.now(), rss: process.memoryUsage.rss(), heap: process.memoryUsage().heapUsed }),
    10,
  );
  // 'live': a full GC, then the memory still in use: what the export actually holds, not garbage awaiting collection.
  process.on('message', (m) => {
    if (m !== 'live') return;
    (globalThis as { gc?: () => void }).gc?.();
    send({ type: 'live', t: performance.now(), rss: process.memoryUsage.rss(), heap: process.memoryUsage().heapUsed });
  });
  send({ type: 'ready', baseUrl: address });
  const stop = async () => {
    clearInterval(timer);
    await app.close().catch(() => {});
    await deps.store.close().catch(() => {});
    await database.close().catch(() => {});
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('disconnect', () => void stop());
}

// ---------------------------------------------------------------------------------------------
// Parent: data, then measurement.

interface Prepared {
  env: Record<string, string>;
  orgId: string;
  token: string;
  seedSeconds: number;
  drop: () => Promise<void>;
}

async function prepare(rows: number, small: number): Promise<Prepared> {
  const { prepareTemplate, freshDatabase } = await import('../test/support/db.js');
  const { appendRecords } = await import('../test/audit/seed.js');
  const { loadConfig } = await import('../src/config.js');
  const { buildDeps } = await import('../src/deps.js');
  const { createLogger } = await import('../src/platform/logger.js');
  const { createSession } = await import('../src/modules/identity/index.js');
  const { organizations, partnerUsers, partners, users } = await import('../src/db/schema/index.js');
  const { PARTNER_ADMIN_ROLE_ID } = await import('../src/modules/roles/catalog.js');

  await prepareTemplate();
  const testDb = await freshDatabase();
  const env = appEnv(testDb);
  const deps = await buildDeps(loadConfig(env), testDb.database, createLogger('warn'));
  const db = testDb.database.db;
  const [partner] = await db
    .insert(partners)
    .values({ name: 'Bench Partner', slug: `bench-${randomBytes(3).toString('hex')}` })
    .returning();
  const [org] = await db
    .insert(organizations)
    .values({ partnerId: partner!.id, name: 'Bench Org', slug: 'bench-org' })
    .returning();
  const [user] = await db
    .insert(users)
    .values({
      email: 'auditor@bench.test',
      name: 'Bench Auditor',
      status: 'active',
      mfaEnabled: true,
      mfaMethod: 'totp',
    })
    .returning();
  await db
    .insert(partnerUsers)
    .values({ partnerId: partner!.id, userId: user!.id, roleId: PARTNER_ADMIN_ROLE_ID, orgAccess: 'all', orgIds: [] });
  const session = await createSession(deps, db, {
    userId: user!.id,
    context: { scope: 'partner', partnerId: partner!.id, orgId: null, roleId: PARTNER_ADMIN_ROLE_ID },
    mfa: true,
    ip: '127.0.0.1',
    userAgent: 'bench',
  });

  const every = Math.max(1, Math.round(rows / small));
  const t0 = Date.now() - rows * 1000;
  const seedStarted = performance.now();
  await appendRecords(db, partner!.id, rows, (i) => ({
    action: ['user.login', 'role.update', 'user.invite', 'auth.login.failed'][i % 4]!,
    result: i % 4 === 3 ? 'failure' : 'success',
    actorUserId: user!.id,
    actorEmail: user!.email,
    orgId: i % every === 0 ? org!.id : null,
    resourceType: 'user',
    resourceId: user!.id,
    ip: '203.0.113.10',
    userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
    at: new Date(t0 + i * 1000),
    details: { i, method: 'password', changed: ['name', 'description'], note: 'a record of ordinary size' },
  }));
  const seedSeconds = (performance.now() - seedStarted) / 1000;

  await deps.store.close();
  // Let go of the database (PGlite: its directory and lock) so the server process can open it.
  await testDb.database.close();
  return {
    env,
    orgId: org!.id,
    token: session.accessToken,
    seedSeconds,
    drop: async () => {
      if (testDb.dataDir) rmSync(testDb.dataDir, { recursive: true, force: true });
      else await testDb.drop();
    },
  };
}

class Server {
  samples: MemSample[] = [];
  live: MemSample[] = [];
  constructor(
    readonly child: ChildProcess,
    readonly baseUrl: string,
  ) {
    // Stamped on arrival: the two processes' performance.now() clocks have different origins.
    child.on('message', (m: FromChild) => {
      if (m.type === 'mem') this.samples.push({ t: performance.now(), rss: m.rss, heap: m.heap });
      if (m.type === 'live') this.live.push({ t: performance.now(), rss: m.rss, heap: m.heap });
    });
  }

  static async start(env: Record<string, string>): Promise<Server> {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--expose-gc', fileURLToPath(import.meta.url), '--serve'],
      {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        env: { ...process.env, ...env },
      },
    );
    const baseUrl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('server did not start within 120 s')), 120_000);
      child.once('exit', (code) => reject(new Error(`server exited early (${code})`)));
      child.on('message', (m: FromChild) => {
        if (m.type !== 'ready') return;
        clearTimeout(timer);
        resolve(m.baseUrl);
      });
    });
    return new Server(child, baseUrl);
  }

  /** The server's live memory now (after a full GC). */
  async liveNow(): Promise<MemSample> {
    const n = this.live.length;
    this.child.send('live');
    while (this.live.length === n) await new Promise((r) => setTimeout(r, 5));
    return this.live[this.live.length - 1]!;
  }

  async stop() {
    this.child.kill('SIGTERM');
    await Promise.race([once(this.child, 'exit'), new Promise((r) => setTimeout(r, 10_000))]);
  }
}

/** A full GC in the server per 2 MB received (28 in a 100,000-row export): a snapshot of what the export holds. */
const PROBE_EVERY_BYTES = 2 * MB;

interface Run {
  label: string;
  rows: number;
  bytes: number;
  seconds: number;
  baseline: MemSample;
  /** Highest RSS and heap sampled every 10 ms (garbage included). */
  peakRss: number;
  peakHeap: number;
  /** Highest heap still in use after a full GC, probed every PROBE_EVERY_BYTES of the download. */
  peakLiveHeap: number;
}

/** Downloads one export, counting lines; `bytesPerSecond` throttles the reader (a slow client); `maxBytes` stops early. */
async function exportRun(
  server: Server,
  token: string,
  label: string,
  query: Record<string, string>,
  opts: { bytesPerSecond?: number; maxBytes?: number } = {},
): Promise<Run> {
  await server.liveNow();
  await new Promise((r) => setTimeout(r, 200));
  const baseline = await server.liveNow();
  const url = new URL('/api/v1/audit-logs/export', server.baseUrl);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  const ctrl = new AbortController();
  const started = performance.now();
  try {
    // A fresh connection per export: a kept-alive one may be closed by the server just as it is reused.
    const res = await fetch(url, {
      headers: { authorization: `Bearer ${token}`, connection: 'close' },
      signal: ctrl.signal,
    });
    if (res.status !== 200) throw new Error(`${label}: ${res.status} ${await res.text()}`);
    const reader = res.body!.getReader();
    let bytes = 0;
    let newlines = 0;
    let nextProbe = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.length;
      if (bytes >= nextProbe) {
        server.child.send('live');
        nextProbe += PROBE_EVERY_BYTES;
      }
      for (let i = 0; i < value.length; i++) if (value[i] === 10) newlines++;
      if (opts.bytesPerSecond) {
        const due = (bytes / opts.bytesPerSecond) * 1000 - (performance.now() - started);
        if (due > 0) await new Promise((r) => setTimeout(r, due));
      }
      if (opts.maxBytes && bytes >= opts.maxBytes) {
        ctrl.abort();
        await reader.cancel().catch(() => {});
        break;
      }
    }
    const seconds = (performance.now() - started) / 1000;
    const rows = query.format === 'csv' ? newlines - 1 : newlines;
    await new Promise((r) => setTimeout(r, 300));
    const during = server.samples.filter((s) => s.t >= started);
    const live = server.live.filter((s) => s.t >= started);
    return {
      label,
      rows,
      bytes,
      seconds,
      baseline,
      peakRss: Math.max(...during.map((s) => s.rss)),
      peakHeap: Math.max(...during.map((s) => s.heap)),
      peakLiveHeap: Math.max(...live.map((s) => s.heap)),
    };
  } catch (err) {
    ctrl.abort();
    throw err;
  }
}

async function measure(): Promise<void> {
  const rows = arg('rows', 100_000);
  const small = arg('small', 10_000);
  const started = performance.now();
  console.log(`preparing ${rows} audit records ...`);
  const prepared = await prepare(rows, small);
  const server = await Server.start(prepared.env);
  const runs: Run[] = [];
  try {
    await exportRun(server, prepared.token, 'warm-up', { format: 'jsonl', orgId: prepared.orgId });
    runs.push(
      await exportRun(server, prepared.token, `JSON Lines, ${small} rows (orgId filter)`, {
        format: 'jsonl',
        orgId: prepared.orgId,
      }),
    );
    runs.push(await exportRun(server, prepared.token, `JSON Lines, all ${rows} rows`, { format: 'jsonl' }));
    runs.push(await exportRun(server, prepared.token, `CSV, all ${rows} rows`, { format: 'csv' }));
    runs.push(
      await exportRun(
        server,
        prepared.token,
        'JSON Lines, slow client (2 MB/s, first 8 MB)',
        { format: 'jsonl' },
        { bytesPerSecond: 2 * MB, maxBytes: 8 * MB },
      ),
    );
    const verifyStarted = performance.now();
    const verify = await fetch(new URL('/api/v1/audit-logs/verify', server.baseUrl), {
      headers: { authorization: `Bearer ${prepared.token}` },
    });
    const verified = (await verify.json()) as { ok: boolean; checked: number };
    const verifySeconds = (performance.now() - verifyStarted) / 1000;
    // The seeded rows plus one audit.export per download: a chain that does not verify means the seeding is wrong.
    if (!verified.ok || verified.checked !== rows + 5)
      throw new Error(`the chain does not verify: ${JSON.stringify(verified)}`);

    const db = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite';
    console.log(`\n## Audit export (${db}, ${os.availableParallelism()} cores, Node ${process.versions.node})\n`);
    console.log(
      `Seeded ${rows} records into one partner chain in ${fmt(prepared.seedSeconds)} s (hashed with chain.ts, multi-row INSERTs).`,
    );
    console.log(
      `GET /audit-logs/verify afterwards: ok=${verified.ok}, ${verified.checked} records in ${fmt(verifySeconds)} s (${fmt(verified.checked / verifySeconds, 0)} records/s).\n`,
    );
    console.log(
      '| Export | Rows | MB | Seconds | Rows/s | RSS before → peak | Heap peak (with garbage) | Live heap before → peak (after full GC) |',
    );
    console.log('|---|---|---|---|---|---|---|---|');
    const mb = (v: number) => `${fmt(v / MB)} MB`;
    for (const r of runs) {
      console.log(
        `| ${r.label} | ${r.rows} | ${fmt(r.bytes / MB)} | ${fmt(r.seconds, 2)} | ${fmt(r.rows / r.seconds, 0)} | ${mb(r.baseline.rss)} → ${mb(r.peakRss)} | ${mb(r.peakHeap)} | ${mb(r.baseline.heap)} → ${mb(r.peakLiveHeap)} (+${mb(r.peakLiveHeap - r.baseline.heap)}) |`,
      );
    }
    const [smallRun, bigRun] = runs;
    const growth = (r: Run) => Math.max(0, r.peakLiveHeap - r.baseline.heap);
    const flat = growth(bigRun!) <= growth(smallRun!) + 8 * MB && growth(bigRun!) < bigRun!.bytes / 8;
    console.log(
      `\n${fmt(bigRun!.rows / smallRun!.rows, 0)}x the rows (${fmt(bigRun!.bytes / MB)} MB sent): live heap grew ${mb(growth(bigRun!))} against ${mb(growth(smallRun!))} for the small export, ` +
        `peak RSS ${mb(bigRun!.peakRss - bigRun!.baseline.rss)} against ${mb(smallRun!.peakRss - smallRun!.baseline.rss)} over the idle server (${mb(bigRun!.baseline.rss)}${process.env.DATABASE_URL ? '' : ", mostly PGlite's WebAssembly memory"}). ` +
        (flat ? 'Flat: the memory an export holds does not follow its row count.' : 'NOT flat: look for buffering.'),
    );
    if (!flat) process.exitCode = 1;
    console.log(`Total bench time ${fmt((performance.now() - started) / 1000)} s.`);
  } finally {
    await server.stop();
    await prepared.drop();
  }
}

runBench(
  () => serve(),
  () => measure(),
);

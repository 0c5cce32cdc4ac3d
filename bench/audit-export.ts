/**
 * Audit export benchmark: GET /audit-logs/export streams with flat memory, however many records it sends.
 *
 *   npx tsx bench/audit-export.ts [--rows=100000] [--small=10000] [--db=pglite,postgres]
 *
 * - The server is the build `npm start` runs (test/dist/launch.ts: the start script's flags, default logging,
 *   settings through the environment only, a fresh DATA_DIR or, with DATABASE_URL / BENCH_DATABASE_URL, a fresh
 *   PostgreSQL database), its own process. The API rate limit is raised through its env var. The partner, its
 *   administrator (setup link, TOTP) and an organisation are made over HTTP.
 * - --rows records are appended to the partner's hash chain straight in its database (harness.ts seedDatabase; on
 *   PGlite with the server stopped), in multi-row INSERTs hashed with src/modules/audit/chain.ts, after the records the
 *   server wrote itself; every --rows/--small-th names the organisation, so an orgId filter selects --small of them.
 *   The server then starts again on that database and the administrator signs in again. GET /audit-logs/verify at the
 *   end proves the chain (and times the walk).
 * - Memory, from outside the process: the server's RSS (Linux /proc, every 10 ms) and its live heap: the server runs
 *   with `--inspect` on 127.0.0.1 (the one flag added to npm start's), and every 2 MB received this process asks it,
 *   over the DevTools protocol, for a full GC and the heap still in use, so garbage not yet collected does not count.
 *   A full export runs first as a warm-up, so the database's buffers and the heap have their working size.
 * - The ceiling, measured in the same run: the small export (orgId filter). A stream holds what one page holds, so
 *   the large export's live-heap growth over its idle baseline must stay within the small one's + 8 MB and under an
 *   eighth of what it sends; otherwise the run fails (exit 1). Then CSV and a slow client (2 MB/s) for the figures.
 */
import { readFileSync } from 'node:fs';
import { WebSocket } from 'undici';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { ensureBuilt, startFlags } from '../scripts/built-server.js';
import { appendRecords } from '../test/audit/seed.js';
import { firstAdmin, signInWithTotp } from '../test/dist/flows.js';
import { startBuiltServer, type BuiltServer } from '../test/dist/launch.js';
import { freePort } from '../test/support/addresses.js';
import { arg, databases, seedDatabase } from './harness.js';

const MB = 1024 * 1024;
const fmt = (v: number, d = 1) => (Number.isFinite(v) ? v.toFixed(d) : 'n/a');
/** Settings the benchmark changes from the defaults, through the environment, printed with the figures. */
const RAISED_LIMITS = { RATE_LIMIT_API: '100000000/60' };
/** What the large export may grow beyond the small one's growth (allocator and buffer noise). */
const SLACK_BYTES = 8 * MB;

/** Resident set size of another process, from /proc (Linux). */
function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : Number.NaN;
}

/**
 * The server's live heap over the DevTools protocol (its --inspect socket): a full GC, then the heap still in use.
 * Connected anew after each restart (the address is the last "Debugger listening" line the server printed).
 */
class Inspector {
  private nextId = 1;
  private readonly pending = new Map<number, (result: unknown) => void>();
  private constructor(private readonly ws: WebSocket) {
    ws.addEventListener('message', (e) => {
      const m = JSON.parse(String(e.data)) as { id?: number; result?: unknown };
      if (m.id !== undefined) this.pending.get(m.id)?.(m.result);
    });
  }

  static async connect(server: BuiltServer): Promise<Inspector> {
    const url = [...server.output().matchAll(/Debugger listening on (ws:\/\/\S+)/g)].at(-1)?.[1];
    if (!url) throw new Error(`no inspector address in the server's output:\n${server.output().slice(-2000)}`);
    const ws = new WebSocket(url);
    await new Promise((resolve, reject) => {
      ws.addEventListener('open', resolve, { once: true });
      ws.addEventListener('error', reject, { once: true });
    });
    return new Inspector(ws);
  }

  private send(method: string): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.ws.send(JSON.stringify({ id, method }));
    });
  }

  async liveHeap(): Promise<number> {
    await this.send('HeapProfiler.collectGarbage');
    return ((await this.send('Runtime.getHeapUsage')) as { usedSize: number }).usedSize;
  }

  close() {
    this.ws.close();
  }
}

/** A full GC in the server per 2 MB received (28 in a 100,000-row export): a snapshot of what the export holds. */
const PROBE_EVERY_BYTES = 2 * MB;

interface Run {
  label: string;
  rows: number;
  bytes: number;
  seconds: number;
  baselineRss: number;
  peakRss: number;
  baselineHeap: number;
  /** Highest heap still in use after a full GC, probed every PROBE_EVERY_BYTES of the download. */
  peakLiveHeap: number;
}

/** Downloads one export, counting lines; `bytesPerSecond` throttles the reader (a slow client); `maxBytes` stops early. */
async function exportRun(
  server: BuiltServer,
  inspector: Inspector,
  baseUrl: string,
  token: string,
  label: string,
  query: Record<string, string>,
  opts: { bytesPerSecond?: number; maxBytes?: number } = {},
): Promise<Run> {
  const pid = server.pid();
  await new Promise((r) => setTimeout(r, 300));
  const baselineRss = rssOf(pid);
  const baselineHeap = await inspector.liveHeap();
  let peakRss = baselineRss;
  const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, rssOf(pid))), 10);
  const probes: Promise<number>[] = [];
  const url = new URL('/api/v1/audit-logs/export', baseUrl);
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
        probes.push(inspector.liveHeap());
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
    await new Promise((r) => setTimeout(r, 300));
    const rows = query.format === 'csv' ? newlines - 1 : newlines;
    const peakLiveHeap = Math.max(...(await Promise.all(probes)));
    return { label, rows, bytes, seconds, baselineRss, peakRss, baselineHeap, peakLiveHeap };
  } catch (err) {
    ctrl.abort();
    throw err;
  } finally {
    clearInterval(rssTimer);
  }
}

async function main(): Promise<void> {
  const rows = Number(arg('rows', '100000'));
  const small = Number(arg('small', '10000'));
  ensureBuilt();
  let failed = false;
  for (const { name, env } of databases()) {
    const started = performance.now();
    const server = await startBuiltServer(RAISED_LIMITS, {
      databaseUrl: env.DATABASE_URL,
      redisUrl: env.REDIS_URL,
      nodeFlags: [`--inspect=127.0.0.1:${await freePort()}`],
    });
    let inspector: Inspector | null = null;
    try {
      const admin = await firstAdmin(server);
      const org = await admin.api.raw.post('/orgs/organizations', { name: 'Bench Org' });
      if (org.status !== 201) throw new Error(`create organisation answered ${org.status}: ${org.text}`);
      const me = await admin.api.raw.get('/users/me');
      const orgId = org.body.id as string;
      process.stderr.write(`audit export · ${name}: appending ${rows} records ... `);
      const every = Math.max(1, Math.round(rows / small));
      const t0 = Date.now() - rows * 1000;
      const seedStarted = performance.now();
      await seedDatabase(server, (db) =>
        appendRecords(db, admin.partnerId, rows, (i) => ({
          action: ['user.login', 'role.update', 'user.invite', 'auth.login.failed'][i % 4]!,
          result: i % 4 === 3 ? 'failure' : 'success',
          actorUserId: me.body.id,
          actorEmail: admin.email,
          orgId: i % every === 0 ? orgId : null,
          resourceType: 'user',
          resourceId: me.body.id,
          ip: '203.0.113.10',
          userAgent:
            'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
          at: new Date(t0 + i * 1000),
          details: { i, method: 'password', changed: ['name', 'description'], note: 'a record of ordinary size' },
        })),
      );
      const seedSeconds = (performance.now() - seedStarted) / 1000;
      process.stderr.write(`${fmt(seedSeconds)} s (server restart included); exporting\n`);
      const token = (await signInWithTotp(server, admin)).token!;
      // The server listens on 127.0.0.1; its public address says localhost.
      const baseUrl = server.baseUrl.replace('localhost', '127.0.0.1');
      inspector = await Inspector.connect(server);
      const runs: Run[] = [];
      await exportRun(server, inspector, baseUrl, token, 'warm-up', { format: 'jsonl' });
      runs.push(
        await exportRun(server, inspector, baseUrl, token, `JSON Lines, ${small} rows (orgId filter)`, {
          format: 'jsonl',
          orgId,
        }),
      );
      runs.push(
        await exportRun(server, inspector, baseUrl, token, `JSON Lines, all ${rows} rows`, { format: 'jsonl' }),
      );
      runs.push(await exportRun(server, inspector, baseUrl, token, `CSV, all ${rows} rows`, { format: 'csv' }));
      runs.push(
        await exportRun(
          server,
          inspector,
          baseUrl,
          token,
          'JSON Lines, slow client (2 MB/s, first 8 MB)',
          { format: 'jsonl' },
          { bytesPerSecond: 2 * MB, maxBytes: 8 * MB },
        ),
      );
      const verifyStarted = performance.now();
      const verify = await fetch(`${baseUrl}/api/v1/audit-logs/verify`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const verified = (await verify.json()) as { ok: boolean; checked: number };
      const verifySeconds = (performance.now() - verifyStarted) / 1000;
      // The seeded rows after the server's own records, plus one audit.export per download.
      if (!verified.ok || verified.checked < rows + 5)
        throw new Error(`the chain does not verify: ${JSON.stringify(verified)}`);

      console.log(
        `\n## Audit export (${name}, ${os.availableParallelism()} cores, Node ${process.versions.node}, load ${fmt(os.loadavg()[0]!)})\n`,
      );
      console.log(
        `Appended ${rows} records to the partner's chain in ${fmt(seedSeconds)} s (hashed with chain.ts, multi-row INSERTs, server stopped and started again).`,
      );
      console.log(
        `GET /audit-logs/verify afterwards: ok=${verified.ok}, ${verified.checked} records in ${fmt(verifySeconds)} s (${fmt(verified.checked / verifySeconds, 0)} records/s).\n`,
      );
      console.log(
        '| Export | Rows | MB | Seconds | Rows/s | Server RSS before → peak | Live heap before → peak (after full GC) |',
      );
      console.log('|---|---|---|---|---|---|---|');
      const mb = (v: number) => `${fmt(v / MB)} MB`;
      for (const r of runs) {
        console.log(
          `| ${r.label} | ${r.rows} | ${fmt(r.bytes / MB)} | ${fmt(r.seconds, 2)} | ${fmt(r.rows / r.seconds, 0)} | ${mb(r.baselineRss)} → ${mb(r.peakRss)} | ${mb(r.baselineHeap)} → ${mb(r.peakLiveHeap)} (+${mb(r.peakLiveHeap - r.baselineHeap)}) |`,
        );
      }
      const [smallRun, bigRun] = runs as [Run, Run];
      const growth = (r: Run) => Math.max(0, r.peakLiveHeap - r.baselineHeap);
      const rssGrowth = (r: Run) => Math.max(0, r.peakRss - r.baselineRss);
      const flat = growth(bigRun) <= growth(smallRun) + SLACK_BYTES && growth(bigRun) < bigRun.bytes / 8;
      if (!flat) failed = true;
      console.log(
        `\n${name}: ${fmt(bigRun.rows / smallRun.rows, 0)}x the rows (${fmt(bigRun.bytes / MB)} MB sent): live heap grew ${mb(growth(bigRun))} against ${mb(growth(smallRun))} for the small export in the same run ` +
          `(allowed: + ${mb(SLACK_BYTES)}, and under ${mb(bigRun.bytes / 8)}); peak RSS ${mb(rssGrowth(bigRun))} against ${mb(rssGrowth(smallRun))} over the idle server's ${mb(bigRun.baselineRss)}${env.DATABASE_URL ? '' : ", the embedded database's WebAssembly memory included"}. ` +
          (flat ? 'Flat: met.' : 'NOT flat: look for buffering.'),
      );
      console.log(`Total time on ${name} ${fmt((performance.now() - started) / 1000)} s.`);
    } finally {
      inspector?.close();
      await server.close();
    }
  }
  console.log(
    `\nThe server is the build (node ${startFlags().join(' ')} --inspect=127.0.0.1:PORT dist/main.js, default logging); raised through env: ${Object.entries(
      RAISED_LIMITS,
    )
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}.`,
  );
  if (failed) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

// Contacts import at scale: 100,000 CSV rows streamed as text/csv, once with random names and once with
// every row sharing one last name (the input that made the old fuzzy matcher quadratic), each into its own organisation,
// then a re-import of the one-name file (every row it created must come back unchanged). The server is the build
// `npm start` runs (test/dist/launch.ts: the start script's flags, default logging, settings through the environment
// only), its own process per database (a fresh DATA_DIR always; a fresh PostgreSQL database too when DATABASE_URL /
// BENCH_DATABASE_URL is set), so its RSS and CPU are the server's alone (on PGlite they include the embedded database).
// Fixtures over HTTP: the first administrator (setup link, TOTP) creates the two organisations.
// /healthz is polled during each import.
// Goal: ≤ 10 s and ≤ 300 MB peak RSS for each run on each database, ratio one-name / random ≈ 1, /healthz ≤ 100 ms.
//   npx tsx bench/contacts-import.ts [rows] [--db=pglite,postgres] [--profile=DIR]   (--profile: the server's .cpuprofile)
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { processCpuSeconds } from './framework/procstat.js';
import { ensureBuilt, startFlags } from '../scripts/built-server.js';
import { firstAdmin } from '../test/dist/flows.js';
import { startBuiltServer } from '../test/dist/launch.js';
import { arg, databases } from './harness.js';
import { pollHealthz, type Latency } from '../test/support/healthz-poll.js';

const ROWS = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 100_000);
const GOAL_SECONDS = 10;
const GOAL_MB = 300;
const GOAL_HEALTHZ_MS = 100;
const MB = 1048576;

/** The server: a migrated database, a partner admin and two organisations; prints READY and serves until SIGTERM. */
/** Deterministic pseudo-random generator (mulberry32): the same files on every run. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}
const SYLLABLES = [
  'ka',
  'ro',
  'mi',
  'len',
  'tha',
  'bo',
  'ri',
  'sa',
  'dun',
  'el',
  'vo',
  'qui',
  'ne',
  'to',
  'mar',
  'jo',
  'an',
  'bel',
  'cor',
  'di',
  'est',
  'fa',
  'gil',
  'ho',
];
const nameOf = (rand: () => number, parts: number) => {
  let s = '';
  for (let i = 0; i < parts; i++) s += SYLLABLES[Math.floor(rand() * SYLLABLES.length)];
  return s[0]!.toUpperCase() + s.slice(1);
};

async function writeCsv(path: string, rows: number, oneLastName: boolean) {
  const rand = prng(42);
  const out = createWriteStream(path);
  out.write('externalId,previousId,firstName,lastName,email,phone,title,site\n');
  for (let i = 0; i < rows; i++) {
    const first = nameOf(rand, 3 + Math.floor(rand() * 2));
    const last = oneLastName ? 'Smith' : nameOf(rand, 3);
    const line = `ext-${i},old-${i},${first},${last},person${i}@customer${i % 97}.example,+1 555 ${String(i).padStart(7, '0')},Title ${i % 13},\n`;
    if (!out.write(line)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  out.end();
  await finished(out);
}

/** Resident set size of another process, from /proc (Linux). */
function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : Number.NaN;
}

interface Run {
  label: string;
  seconds: number;
  cpuSeconds: number;
  startMb: number;
  peakMb: number;
  summary: Record<string, number>;
  healthz: Latency;
}

async function importFile(
  baseUrl: string,
  pid: number,
  token: string,
  orgId: string,
  file: string,
  label: string,
): Promise<Run> {
  const start = rssOf(pid);
  let peak = start;
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 10);
  const cpu = processCpuSeconds(pid);
  for (let i = 0; i < 3; i++) await (await fetch(`${baseUrl}/healthz`)).text();
  const poll = pollHealthz(baseUrl, 20);
  const started = performance.now();
  const res = await fetch(`${baseUrl}/api/v1/contacts/import?orgId=${orgId}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'text/csv' },
    body: Readable.toWeb(createReadStream(file)) as ReadableStream,
    duplex: 'half',
  } as RequestInit);
  const body = (await res.json()) as { summary: Record<string, number>; rows: unknown[] };
  const seconds = (performance.now() - started) / 1000;
  const cpuSeconds = processCpuSeconds(pid) - cpu;
  clearInterval(sampler);
  peak = Math.max(peak, rssOf(pid));
  const healthz = await poll.stop();
  if (res.status !== 200) throw new Error(`${label}: ${res.status} ${JSON.stringify(body)}`);
  if (body.rows.length !== ROWS) throw new Error(`${label}: ${body.rows.length} rows in the answer, ${ROWS} sent`);
  return { label, seconds, cpuSeconds, startMb: start / MB, peakMb: peak / MB, summary: body.summary, healthz };
}

const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'gh-bench-'));
  const randomFile = join(dir, 'random.csv');
  const oneNameFile = join(dir, 'one-name.csv');
  await writeCsv(randomFile, ROWS, false);
  await writeCsv(oneNameFile, ROWS, true);
  const csvMb = statSync(randomFile).size / MB;
  const profileDir = arg('profile', '');
  ensureBuilt();
  const results: { db: string; runs: Run[] }[] = [];
  try {
    for (const { name, env } of databases()) {
      const server = await startBuiltServer(
        {},
        {
          databaseUrl: env.DATABASE_URL,
          redisUrl: env.REDIS_URL,
          nodeFlags: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
        },
      );
      try {
        const admin = await firstAdmin(server);
        const orgs: string[] = [];
        for (const orgName of ['Import Org A', 'Import Org B']) {
          const res = await admin.api.raw.post('/orgs/organizations', { name: orgName });
          if (res.status !== 201) throw new Error(`create organisation answered ${res.status}: ${res.text}`);
          orgs.push(res.body.id as string);
        }
        // The server listens on 127.0.0.1; its public address says localhost.
        const ready = { baseUrl: server.baseUrl.replace('localhost', '127.0.0.1'), token: admin.api.token!, orgs };
        const [orgA, orgB] = ready.orgs;
        const runs: Run[] = [];
        for (const [org, file, label] of [
          [orgA, randomFile, 'random names'],
          [orgB, oneNameFile, 'one last name'],
          [orgB, oneNameFile, 'one last name, re-import'],
        ] as const) {
          process.stderr.write(`contacts import · ${name} · ${label} ... `);
          runs.push(await importFile(ready.baseUrl, server.pid(), ready.token, org!, file, label));
          process.stderr.write(`${runs.at(-1)!.seconds.toFixed(1)} s\n`);
        }
        if (runs[2]!.summary.unchanged !== runs[1]!.summary.created)
          throw new Error(`${name}: re-import changed rows: ${JSON.stringify(runs[2]!.summary)}`);
        results.push({ db: name, runs });
      } finally {
        await server.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  console.log(
    `\nContacts import, ${ROWS.toLocaleString()} rows (${csvMb.toFixed(1)} MiB CSV), the built server in its own process (node ${startFlags().join(' ')} dist/main.js, default logging)\n`,
  );
  // CPU seconds of the server process (all threads): the figure that holds on a shared, loaded machine.
  console.log(
    '| database | run | time | server CPU | rows/s | server RSS start → peak | /healthz p95 / max | summary |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const { db, runs } of results) {
    for (const r of runs) {
      const hz = `${r.healthz.p95.toFixed(0)} / ${r.healthz.max.toFixed(0)} ms (${r.healthz.polls} polls)`;
      console.log(
        `| ${db} | ${r.label} | ${r.seconds.toFixed(1)} s | ${r.cpuSeconds.toFixed(1)} s | ${Math.round(ROWS / r.seconds).toLocaleString()} | ${Math.round(r.startMb)} → ${Math.round(r.peakMb)} MiB | ${hz} | ${JSON.stringify(r.summary)} |`,
      );
    }
  }
  const scale = 100_000 / ROWS;
  console.log(
    `\nGoals (${ROWS === 100_000 ? 'measured' : `time and CPU scaled ×${scale.toFixed(1)} to 100,000 rows; RSS as measured`}):`,
  );
  for (const { db, runs } of results) {
    const worst = Math.max(...runs.map((r) => r.seconds)) * scale;
    const worstMb = Math.max(...runs.map((r) => r.peakMb));
    const ratio = runs[1]!.cpuSeconds / runs[0]!.cpuSeconds;
    const hz = Math.max(...runs.map((r) => r.healthz.p95));
    const hzMax = Math.max(...runs.map((r) => r.healthz.max));
    console.log(
      `- ${db}: time ${worst.toFixed(1)} s / ${GOAL_SECONDS} s = ${(worst / GOAL_SECONDS).toFixed(2)} ${verdict(worst <= GOAL_SECONDS)}; ` +
        `peak RSS ${Math.round(worstMb)} / ${GOAL_MB} MiB = ${(worstMb / GOAL_MB).toFixed(2)} ${verdict(worstMb <= GOAL_MB)}; ` +
        `CPU one last name / random ${ratio.toFixed(2)} ${verdict(ratio <= 1.25)} (linear); /healthz p95 ${hz.toFixed(0)} ms ${verdict(hz <= GOAL_HEALTHZ_MS)}, slowest ${hzMax.toFixed(0)} ms`,
    );
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

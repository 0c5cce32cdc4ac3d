/**
 * Summarises a V8 `.cpuprofile` (node --cpu-prof) by where the self time went: the PostgreSQL driver, PGlite,
 * drizzle, jose (token verification), Fastify, zod, logging, metrics, the app's own code, Node internals, GC.
 *
 *   npx tsx bench/cpu-profile.ts path/to/file.cpuprofile
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  hitCount?: number;
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

const CATEGORIES: [string, RegExp][] = [
  ['pg driver (pg, pg-protocol, pg-types)', /node_modules\/(pg|pg-protocol|pg-types|pg-pool|postgres-[a-z]+|pgpass)\//],
  ['PGlite (WASM PostgreSQL)', /@electric-sql\/pglite|\.wasm|^wasm:/],
  ['drizzle-orm', /drizzle-orm/],
  ['jose (EdDSA verification)', /node_modules\/jose\//],
  ['ioredis', /ioredis|redis-parser|denque|cluster-key-slot/],
  ['zod + type provider', /node_modules\/(zod|fastify-type-provider-zod)\//],
  [
    'fastify (router, hooks, reply)',
    /node_modules\/(fastify|find-my-way|avvio|@fastify|light-my-request|fast-json-stringify|secure-json-parse|fast-querystring|toad-cache|process-warning|abstract-logging|rfdc|fast-uri|ret|safe-regex2)/,
  ],
  [
    'logging (pino)',
    /node_modules\/(pino|sonic-boom|thread-stream|on-exit-leak-free|quick-format-unescaped|fast-redact|@pinojs)/,
  ],
  ['metrics (prom-client)', /prom-client|tdigest|bintrees/],
  ['tsx loader', /node_modules\/tsx\//],
  ['app code (src/)', /\/src\//],
  ['other node_modules', /node_modules/],
  ['Node internals (http, net, streams, crypto)', /^node:|^internal\//],
];

export interface ProfileSummary {
  totalMs: number;
  busyMs: number;
  rows: { category: string; ms: number; percentOfBusy: number }[];
}

export function summariseProfile(file: string): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  // Each sample's time is the delta to the next sample.
  for (let i = 0; i < samples.length; i++) {
    const dt = deltas[i + 1] ?? 0;
    selfUs.set(samples[i]!, (selfUs.get(samples[i]!) ?? 0) + Math.max(0, dt));
  }
  const totals = new Map<string, number>();
  let idle = 0;
  let total = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    total += us;
    const { url, functionName } = node.callFrame;
    let category: string;
    if (functionName === '(idle)') {
      idle += us;
      continue;
    } else if (functionName === '(garbage collector)') category = 'garbage collector';
    else if (functionName === '(program)') category = '(program): native, not attributed';
    else if (!url) category = 'native / builtins (no script)';
    else category = CATEGORIES.find(([, re]) => re.test(url))?.[0] ?? 'other';
    totals.set(category, (totals.get(category) ?? 0) + us);
  }
  const busy = total - idle;
  const rows = [...totals.entries()]
    .map(([category, us]) => ({ category, ms: us / 1000, percentOfBusy: (us / busy) * 100 }))
    .sort((a, b) => b.ms - a.ms);
  return { totalMs: total / 1000, busyMs: busy / 1000, rows };
}

export function renderProfile(label: string, s: ProfileSummary): string {
  const lines = [
    `Main-thread profile, ${label}: busy ${(s.busyMs / 1000).toFixed(1)} s of ${(s.totalMs / 1000).toFixed(1)} s`,
    '| Where | % of busy main thread |',
    '|---|---:|',
    ...s.rows.filter((r) => r.percentOfBusy >= 0.5).map((r) => `| ${r.category} | ${r.percentOfBusy.toFixed(1)} % |`),
  ];
  return lines.join('\n');
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: cpu-profile.ts FILE.cpuprofile');
  console.log(renderProfile(file, summariseProfile(file)));
}

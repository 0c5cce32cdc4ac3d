// npm run bench: every benchmark, one after the other, each in its own process. BENCH_SKIP=framework,login skips some;
// BENCH_ONLY=authzen,hot-path runs only those.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

// Every benchmark of the service runs the built server (dist/, as npm start does) against a same-run ceiling.
const benches = [
  ['framework', 'bench/framework/run.ts'],
  // Hot path: ceiling = raw node:http in the same run; PostgreSQL + Redis too when DATABASE_URL / REDIS_URL are set.
  ['hot-path', 'bench/hot-path.ts'],
  // Login: bound = cores ÷ one argon2id hash measured in the same run.
  ['login', 'bench/login.ts'],
  // Large tenant: 100k users, 1k organisations, 50k devices, 1M audit records (PGlite: scale 0.2 unless --scale); ceiling /users/me.
  ['large-tenant', 'bench/large-tenant.ts'],
  ['permissions', 'bench/permissions.ts'],
  ['contacts-import', 'bench/contacts-import.ts'],
  // Audit export: the live heap of a 100k-row export against a 10k-row one (exit 1 when it grows with the rows).
  ['audit-export', 'bench/audit-export.ts'],
  // Audit webhooks: an audited change with and without subscriptions; the backlog drain against changes per second.
  ['webhooks', 'bench/webhooks.ts'],
  // Service accounts: API-key authentication against a JWT on the same route and role.
  ['api-key-auth', 'bench/api-key-auth.ts'],
  // Authorization API: one evaluation and a batch of 1,000 device evaluations; ceiling = raw node:http in the same run.
  ['authzen', 'bench/authzen.ts'],
  // Blast-radius governor: what a destructive decision pays for the budgets (in process: the charge itself).
  ['governor', 'bench/governor.ts'],
  // Admin console: sign-in page JS ≤ 200 KB gzip and interactive ≤ 1 s; users page (10,000 users) first page ≤ 300 ms;
  // floors: a cold /healthz navigation, the page's own API call.
  ['console', 'bench/console.ts'],
  // Start and memory: spawn → /readyz of dist/main.js (first start, restart, PostgreSQL) and idle RSS; ceiling =
  // an empty node:http.
  ['start', 'bench/start.ts'],
] as const;
const skip = new Set((process.env.BENCH_SKIP ?? '').split(',').filter(Boolean));
const only = new Set((process.env.BENCH_ONLY ?? '').split(',').filter(Boolean));
let failed = 0;
for (const [name, file] of benches) {
  if (skip.has(name) || (only.size > 0 && !only.has(name))) continue;
  if (!existsSync(file)) {
    console.log(`\n## ${name}: ${file} is missing`);
    failed++;
    continue;
  }
  console.log(`\n## ${name}`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--expose-gc', file], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);

/**
 * The authorization API (/access/v1) against a raw node:http ceiling measured in the same run: one evaluation per
 * request (req/s = evaluations/s at 20 connections, p99 there and on one connection alone), and a batch of 1,000 device evaluations per request (p99, evaluations/s).
 *
 *   npx tsx bench/authzen.ts [--duration=6] [--warmup=2] [--connections=20] [--batch-connections=4] [--db=pglite,postgres]
 *
 * The server is the build `npm start` runs, pinned to one core when taskset is there (so req/s is per vCPU); the load
 * generator runs on another. Fixtures over HTTP: the first administrator (setup link, TOTP), an organisation and a
 * site, a role holding authz:evaluate and a service account with its key (the caller); the 1,000 devices are written
 * straight into the database (volume only, as the large-tenant benchmark does). The subject is the administrator.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { LoadgenResult } from './framework/loadgen.js';
import { ensureBuilt, startFlags } from '../scripts/built-server.js';
import { firstAdmin } from '../test/dist/flows.js';
import { startBuiltServer } from '../test/dist/launch.js';
import { serviceAccountWithKey } from '../test/support/service-accounts.js';
import { arg, canPin, databases, int, loadgen, measureCeiling, ms, QUIET, seedDatabase } from './harness.js';

/** Settings the benchmark changes from the defaults, through the environment, printed with the figures. */
const RAISED_LIMITS = { RATE_LIMIT_API: '100000000/60', RATE_LIMIT_API_KEY: '100000000/60' };
const BATCH = 1000;

function check(res: { status: number; text: string }, status: number, what: string) {
  if (res.status !== status) throw new Error(`${what} answered ${res.status}: ${res.text}`);
}

interface Row {
  db: string;
  ceiling: LoadgenResult;
  single: LoadgenResult;
  /** One connection: the latency of an evaluation without queueing behind others. */
  alone: LoadgenResult;
  batch: LoadgenResult;
}

async function main(): Promise<void> {
  const o = {
    duration: Number(arg('duration', '6')),
    warmup: Number(arg('warmup', '2')),
    connections: Number(arg('connections', '20')),
    batchConnections: Number(arg('batch-connections', '4')),
    pin: canPin() && !process.argv.includes('--no-pin'),
  };
  const rows: Row[] = [];
  ensureBuilt();
  for (const { name, env } of databases()) {
    process.stderr.write(`authzen · ${name}: ceiling (raw node:http) ... `);
    const ceiling = await measureCeiling(o);
    process.stderr.write(`${int(ceiling.all.reqPerSec)} req/s\n`);
    const server = await startBuiltServer(RAISED_LIMITS, {
      databaseUrl: env.DATABASE_URL,
      redisUrl: env.REDIS_URL,
      prefix: o.pin ? ['taskset', '-c', '0'] : [],
    });
    try {
      const admin = await firstAdmin(server);
      const me = await admin.api.raw.get('/auth/me');
      check(me, 200, 'GET /auth/me');
      const org = await admin.api.raw.post('/orgs/organizations', { name: 'Bench Org' });
      check(org, 201, 'create organisation');
      const site = await admin.api.raw.post('/orgs/sites', { orgId: org.body.id, name: 'Bench Site' });
      check(site, 201, 'create site');
      const role = await admin.api.raw.post('/roles', {
        name: 'Decision point',
        permissions: [{ resource: 'authz', action: 'evaluate' }],
      });
      check(role, 201, 'create role');
      const caller = await serviceAccountWithKey(admin.api, { roleId: role.body.id });
      const deviceIds = await seedDatabase(server, async (db) => {
        const { devices } = await import('../src/db/schema/index.js');
        const rows = await db
          .insert(devices)
          .values(
            Array.from({ length: BATCH }, (_, i) => ({
              orgId: org.body.id as string,
              siteId: site.body.id as string,
              hostname: `bench-${i}`,
              osType: 'windows',
              agentTokenHash: randomBytes(32).toString('hex'),
            })),
          )
          .returning({ id: devices.id });
        return rows.map((r) => r.id);
      });
      const subject = { type: 'user', id: me.body.id as string };
      const single = JSON.stringify({
        subject,
        resource: { type: 'device', id: deviceIds[0] },
        action: { name: 'devices:execute' },
      });
      const batch = JSON.stringify({
        subject,
        action: { name: 'devices:execute' },
        evaluations: deviceIds.map((id) => ({ resource: { type: 'device', id } })),
      });
      const base = server.baseUrl.replace('localhost', '127.0.0.1');
      const client = server.client().withToken(caller.key.key);
      const one = await client.raw.post(`${base}/access/v1/evaluation`, JSON.parse(single));
      check(one, 200, 'POST /access/v1/evaluation');
      if (one.body.decision !== true) throw new Error(`the evaluation is not allowed: ${one.text}`);
      const many = await client.raw.post(`${base}/access/v1/evaluations`, JSON.parse(batch));
      check(many, 200, 'POST /access/v1/evaluations');
      if (many.body.evaluations.length !== BATCH) throw new Error('the batch is not answered whole');
      const run = (path: string, body: string, connections: number) =>
        loadgen(
          {
            url: `${base}${path}`,
            method: 'POST',
            body,
            connections,
            warmupSeconds: o.warmup,
            durationSeconds: o.duration,
            headers: { authorization: `Bearer ${caller.key.key}`, 'content-type': 'application/json' },
            serverPid: server.pid(),
            serverCore: o.pin ? 0 : null,
            quiet: QUIET,
          },
          o.pin ? 1 : null,
        );
      process.stderr.write(`authzen · ${name}: single ... `);
      const singleRun = await run('/access/v1/evaluation', single, o.connections);
      process.stderr.write(`${int(singleRun.all.reqPerSec)} req/s; one connection ... `);
      const alone = await run('/access/v1/evaluation', single, 1);
      process.stderr.write(`p99 ${ms(alone.all.latencyP99Ms)} ms; batch of ${BATCH} ... `);
      const batchRun = await run('/access/v1/evaluations', batch, o.batchConnections);
      process.stderr.write(`${int(batchRun.all.reqPerSec)} req/s\n`);
      rows.push({ db: name, ceiling, single: singleRun, alone, batch: batchRun });
    } finally {
      await server.close();
    }
  }
  const cores = o.pin ? 'server pinned to one core' : `unpinned, ${os.availableParallelism()} cores`;
  console.log(
    `\n## Authorization API (AuthZEN): ${o.duration} s per run, ${o.connections} connections (batch: ${o.batchConnections}), ${cores}\n`,
  );
  console.log(
    '| Database | Ceiling: raw node:http req/s | Single evaluation: evaluations/s | Ratio | p50 / p99 ms | one connection: p50 / p99 ms | Batch of 1,000: req/s | evaluations/s | p50 / p99 ms | server CPU µs: single / per batch evaluation | non-2xx |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    console.log(
      `| ${r.db} | ${int(r.ceiling.all.reqPerSec)} | ${int(r.single.all.reqPerSec)} | ${((r.single.all.reqPerSec / r.ceiling.all.reqPerSec) * 100).toFixed(1)} % ` +
        `| ${ms(r.single.all.latencyP50Ms)} / ${ms(r.single.all.latencyP99Ms)} | ${ms(r.alone.all.latencyP50Ms)} / ${ms(r.alone.all.latencyP99Ms)} | ${int(r.batch.all.reqPerSec)} | ${int(r.batch.all.reqPerSec * BATCH)} ` +
        `| ${ms(r.batch.all.latencyP50Ms)} / ${ms(r.batch.all.latencyP99Ms)} | ${int(r.single.all.serverCpuMicrosPerReq)} / ${(r.batch.all.serverCpuMicrosPerReq / BATCH).toFixed(1)} | ${r.single.non2xx + r.batch.non2xx} |`,
    );
  }
  console.log(
    `\nThe server is the build (node ${startFlags().join(' ')} dist/main.js, default logging); raised through env: ${Object.entries(
      RAISED_LIMITS,
    )
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}.`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

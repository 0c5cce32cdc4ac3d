/**
 * The cost of API-key authentication against a JWT (issue 17): the same route, the same role, the same tenant, called
 * with a partner member's access token and with a service account's key, in one run.
 *
 *   npx tsx bench/api-key-auth.ts [--duration=6] [--warmup=2] [--connections=20] [--db=pglite,postgres]
 *
 * The route is GET /api/v1/orgs/organizations?limit=1 (both callers hold Partner Viewer). A key is checked by its
 * SHA-256 and a row read on every request (revocation bites at once); a JWT by its signature (cached) and the session's
 * liveness row. The ratio key / JWT is the figure that counts: the machine is shared and absolute req/s are noisy.
 */
import os from 'node:os';
import type { LoadgenResult } from './framework/loadgen.js';
import { arg, canPin, databases, firstLine, int, loadgen, ms, QUIET, runBench, spawnNode, stop } from './harness.js';

const ROUTE = '/api/v1/orgs/organizations?limit=1';

async function serve(): Promise<void> {
  const { prepareTemplate } = await import('../test/support/db.js');
  const { startApp } = await import('../test/support/app.js');
  const { createOrg, partnerAdmin, signedInPartnerMember } = await import('../test/support/fixtures.js');
  const { serviceAccountWithKey } = await import('../test/support/service-accounts.js');
  const { SYSTEM_ROLES } = await import('../src/modules/roles/catalog.js');
  const viewer = SYSTEM_ROLES.find((r) => r.name === 'Partner Viewer')!.id as string;
  await prepareTemplate();
  const t = await startApp({ LOG_LEVEL: 'warn', RATE_LIMIT_API: '100000000/60', RATE_LIMIT_API_KEY: '100000000/60' });
  const { api: admin, partner } = await partnerAdmin(t);
  await createOrg(t, partner.id);
  const person = await signedInPartnerMember(t, partner.id, { roleId: viewer });
  const machine = await serviceAccountWithKey(admin, { roleId: viewer });
  for (const token of [person.session.accessToken, machine.key.key]) {
    const res = await fetch(`${t.baseUrl}${ROUTE}`, { headers: { authorization: `Bearer ${token}` } });
    if (res.status !== 200) throw new Error(`GET ${ROUTE} answered ${res.status}: ${await res.text()}`);
  }
  process.stdout.write(
    `READY ${JSON.stringify({ url: `${t.baseUrl}${ROUTE}`, jwt: person.session.accessToken, key: machine.key.key })}\n`,
  );
  const close = async () => {
    await t.close().catch(() => {});
    process.exit(0);
  };
  process.once('SIGTERM', () => void close());
  process.once('SIGINT', () => void close());
}

async function main(): Promise<void> {
  const o = {
    duration: Number(arg('duration', '6')),
    warmup: Number(arg('warmup', '2')),
    connections: Number(arg('connections', '20')),
    pin: canPin() && !process.argv.includes('--no-pin'),
  };
  const rows: { db: string; jwt: LoadgenResult; key: LoadgenResult }[] = [];
  for (const { name, env } of databases()) {
    const child = spawnNode([new URL(import.meta.url).pathname, '--serve'], o.pin ? 0 : null, env);
    try {
      const ready = JSON.parse(await firstLine(child, 'READY', 120_000)) as { url: string; jwt: string; key: string };
      const run = (token: string) =>
        loadgen(
          {
            url: ready.url,
            connections: o.connections,
            warmupSeconds: o.warmup,
            durationSeconds: o.duration,
            headers: { authorization: `Bearer ${token}` },
            serverPid: child.pid!,
            serverCore: o.pin ? 0 : null,
            quiet: QUIET,
          },
          o.pin ? 1 : null,
        );
      process.stderr.write(`api-key auth · ${name}: JWT ... `);
      const jwt = await run(ready.jwt);
      process.stderr.write(`${int(jwt.all.reqPerSec)} req/s; key ... `);
      const key = await run(ready.key);
      process.stderr.write(`${int(key.all.reqPerSec)} req/s\n`);
      rows.push({ db: name, jwt, key });
    } finally {
      await stop(child);
    }
  }
  console.log(
    `\n## API-key authentication against a JWT: GET ${ROUTE}, ${o.connections} connections, ${o.duration} s (${os.availableParallelism()} cores)\n`,
  );
  console.log(
    '| Database | JWT req/s | key req/s | key / JWT | p99 ms JWT / key | server CPU µs/req JWT / key | non-2xx |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    console.log(
      `| ${r.db} | ${int(r.jwt.all.reqPerSec)} | ${int(r.key.all.reqPerSec)} | ${((r.key.all.reqPerSec / r.jwt.all.reqPerSec) * 100).toFixed(1)} % | ${ms(r.jwt.all.latencyP99Ms)} / ${ms(r.key.all.latencyP99Ms)} ` +
        `| ${int(r.jwt.all.serverCpuMicrosPerReq)} / ${int(r.key.all.serverCpuMicrosPerReq)} | ${r.jwt.non2xx + r.key.non2xx} |`,
    );
  }
}

runBench(
  () => serve(),
  () => main(),
);

/**
 * The cost of API-key authentication against a JWT: the same route, the same role, the same tenant, called
 * with a partner member's access token and with a service account's key, in one run.
 *
 *   npx tsx bench/api-key-auth.ts [--duration=6] [--warmup=2] [--connections=20] [--db=pglite,postgres]
 *
 * The route is GET /api/v1/orgs/organizations?limit=1 (both callers hold Partner Viewer). A key is checked by its
 * SHA-256 and a row read on every request (revocation bites at once); a JWT by its signature (cached) and the session's
 * liveness row. The ratio key / JWT is the figure that counts: the machine is shared and absolute req/s are noisy.
 *
 * The server is the build `npm start` runs (test/dist/launch.ts: the start script's flags, default logging, settings
 * through the environment only, a fresh DATA_DIR or PostgreSQL database); the API and API-key rate limits are raised
 * through their env vars, as the output says. Fixtures over HTTP: the first administrator (setup link, TOTP), an
 * organisation, a Partner Viewer invited by mail who accepts and is signed in, and a service account with its key.
 */
import os from 'node:os';
import type { LoadgenResult } from './framework/loadgen.js';
import { ensureBuilt, startFlags } from '../scripts/built-server.js';
import { firstAdmin, strongPassword } from '../test/dist/flows.js';
import { startBuiltServer } from '../test/dist/launch.js';
import { serviceAccountWithKey } from '../test/support/service-accounts.js';
import { linkToken, startMailCatcher } from '../test/support/smtp.js';
import { arg, canPin, databases, int, loadgen, ms, QUIET } from './harness.js';

const ROUTE = '/api/v1/orgs/organizations?limit=1';

/** Settings the benchmark changes from the defaults, through the environment, printed with the figures. */
const RAISED_LIMITS = { RATE_LIMIT_API: '100000000/60', RATE_LIMIT_API_KEY: '100000000/60' };

function check(res: { status: number; text: string }, status: number, what: string) {
  if (res.status !== status) throw new Error(`${what} answered ${res.status}: ${res.text}`);
}

async function main(): Promise<void> {
  const o = {
    duration: Number(arg('duration', '6')),
    warmup: Number(arg('warmup', '2')),
    connections: Number(arg('connections', '20')),
    pin: canPin() && !process.argv.includes('--no-pin'),
  };
  const rows: { db: string; jwt: LoadgenResult; key: LoadgenResult }[] = [];
  ensureBuilt();
  for (const { name, env } of databases()) {
    const mail = await startMailCatcher();
    const server = await startBuiltServer(
      { ...RAISED_LIMITS, SMTP_URL: mail.url },
      { databaseUrl: env.DATABASE_URL, redisUrl: env.REDIS_URL, prefix: o.pin ? ['taskset', '-c', '0'] : [] },
    );
    try {
      const admin = await firstAdmin(server);
      const roles = await admin.api.raw.get('/roles');
      check(roles, 200, 'GET /roles');
      const viewer = (roles.body.data as { id: string; name: string }[]).find((r) => r.name === 'Partner Viewer')!.id;
      check(await admin.api.raw.post('/orgs/organizations', { name: 'Bench Org' }), 201, 'create organisation');
      const email = 'viewer@bench.test';
      const inv = await admin.api.raw.post('/users/invite', {
        email,
        name: 'Viewer',
        roleId: viewer,
        orgAccess: 'all',
      });
      check(inv, 201, 'invite');
      const person = server.client();
      const accepted = await person.raw.post('/auth/accept-invite', {
        token: linkToken(await mail.waitFor(email, undefined, 30_000)),
        password: strongPassword(),
      });
      check(accepted, 200, 'accept-invite');
      const machine = await serviceAccountWithKey(admin.api, { roleId: viewer });
      const ready = {
        // The server listens on 127.0.0.1; its public address says localhost.
        url: `${server.baseUrl.replace('localhost', '127.0.0.1')}${ROUTE}`,
        jwt: accepted.body.accessToken as string,
        key: machine.key.key,
      };
      for (const token of [ready.jwt, ready.key])
        check(await server.client().withToken(token).raw.get(ROUTE), 200, `GET ${ROUTE}`);
      const run = (token: string) =>
        loadgen(
          {
            url: ready.url,
            connections: o.connections,
            warmupSeconds: o.warmup,
            durationSeconds: o.duration,
            headers: { authorization: `Bearer ${token}` },
            serverPid: server.pid(),
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
      await server.close();
      await mail.close();
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

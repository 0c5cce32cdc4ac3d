// A PostgreSQL restart and a Redis restart under load: no 500, only 503 service_unavailable with Retry-After in the
// gap, one log line when the outage starts and one when it ends, and full recovery without help.
// The servers are the test's own (initdb/pg_ctl and redis-server on free ports under /tmp), never the machine's.
// Runs once per CI run: in the embedded-database pass (it brings its own PostgreSQL, so the other pass adds nothing).
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openPostgres, type Database } from '../../src/db/connect.js';
import { buildDeps, type Deps } from '../../src/deps.js';
import { createLogger } from '../../src/platform/logger.js';
import { freePort, type TestApp } from '../support/app.js';
import { addOrgMember, createOrg, createPartner, createUser } from '../support/fixtures.js';
import {
  haveThrowawayPostgres,
  haveThrowawayRedis,
  startThrowawayPostgres,
  startThrowawayRedis,
  type ThrowawayPostgres,
  type ThrowawayRedis,
} from '../support/throwaway.js';

const PASSWORD = 'correct horse battery staple 42';
const runs = haveThrowawayPostgres() && haveThrowawayRedis() && !process.env.DATABASE_URL;

let pg: ThrowawayPostgres;
let redis: ThrowawayRedis;
let database: Database;
let deps: Deps;
let app: FastifyInstance;
let base: string;
let logText = '';
let email: string;
let token: string;

beforeAll(async () => {
  if (!runs) return;
  [pg, redis] = await Promise.all([startThrowawayPostgres(), startThrowawayRedis()]);
  const port = await freePort();
  const env = {
    NODE_ENV: 'test',
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://localhost:${port}`,
    APP_URL: `http://localhost:${port}`,
    DATA_DIR: '/tmp/gatehouse-unused',
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    DATABASE_URL: pg.url,
    REDIS_URL: redis.url,
    RATE_LIMIT_LOGIN: '100000/900',
    RATE_LIMIT_API: '100000/60',
    LOG_LEVEL: 'info',
  };
  const config = loadConfig(env);
  const sink = new Writable({ write: (chunk, _e, cb) => ((logText += chunk.toString()), cb()) });
  database = await openPostgres(pg.url, 10);
  await database.migrate();
  deps = await buildDeps(config, database, createLogger(config.logLevel, sink), {
    storePrefix: `fault:${randomBytes(4).toString('hex')}:`,
  });
  app = await createApp(deps);
  await app.listen({ port, host: '127.0.0.1' });
  base = `http://127.0.0.1:${port}`;
  const t = { deps } as unknown as TestApp;
  const partner = await createPartner(t);
  const org = await createOrg(t, partner.id);
  const user = await createUser(t, { password: PASSWORD });
  await addOrgMember(t, { orgId: org.id, userId: user.id });
  email = user.email;
  const res = await fetch(`${base}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  token = ((await res.json()) as { accessToken: string }).accessToken;
}, 180_000);

// Each teardown step is bounded and named: a step that hangs (a keep-alive socket, a pool client held across the
// outage) is reported and skipped instead of holding the hook until its timeout.
afterAll(async () => {
  const step = async (name: string, work: () => unknown) => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), 15_000)));
    const done = await Promise.race([
      Promise.resolve()
        .then(work)
        .then(() => 'done' as const),
      late,
    ]).catch(() => 'done' as const);
    clearTimeout(timer);
    if (done === 'late') console.warn(`outage test teardown: ${name} did not finish within 15 s; going on`);
  };
  const sweep = setInterval(() => app?.server.closeIdleConnections(), 100);
  await step('app.close', () => app?.close());
  clearInterval(sweep);
  await step('store.close', () => deps?.store.close());
  await step('database.close', () => database?.close());
  await step('postgres destroy', () => pg?.destroy());
  await step('redis destroy', () => redis?.destroy());
});

interface Answer {
  route: string;
  status: number;
  retryAfter: string | null;
  code?: string;
}

/** The requests of the load: a protected read, a failed sign-in (database + shared store), readiness. */
const requests: [string, () => Promise<Response>][] = [
  ['me', () => fetch(`${base}/api/v1/auth/me`, { headers: { authorization: `Bearer ${token}` } })],
  [
    'login',
    () =>
      fetch(`${base}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password: 'not the password' }),
      }),
  ],
  ['readyz', () => fetch(`${base}/readyz`)],
];
const normal: Record<string, number> = { me: 200, login: 401, readyz: 200 };

/** `workers` loops of requests until `fault` has run and `settleMs` more have passed; bounded by `maxMs`. */
async function underLoad(
  fault: () => Promise<void>,
  opts = { workers: 6, settleMs: 1500, maxMs: 60_000 },
): Promise<Answer[]> {
  const answers: Answer[] = [];
  let stop = false;
  const deadline = Date.now() + opts.maxMs;
  const worker = async (w: number) => {
    for (let i = w; !stop && Date.now() < deadline; i++) {
      const [route, send] = requests[i % requests.length]!;
      try {
        const res = await send();
        const body = (await res.json().catch(() => ({}))) as { code?: string };
        answers.push({ route, status: res.status, retryAfter: res.headers.get('retry-after'), code: body.code });
      } catch {
        answers.push({ route, status: 0, retryAfter: null });
      }
    }
  };
  const load = Promise.all(Array.from({ length: opts.workers }, (_, w) => worker(w)));
  await new Promise((r) => setTimeout(r, 500));
  await fault();
  await new Promise((r) => setTimeout(r, opts.settleMs));
  stop = true;
  await load;
  return answers;
}

async function recovered(): Promise<void> {
  const until = Date.now() + 30_000;
  for (;;) {
    const ready = await fetch(`${base}/readyz`)
      .then((r) => r.status)
      .catch(() => 0);
    if (ready === 200) break;
    if (Date.now() > until) throw new Error('no recovery within 30 s');
    await new Promise((r) => setTimeout(r, 200));
  }
  for (const [route, send] of requests) expect((await send()).status, `${route} after recovery`).toBe(normal[route]);
}

function expectOnlyNormalOr503(answers: Answer[]) {
  const odd = answers.filter((a) => a.status !== normal[a.route] && a.status !== 503);
  expect(odd, JSON.stringify(odd.slice(0, 5))).toEqual([]);
  expect(answers.filter((a) => a.status === 500)).toHaveLength(0);
  const unavailable = answers.filter((a) => a.status === 503);
  expect(unavailable.length).toBeGreaterThan(0); // the gap was seen under load
  expect(unavailable.every((a) => a.code === 'service_unavailable' && Number(a.retryAfter) >= 1)).toBe(true);
}

const lines = (pattern: RegExp) => logText.split('\n').filter((l) => pattern.test(l));

describe.skipIf(!runs)('dependency outages under load answer 503 and recover by themselves', () => {
  it('a PostgreSQL restart: 0 × 500, only 503 with Retry-After in the gap, one log line each way, then full service', async () => {
    const before = logText.length;
    const answers = await underLoad(async () => {
      pg.stop('fast');
      await new Promise((r) => setTimeout(r, 1500));
      pg.start();
    });
    expectOnlyNormalOr503(answers);
    await recovered();
    await new Promise((r) => setTimeout(r, 2500)); // the monitor's next probe says it is back
    const log = logText.slice(before);
    expect(log.split('\n').filter((l) => /database unavailable/.test(l))).toHaveLength(1);
    expect(log.split('\n').filter((l) => /database is back/.test(l))).toHaveLength(1);
    expect(log).not.toMatch(/unexpected error/);
    expect(log).not.toMatch(/"stack"/);
  }, 120_000);

  it('a Redis restart: 0 × 500, only 503 with Retry-After in the gap, one log line each way, then full service', async () => {
    const before = logText.length;
    const answers = await underLoad(async () => {
      await redis.stop();
      await new Promise((r) => setTimeout(r, 1500));
      await redis.start();
    });
    expectOnlyNormalOr503(answers);
    await recovered();
    await new Promise((r) => setTimeout(r, 2500));
    const log = logText.slice(before);
    expect(log.split('\n').filter((l) => /store unavailable/.test(l))).toHaveLength(1);
    expect(log.split('\n').filter((l) => /store is back/.test(l))).toHaveLength(1);
    expect(log).not.toMatch(/unexpected error/);
    expect(lines(/unexpected error/)).toHaveLength(0);
  }, 120_000);
});

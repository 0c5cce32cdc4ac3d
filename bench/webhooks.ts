/**
 * Audit webhook benchmark: what the outbox costs an audited change, and whether the worker keeps up with the changes.
 *
 *   npx tsx bench/webhooks.ts [--events=1000] [--subs=4] [--db=pglite,postgres]
 *
 * - The server is the build `npm start` runs (test/dist/launch.ts: the start script's flags, default logging,
 *   settings through the environment only, a fresh DATA_DIR or, with DATABASE_URL / BENCH_DATABASE_URL, a fresh
 *   PostgreSQL database), its own process, with its own webhook worker. Raised or allowed through env vars, as the
 *   output says: the API rate limit, and WEBHOOKS_ALLOW_INSECURE (the receiver is http on 127.0.0.1). Fixtures over
 *   HTTP: the first administrator (setup link, TOTP), an organisation, and --subs subscriptions to `organization.`
 *   (half partner-wide, half of the organisation), each with the secret its answer carries.
 * - The audited change is PATCH /orgs/organizations/:id (a rename), sequential. Its cost is timed with no
 *   subscription (the fan-out statement matches nothing: the ceiling, measured in the same run), then with the
 *   subscriptions (one delivery row each in the same transaction).
 * - While the changes are timed, the receiver (node:http in this process) holds each delivery for up to 5 s (under the
 *   sender's 10 s timeout), so the worker is parked and the write cost is the outbox's alone; then it answers all at
 *   once and every delivery after, and the backlog drain is timed: deliveries per second. The worker keeps up when
 *   that is at least the subscriptions × the changes per second measured with them.
 * - The receiver verifies every signature with the standardwebhooks library and each subscription's order: a bad
 *   signature, an event out of order, or a delivery still missing when none has come for 30 s fails the run (exit 1).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { Webhook } from 'standardwebhooks';
import { ensureBuilt, startFlags } from '../scripts/built-server.js';
import { firstAdmin } from '../test/dist/flows.js';
import { startBuiltServer } from '../test/dist/launch.js';
import type { ApiClient } from '../test/support/client.js';
import { arg, databases } from './harness.js';

const EVENTS = Number(arg('events', '1000'));
const SUBS = Number(arg('subs', '4'));
const HOLD_MS = 5_000;
const STALL_MS = 30_000;
/** Settings the benchmark changes from the defaults, through the environment, printed with the figures. */
const RAISED = { RATE_LIMIT_API: '100000000/60', WEBHOOKS_ALLOW_INSECURE: 'true' };

/** The verifying receiver: holds deliveries while `hold` is on (each for at most HOLD_MS), counts and checks them. */
function receiver() {
  const secrets = new Map<string, Webhook>();
  const seen = new Set<string>();
  const lastSequence = new Map<string, number>();
  const held = new Set<() => void>();
  const state = { hold: false, bad: 0, outOfOrder: 0, lastAt: 0 };
  const answer = (res: ServerResponse) => {
    if (!res.writableEnded) res.writeHead(204).end();
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      try {
        const { data } = JSON.parse(body) as { data: { webhookId: string; sequence: number } };
        secrets.get(data.webhookId)!.verify(body, req.headers as Record<string, string>);
        const id = req.headers['webhook-id'] as string;
        if (!seen.has(id)) {
          seen.add(id);
          if (data.sequence <= (lastSequence.get(data.webhookId) ?? 0)) state.outOfOrder++;
          lastSequence.set(data.webhookId, data.sequence);
        }
        state.lastAt = performance.now();
      } catch {
        state.bad++;
      }
      if (!state.hold) return answer(res);
      const release = () => {
        clearTimeout(timer);
        held.delete(release);
        answer(res);
      };
      const timer = setTimeout(release, HOLD_MS);
      held.add(release);
    });
  });
  return {
    secrets,
    state,
    received: () => seen.size,
    start: () =>
      new Promise<string>((r) =>
        server.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`)),
      ),
    release: () => {
      state.hold = false;
      for (const r of [...held]) r();
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** ms per audited change: `n` renames of the organisation, one after the other. */
async function renames(api: ApiClient, orgId: string, n: number, tag: string): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const res = await api.raw.patch(`/orgs/organizations/${orgId}`, { name: `Bench Org ${tag} ${i}` });
    if (res.status !== 200) throw new Error(`rename answered ${res.status}: ${res.text}`);
  }
  return (performance.now() - t0) / n;
}

const signed = (v: number, d = 2) => `${v < 0 ? '−' : '+'}${Math.abs(v).toFixed(d)}`;

interface Figures {
  db: string;
  baseline: number;
  withSubs: number;
  queued: number;
  leaked: number;
  drainSeconds: number;
  deliveriesPerSecond: number;
  bad: number;
  outOfOrder: number;
  missing: number;
}

async function measure(name: string, env: NodeJS.ProcessEnv): Promise<Figures> {
  const hooks = receiver();
  const url = await hooks.start();
  const server = await startBuiltServer(RAISED, { databaseUrl: env.DATABASE_URL, redisUrl: env.REDIS_URL });
  try {
    const admin = await firstAdmin(server);
    const org = await admin.api.raw.post('/orgs/organizations', { name: 'Bench Org' });
    if (org.status !== 201) throw new Error(`create organisation answered ${org.status}: ${org.text}`);
    const orgId = org.body.id as string;
    await renames(admin.api, orgId, Math.min(100, EVENTS), 'warm-up'); // JIT, connections, caches
    const baseline = await renames(admin.api, orgId, EVENTS, 'baseline');
    hooks.state.hold = true;
    for (let s = 0; s < SUBS; s++) {
      const res = await admin.api.raw.post('/webhooks', {
        url,
        events: ['organization.'],
        ...(s % 2 ? { orgId } : {}),
        description: `bench ${s}`,
      });
      if (res.status !== 201) throw new Error(`create webhook answered ${res.status}: ${res.text}`);
      hooks.secrets.set(res.body.id, new Webhook(res.body.secret));
    }
    const withSubs = await renames(admin.api, orgId, EVENTS, 'subscribed');
    const queued = EVENTS * SUBS;
    const leaked = hooks.received();
    const t0 = performance.now();
    hooks.release();
    // Until every delivery is in, or none came for STALL_MS (the worker stopped: what is left is counted missing).
    let progress = { at: t0, count: hooks.received() };
    while (hooks.received() < queued && performance.now() - progress.at < STALL_MS) {
      await new Promise((r) => setTimeout(r, 10));
      if (hooks.received() > progress.count) progress = { at: performance.now(), count: hooks.received() };
    }
    const drainSeconds = (hooks.state.lastAt - t0) / 1000;
    const delivered = hooks.received() - leaked;
    return {
      db: name,
      baseline,
      withSubs,
      queued,
      leaked,
      drainSeconds,
      deliveriesPerSecond: delivered / drainSeconds,
      bad: hooks.state.bad,
      outOfOrder: hooks.state.outOfOrder,
      missing: queued - hooks.received(),
    };
  } finally {
    hooks.release();
    await server.close();
    await hooks.close();
  }
}

async function main(): Promise<void> {
  ensureBuilt();
  const figures: Figures[] = [];
  for (const { name, env } of databases()) {
    process.stderr.write(`webhooks · ${name}: ${EVENTS} changes without, then with ${SUBS} subscriptions ... `);
    figures.push(await measure(name, env));
    process.stderr.write('done\n');
  }
  console.log(
    `\n## Audit webhooks (${EVENTS} audited changes, ${SUBS} subscriptions; ${os.availableParallelism()} cores, Node ${process.versions.node}, load ${os.loadavg()[0]!.toFixed(1)})\n`,
  );
  console.log(
    '| Database | change, no subscription (ceiling) | change, with subscriptions | outbox cost | deliveries (drain) | needed to keep up | Verdict (worker keeps up) | bad / out of order / missing |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---|---|');
  let failed = false;
  for (const f of figures) {
    const needed = SUBS * (1000 / f.withSubs);
    if (f.bad || f.outOfOrder || f.missing) failed = true;
    console.log(
      `| ${f.db} | ${f.baseline.toFixed(2)} ms | ${f.withSubs.toFixed(2)} ms | ${signed(f.withSubs - f.baseline)} ms (${signed((f.withSubs / f.baseline - 1) * 100, 0)} %) ` +
        `| ${f.queued - f.leaked} in ${f.drainSeconds.toFixed(2)} s = ${f.deliveriesPerSecond.toFixed(0)} /s | ${needed.toFixed(0)} /s | ${f.deliveriesPerSecond >= needed ? 'met' : 'NOT met'} ` +
        `| ${f.bad} / ${f.outOfOrder} / ${f.missing} |`,
    );
  }
  console.log(
    `\nDeliveries that went out while the receiver held them (one per subscription per ${HOLD_MS / 1000} s) are left out of the drain. ` +
      `The server is the build (node ${startFlags().join(' ')} dist/main.js, default logging); through env: ${Object.entries(
        RAISED,
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

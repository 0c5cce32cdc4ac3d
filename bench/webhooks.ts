/**
 * Audit webhook benchmark: what the outbox costs an audited change, and how fast the worker delivers.
 *
 *   npx tsx bench/webhooks.ts [--events=2000] [--subs=4]
 *   (PostgreSQL: DATABASE_URL=postgres://... npx tsx bench/webhooks.ts)
 *
 * - A fresh migrated database (the test template) and the real deps (audit writer, webhook worker, secret box).
 * - Audit write cost: --events records through the real writer, one transaction each, with no subscription in the
 *   partner (the fan-out statement matches nothing), then with --subs matching subscriptions (one delivery row each).
 * - Delivery throughput: the worker (as in the service: claim with lease + SKIP LOCKED, heads of each subscription
 *   side by side, in order within one) sends the --events × --subs deliveries to a local node:http receiver that
 *   verifies every signature with the standardwebhooks library; reported as deliveries per second.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { eq, sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';

const arg = (name: string, dflt: number) => {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? Number(hit.split('=')[1]) : dflt;
};
const EVENTS = arg('events', 2000);
const SUBS = arg('subs', 4);

const { prepareTemplate, freshDatabase } = await import('../test/support/db.js');
const { loadConfig } = await import('../src/config.js');
const { buildDeps } = await import('../src/deps.js');
const { createLogger } = await import('../src/platform/logger.js');
const { partners, organizations, webhooks, webhookDeliveries } = await import('../src/db/schema/index.js');
const { sealSecret, newSecret } = await import('../src/modules/webhooks/sender.js');

await prepareTemplate();
const testDb = await freshDatabase();
const config = loadConfig({
  NODE_ENV: 'test',
  LOG_LEVEL: 'warn',
  PUBLIC_URL: 'http://localhost:3999',
  APP_URL: 'http://localhost:3999',
  ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  WEBHOOKS_ALLOW_INSECURE: 'true',
  ...(testDb.url ? { DATABASE_URL: testDb.url } : { DATA_DIR: testDb.dataDir! }),
  ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
});
const deps = await buildDeps(config, testDb.database, createLogger('warn'));
const db = deps.db;
const store = testDb.url ? 'PostgreSQL' : 'PGlite';

// The receiver: verifies each signature, answers 204.
const secrets = new Map<string, Webhook>();
let received = 0;
let bad = 0;
const server = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c: string) => (body += c));
  req.on('end', () => {
    try {
      const hook = secrets.get(JSON.parse(body).data.webhookId)!;
      hook.verify(body, req.headers as Record<string, string>);
      received++;
    } catch {
      bad++;
    }
    res.writeHead(204).end();
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;

const [partner] = await db
  .insert(partners)
  .values({ name: 'Bench', slug: `bench-${randomBytes(3).toString('hex')}` })
  .returning();
const [org] = await db
  .insert(organizations)
  .values({ partnerId: partner!.id, name: 'Bench Org', slug: 'bench-org' })
  .returning();

async function writeEvents(n: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    await db.transaction((tx) =>
      deps.audit.record(
        tx,
        { action: 'device.update', partnerId: partner!.id, orgId: org!.id, resourceType: 'device', details: { i } },
        { ip: '203.0.113.9', userAgent: 'bench' },
      ),
    );
  }
  return (performance.now() - t0) / n;
}

// Audit write cost without, then with subscriptions (the worker is not running yet: deliveries wait in the outbox).
await writeEvents(Math.min(100, EVENTS)); // warm-up (JIT, connections)
const baseline = await writeEvents(EVENTS);
for (let s = 0; s < SUBS; s++) {
  const id = randomUUID();
  const secret = newSecret();
  secrets.set(id, new Webhook(secret));
  await db.insert(webhooks).values({
    id,
    partnerId: partner!.id,
    orgId: s % 2 ? org!.id : null,
    url,
    events: ['device.'],
    secretSealed: sealSecret(deps.box, id, secret),
  });
}
const withSubs = await writeEvents(EVENTS);
const queued = Number(
  ((await db.execute(sql`select count(*)::int as n from webhook_deliveries`)) as unknown as { rows: { n: number }[] })
    .rows[0]!.n,
);

// Delivery throughput.
const t0 = performance.now();
deps.webhooks.start();
while (received + bad < queued) {
  await new Promise((r) => setTimeout(r, 10));
  deps.webhooks.kick();
}
const seconds = (performance.now() - t0) / 1000;
await deps.webhooks.stop();
const pending = (
  await db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(eq(webhookDeliveries.status, 'pending'))
).length;

console.log(`webhooks on ${store} (${EVENTS} events, ${SUBS} subscriptions)`);
console.log(`| measure | value |\n|---|---|`);
console.log(`| audit write, no subscription | ${baseline.toFixed(2)} ms/record |`);
console.log(
  `| audit write, ${SUBS} matching subscriptions | ${withSubs.toFixed(2)} ms/record (+${(withSubs - baseline).toFixed(2)} ms) |`,
);
console.log(
  `| deliveries | ${queued} in ${seconds.toFixed(2)} s = ${(queued / seconds).toFixed(0)} /s (signatures verified: ${received}, refused: ${bad}, left pending: ${pending}) |`,
);

server.close();
await deps.store.close();
await testDb.drop();
if (bad || pending || received !== queued) process.exit(1);
process.exit(0);

/**
 * The blast-radius governor's overhead per decision, in process: what `Governor.charge` adds to a request (the by-id
 * rule and the evaluation API call it once per destructive decision).
 *
 *   npx tsx bench/governor.ts [--iterations=2000]      (PGlite; DATABASE_URL for PostgreSQL, REDIS_URL for Redis)
 *
 * Cases, each on a fresh principal per call (one request each):
 *   - a non-destructive permission (devices:read): never reaches the cache or the store;
 *   - a destructive permission (devices:delete) where no budget is set: one read of the per-epoch cache;
 *   - the same under a partner budget: one atomic count-and-mark in the budget store (the database's, under the
 *     principal's advisory lock, or Redis's script when REDIS_URL is set), on distinct devices of one organisation.
 * The budgets are large enough never to trip. Prints a markdown table of mean and p99 per call.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { GovernorCache } from '../src/access/governor-cache.js';
import { Governor } from '../src/access/governor.js';
import type { Principal } from '../src/access/principal.js';
import { organizations, partners } from '../src/db/schema/index.js';
import { type BudgetStore, DatabaseBudgetStore, RedisBudgetStore } from '../src/platform/budget-store.js';
import { systemClock } from '../src/platform/clock.js';
import { RedisStore } from '../src/platform/kv.js';
import { freshDatabase, prepareTemplate } from '../test/support/db.js';
import { arg } from './harness.js';

const iterations = Number(arg('iterations', '2000'));

function principal(partnerId: string, userId: string): Principal {
  return {
    actorType: 'user',
    userId,
    email: 'bench@example.test',
    sessionId: randomUUID(),
    serviceAccount: null,
    mfa: true,
    mfaEnabled: true,
    tenantKind: 'partner',
    partnerId,
    orgId: null,
    roleId: null,
    roleName: null,
    orgAccess: 'all',
    orgIds: [],
    siteIds: null,
    deviceGroupIds: null,
    permissions: new Set(['*:*']),
    security: {
      requireMfa: false,
      allowedMfaMethods: { totp: true, sms: true, passkey: true },
      phishingResistantOnly: false,
    },
    mfaEnrollmentRequired: false,
    authTime: null,
    mfaStepUpWaived: false,
    epoch: 0,
  };
}

async function measure(label: string, run: () => Promise<unknown>) {
  for (let i = 0; i < Math.min(200, iterations); i++) await run();
  const times: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const start = performance.now();
    await run();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  const p99 = times[Math.floor(times.length * 0.99)]!;
  console.log(`| ${label} | ${(mean * 1000).toFixed(1)} µs | ${(p99 * 1000).toFixed(1)} µs |`);
}

async function main() {
  await prepareTemplate();
  const test = await freshDatabase();
  const db = test.database.db;
  const redis = process.env.REDIS_URL ? RedisStore.connect(process.env.REDIS_URL, `bench:${randomUUID()}:`) : null;
  try {
    const [partner] = await db
      .insert(partners)
      .values({
        name: 'Bench MSP',
        slug: `bench-${randomUUID().slice(0, 8)}`,
        settings: {
          governor: { budget: { windowMinutes: 60, maxOrganizations: 1e6, maxDevices: 1e6, maxDestructive: 1e6 } },
        },
      })
      .returning();
    const [unmetered] = await db
      .insert(partners)
      .values({ name: 'Open MSP', slug: `open-${randomUUID().slice(0, 8)}` })
      .returning();
    const [org] = await db
      .insert(organizations)
      .values({ partnerId: partner!.id, name: 'Bench Org', slug: 'bench-org' })
      .returning();
    const store: BudgetStore = redis ? new RedisBudgetStore(redis.redis, 'bench:') : new DatabaseBudgetStore('bench:');
    const governor = new Governor({ store, cache: new GovernorCache(db), clock: systemClock, stepUpMaxAge: 600 });
    const user = randomUUID();
    console.log(
      `\nGovernor overhead per decision (${test.url ? 'PostgreSQL' : 'PGlite'}, budget store: ${store.kind}, ${iterations} calls)\n`,
    );
    console.log('| case | mean | p99 |\n|---|---|---|');
    await measure('devices:read (not destructive)', () =>
      governor.charge(db, principal(partner!.id, user), ['devices:read'], {
        orgId: org!.id,
        deviceIds: [randomUUID()],
      }),
    );
    await measure('devices:delete, no budget set', () =>
      governor.charge(db, principal(unmetered!.id, user), ['devices:delete'], {
        orgId: org!.id,
        deviceIds: [randomUUID()],
      }),
    );
    await measure('devices:delete under a budget', async () => {
      const r = await governor.charge(db, principal(partner!.id, user), ['devices:delete'], {
        orgId: org!.id,
        deviceIds: [randomUUID()],
      });
      if (!r?.allowed) throw new Error(`unexpected refusal: ${r?.detail}`);
    });
  } finally {
    await redis?.close();
    await test.drop();
  }
}

await main();

// Boots the real app, listening on loopback, on a fresh database. One per test file (beforeAll).
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { buildDeps, type Deps } from '../../src/deps.js';
import { TestClock } from '../../src/platform/clock.js';
import { createLogger } from '../../src/platform/logger.js';
import { freePort } from './addresses.js';
import { ApiClient } from './client.js';
import { freshDatabase, type TestDatabase } from './db.js';
import { testDns } from './dns.js';

export interface TestApp {
  baseUrl: string;
  app: FastifyInstance;
  deps: Deps;
  clock: TestClock;
  testDb: TestDatabase;
  /** Namespace of this app's keys in the shared store (rate limits, markers). */
  storePrefix: string;
  /** The environment the app was configured from. */
  env: Record<string, string>;
  /** A client with its own cookie jar. */
  client(): ApiClient;
  /** Every log line the app wrote, raw. */
  logs(): string;
  close(): Promise<void>;
}

export { freePort };

export interface StartOptions {
  /** Runs on the built app before it listens: a test's own hooks (e.g. a fault in an answer). */
  beforeListen?: (app: FastifyInstance) => void;
}

export async function startApp(env: Record<string, string> = {}, opts: StartOptions = {}): Promise<TestApp> {
  const testDb = await freshDatabase();
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const appEnv: Record<string, string> = {
    NODE_ENV: 'test',
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: origin,
    APP_URL: origin,
    DATA_DIR: testDb.dataDir ?? '/tmp/gatehouse-unused',
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    REDIS_URL: process.env.REDIS_URL ?? '',
    DATABASE_URL: testDb.url ?? '',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'info',
    // Domain proofs resolve through the test's own DNS server (test/support/dns.ts).
    DNS_SERVERS: (await testDns()).address,
    ...env,
  };
  const config = loadConfig(appEnv);
  let logText = '';
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logText += chunk.toString();
      if (process.env.TEST_LOG_ECHO) process.stderr.write(chunk);
      cb();
    },
  });
  const logger = createLogger(config.logLevel, sink);
  const clock = new TestClock();
  const storePrefix = `t:${randomBytes(6).toString('hex')}:`;
  const deps = await buildDeps(config, testDb.database, logger, { clock, storePrefix });
  const app = await createApp(deps);
  opts.beforeListen?.(app);
  // The port of the environment (a test may name its own, e.g. to start with only PORT set).
  await app.listen({ port: config.port, host: '127.0.0.1' });
  return {
    baseUrl: `http://localhost:${config.port}`,
    app,
    deps,
    clock,
    testDb,
    storePrefix,
    env: appEnv,
    client: () => new ApiClient(`http://localhost:${config.port}`),
    logs: () => logText,
    close: async () => {
      await app.close();
      await deps.store.close();
      await testDb.drop();
    },
  };
}

export interface PeerApp {
  baseUrl: string;
  deps: Deps;
  client(): ApiClient;
  close(): Promise<void>;
}

/**
 * A second instance of the service beside `t`: its own process-level state (deps, caches, store connection,
 * port) over the same database and the same shared-store namespace, as two replicas behind a load balancer.
 * `env` changes its configuration (a restarted replica with another key, say).
 */
export async function startPeer(t: TestApp, env: Record<string, string> = {}): Promise<PeerApp> {
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const config = loadConfig({
    ...t.env,
    ...env,
    PORT: String(port),
    // Both replicas serve the same public site; the peer just listens elsewhere.
    PUBLIC_URL: t.deps.config.publicUrl,
    APP_URL: t.deps.config.appUrl,
  });
  const logger = createLogger(config.logLevel, new Writable({ write: (_c, _e, cb) => cb() }));
  const deps = await buildDeps(config, t.testDb.database, logger, { clock: t.clock, storePrefix: t.storePrefix });
  const app = await createApp(deps);
  await app.listen({ port: config.port, host: '127.0.0.1' });
  return {
    baseUrl: `http://localhost:${config.port}`,
    deps,
    client: () => new ApiClient(origin),
    close: async () => {
      await app.close();
      await deps.store.close();
    },
  };
}

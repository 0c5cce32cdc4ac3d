// Process entry: config → database (migrated) → app → listen; graceful shutdown on SIGTERM/SIGINT.
import { createApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './db/connect.js';
import { buildDeps } from './deps.js';
import { createLogger } from './platform/logger.js';

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  const database = await openDatabase(config);
  await database.migrate();
  const deps = await buildDeps(config, database, logger);
  const app = await createApp(deps);
  await app.listen({ port: config.port, host: config.host });
  logger.info({ database: database.kind, store: deps.store.kind, publicUrl: config.publicUrl }, 'gatehouse ready');

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => {
      logger.error('shutdown took longer than 20 s; exiting');
      process.exit(1);
    }, 20_000);
    force.unref();
    // Idle keep-alive connections are closed once when close starts; a connection whose request was still in
    // flight would stay open after its response (keep-alive, 72 s) and hold the exit. Close them as they go idle.
    const sweep = setInterval(() => app.server.closeIdleConnections(), 100);
    try {
      await app.close().finally(() => clearInterval(sweep));
      await deps.store.close();
      await database.close();
      logger.info('shutdown complete');
      process.exit(0);
    } catch (err) {
      logger.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});

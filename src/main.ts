// Process entry: config → database (migrated) → app → listen; graceful shutdown on SIGTERM/SIGINT.
// `npm start` execs the compiled dist/main.js (`exec node`: no shell in between), so signals reach this process.
import { createServer } from 'node:net';
import type { DestinationStream } from 'pino';
import { ConfigError, loadConfig, type Config } from './config.js';
import { listenerMismatches, withListenPort } from './config-listener.js';
import { openDatabase } from './db/connect.js';
import { createLogger } from './platform/logger.js';
import { startFailure } from './platform/start-failure.js';

async function logDestination(config: Config): Promise<DestinationStream | undefined> {
  if (config.logFormat !== 'pretty') return undefined;
  try {
    const { default: pretty } = await import('pino-pretty');
    return pretty({ translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service', singleLine: true });
  } catch {
    throw new Error(
      'LOG_FORMAT=pretty needs the development dependency pino-pretty (npm install); or set LOG_FORMAT=json',
    );
  }
}

/** Probes the port (a busy one fails in a second); for PORT=0, the free port the system picked. */
function probePort(host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen({ host, port, exclusive: true }, () => {
      const picked = (probe.address() as { port: number }).port;
      probe.close(() => resolve(picked));
    });
  });
}

async function main() {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.oneLine());
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
  let step = 'configure logging';
  try {
    const logger = createLogger(config.logLevel, await logDestination(config));
    step = 'listen';
    // Fail in a second, not after opening the database; PORT=0 is fixed here so links can name the real port.
    config = withListenPort(config, await probePort(config.host, config.port));
    for (const hint of listenerMismatches(config)) logger.warn(hint);
    for (const warning of config.insecureSwitches) logger.warn(warning);
    step = 'open the database';
    const database = await openDatabase(config);
    step = 'apply the migrations';
    await database.migrate();
    step = 'build the service';
    // Loaded after the database is open: a refusal (data directory in use, database unreachable) comes quickly.
    const [{ buildDeps }, { createApp }, { issueSetupLink }] = await Promise.all([
      import('./deps.js'),
      import('./app.js'),
      import('./modules/setup/service.js'),
    ]);
    const deps = await buildDeps(config, database, logger);
    const app = await createApp(deps);
    step = 'listen';
    await app.listen({ port: config.port, host: config.host });
    logger.info(
      {
        api: `${config.publicUrl}/api/v1`,
        docs: `${config.publicUrl}/docs`,
        console: `${config.appUrl}/`,
        listen: `${config.host}:${config.port}`,
        mode: config.env,
        database: database.kind,
        store: deps.store.kind,
      },
      'gatehouse ready',
    );
    const link = await issueSetupLink(deps).catch((err: unknown) => {
      logger.error({ err }, 'could not create a setup link');
      return null;
    });
    // A plain line on stdout for the person at the terminal; a log shipper sees it too, so it is single-use,
    // lives one hour, is stored only as its hash, and stops being printed once a partner exists.
    if (link)
      process.stdout.write(
        `First run: create the first partner and administrator at ${link} (single use, valid 1 hour; or run: npx gatehouse setup --help)\n`,
      );

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
  } catch (err) {
    console.error(startFailure(err, step, config));
    process.exit(1);
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});

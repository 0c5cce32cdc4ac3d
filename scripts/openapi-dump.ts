// Writes the OpenAPI document the app serves at /openapi.json to a file (or stdout), for `npm run lint:openapi`
// and the console's client generator. Builds a real app on an in-memory embedded database; nothing listens.
//   tsx scripts/openapi-dump.ts [out.json]
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { Writable } from 'node:stream';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openPglite } from '../src/db/connect.js';
import { buildDeps } from '../src/deps.js';
import { createLogger } from '../src/platform/logger.js';

const out = process.argv[2];
const config = loadConfig({
  NODE_ENV: 'development',
  // The served document names the instance's own PUBLIC_URL; the dumped one a placeholder the linter accepts.
  PUBLIC_URL: 'https://gatehouse.invalid',
  APP_URL: 'https://gatehouse.invalid',
  DATA_DIR: '/nonexistent-openapi-dump',
  ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  LOG_LEVEL: 'error',
});
const database = await openPglite(undefined);
await database.migrate();
const logger = createLogger('error', new Writable({ write: (_c, _e, cb) => cb() }));
const deps = await buildDeps(config, database, logger);
const app = await createApp(deps);
const res = await app.inject({ method: 'GET', url: '/openapi.json' });
if (res.statusCode !== 200) throw new Error(`/openapi.json answered ${res.statusCode}: ${res.body}`);
const text = `${JSON.stringify(JSON.parse(res.body), null, 2)}\n`;
if (out) {
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, text);
} else process.stdout.write(text);
await app.close();
await database.close();
process.exit(0);

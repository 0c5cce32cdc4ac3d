// A start that fails says why in one line, naming the setting to change: never a raw stack for a known cause.
import { DataDirLockedError } from '../db/connect.js';

interface StartConfig {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl?: string;
  redisUrl?: string;
}

const codeOf = (err: unknown): string | undefined => {
  for (
    let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 5;
    e = e.cause as typeof e, depth++
  ) {
    if (typeof e.code === 'string') return e.code;
  }
  return undefined;
};

/** Where a connection string points, without its credentials. */
export function safeTarget(url: string | undefined): string {
  if (!url) return '(unset)';
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname}`;
  } catch {
    return '(unparsable)';
  }
}

export function startFailure(err: unknown, step: string, config: StartConfig): string {
  const code = codeOf(err);
  const message = err instanceof Error ? err.message : String(err);
  const fail = (text: string) => `gatehouse: cannot start: ${text}`;
  if (step === 'listen') {
    if (code === 'EADDRINUSE')
      return fail(
        `${config.host}:${config.port} is already in use by another process; set PORT to a free port (or stop the other process).`,
      );
    if (code === 'EACCES')
      return fail(`no permission to listen on ${config.host}:${config.port}; set PORT to a port above 1023.`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
      return fail(`${config.host} is not an address of this machine; set HOST (e.g. 127.0.0.1 or 0.0.0.0).`);
  }
  if (err instanceof DataDirLockedError)
    return fail(`${message} Stop that process or set DATA_DIR to another directory.`);
  if (
    config.databaseUrl &&
    (step === 'open the database' || step === 'apply the migrations' || step === 'build the service')
  ) {
    const target = safeTarget(config.databaseUrl);
    if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ETIMEDOUT' || code === 'EAI_AGAIN')
      return fail(`PostgreSQL at ${target} is unreachable (${code}); check DATABASE_URL and that the server runs.`);
    if (code === '28P01' || code === '28000')
      return fail(
        `PostgreSQL at ${target} refused the credentials (${code}); check the user and password in DATABASE_URL.`,
      );
    if (code === '3D000')
      return fail(`the database in DATABASE_URL (${target}) does not exist; create it or fix DATABASE_URL.`);
  }
  if (code === 'EACCES' || code === 'EROFS')
    return fail(
      `cannot write to the data directory ${config.dataDir} (${code}); set DATA_DIR to a writable directory.`,
    );
  if (/ENCRYPTION_KEY|no key .* to open this value/.test(message))
    return fail(
      `${message.split('\n')[0]}; the signing keys were sealed with another key: set ENCRYPTION_KEY (and ENCRYPTION_KEYS_PREVIOUS) to the key in use.`,
    );
  if (config.redisUrl && /redis/i.test(message))
    return fail(`Redis at ${safeTarget(config.redisUrl)}: ${message.split('\n')[0]}; check REDIS_URL.`);
  return fail(`${step} failed: ${message.split('\n')[0]}`);
}

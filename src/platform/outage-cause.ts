// Whether an error means "the database or the shared store is not there" (an outage), and its cause in words: one
// place, used by the HTTP layer (503 and one log line per outage) and by the background queues (one log line, no stack).

export type Dependency = 'database' | 'store';

/** Socket-level failures: the server is not there (refused, reset, unreachable, timed out). */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ECONNABORTED',
]);
/**
 * PostgreSQL SQLSTATEs that mean "the server cannot serve now", not "this statement is wrong": class 08
 * (connection exception), 57P01-57P03 (shutting down, crashed, starting up), 53300 (too many connections).
 */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[123]|53300)$/;
/** node-postgres and ioredis say it in words only. */
const UNAVAILABLE_MESSAGE =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Connection is closed|Reached the max retries per request|Stream isn't writeable|the database system is (starting up|shutting down|in recovery mode)/i;

export interface Outage {
  dependency: Dependency;
  cause: string;
}

function chain(err: unknown): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++)
    out.push(e as Record<string, unknown>);
  return out;
}

/** The outage an error reveals, or null when it is any other error (a bug stays a 500). */
export function classifyOutage(err: unknown): Outage | null {
  const links = chain(err);
  const hit = links.find((e) => {
    const code = typeof e.code === 'string' ? e.code : '';
    return (
      NETWORK_CODES.has(code) ||
      UNAVAILABLE_SQLSTATE.test(code) ||
      e.name === 'MaxRetriesPerRequestError' ||
      (typeof e.message === 'string' && UNAVAILABLE_MESSAGE.test(e.message))
    );
  });
  if (!hit) return null;
  const redis = links.some(
    (e) =>
      e.name === 'MaxRetriesPerRequestError' ||
      'command' in e ||
      /redis|Connection is closed|Stream isn't writeable|max retries per request/i.test(String(e.message ?? '')),
  );
  // The driver's reason only: a DrizzleQueryError's own message carries the statement's parameters.
  return {
    dependency: redis ? 'store' : 'database',
    cause:
      `${typeof hit.code === 'string' ? `${hit.code}: ` : ''}${String(hit.message ?? hit.name ?? 'unavailable')}`.slice(
        0,
        300,
      ),
  };
}

/** The innermost reason of any error, for a log line: a DrizzleQueryError's own message carries the parameters. */
export function driverReason(err: unknown): string {
  const last = chain(err).at(-1);
  if (!last) return String(err).slice(0, 300);
  const message = String(last.message ?? last.name ?? 'error').split('\nparams:')[0]!;
  return `${typeof last.code === 'string' ? `${last.code}: ` : ''}${message}`.slice(0, 300);
}

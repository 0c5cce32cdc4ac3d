// Counts the SQL statements an app sends, by wrapping the driver (node-postgres client, PGlite instance): what a
// flow costs in round trips, transaction control (BEGIN, COMMIT) included. Used by tests and bench/login.ts.
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { Database } from '../../src/db/connect.js';

export interface StatementLog {
  /** Statements seen since the last reset, first line of each, named ones as `name: text`. */
  statements(): string[];
  reset(): void;
  /** Puts the driver back as it was. */
  restore(): void;
}

/** The first line of a statement; a PGlite EXECUTE loses its arguments (literal values: a token hash, an address). */
const firstLine = (text: unknown) =>
  String(text ?? '')
    .trim()
    .split('\n')[0]!
    .replace(/\s+/g, ' ')
    .replace(/^(execute \w+) \(.*$/i, '$1 (…)')
    .slice(0, 160);

function describeQuery(arg: unknown): string {
  if (typeof arg === 'string') return firstLine(arg);
  const config = arg as { name?: string; text?: string } | null;
  if (config?.name) return `${config.name}: ${firstLine(config.text)}`;
  return firstLine(config?.text);
}

/** The background workers (webhook deliveries, mail outbox) lease work through the same driver: not a request's. */
export const isBackground = (statement: string) => /"(webhook_deliveries|mail_outbox)" set "attempts"/.test(statement);

export function countStatements(database: Database): StatementLog {
  const seen: string[] = [];
  const log = {
    statements: () => [...seen],
    reset: () => void seen.splice(0),
  };
  if (database.kind === 'postgres') {
    const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
    const original = proto.query;
    proto.query = function (this: unknown, ...args: unknown[]) {
      seen.push(describeQuery(args[0]));
      return original.apply(this, args);
    };
    return { ...log, restore: () => void (proto.query = original) };
  }
  const client = (database.db as unknown as { $client: PGlite }).$client;
  const { query, exec, transaction } = client;
  const wrapped = <T extends object>(target: T): T => {
    const q = (target as unknown as PGlite).query.bind(target);
    const e = (target as unknown as PGlite).exec.bind(target);
    return Object.assign(Object.create(target) as T, {
      query: (text: string, ...rest: unknown[]) => (
        seen.push(firstLine(text)), (q as (...a: unknown[]) => unknown)(text, ...rest)
      ),
      exec: (text: string, ...rest: unknown[]) => (
        seen.push(firstLine(text)), (e as (...a: unknown[]) => unknown)(text, ...rest)
      ),
    });
  };
  Object.assign(client, {
    query: (text: string, ...rest: unknown[]) => (
      seen.push(firstLine(text)), (query as (...a: unknown[]) => unknown).call(client, text, ...rest)
    ),
    exec: (text: string, ...rest: unknown[]) => (
      seen.push(firstLine(text)), (exec as (...a: unknown[]) => unknown).call(client, text, ...rest)
    ),
    transaction: (fn: (tx: object) => Promise<unknown>) => {
      seen.push('BEGIN');
      return (transaction as (f: (tx: object) => Promise<unknown>) => Promise<unknown>)
        .call(client, (tx) => fn(wrapped(tx)))
        .finally(() => seen.push('COMMIT'));
    },
  });
  return { ...log, restore: () => void Object.assign(client, { query, exec, transaction }) };
}

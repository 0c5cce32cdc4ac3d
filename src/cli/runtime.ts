// What every `gatehouse` command shares: the configuration, the database (refused beside a running server on the
// same PGlite directory), the `cli` audit actor, output as text or --json, progress on stderr, exit codes.
import { hostname, userInfo } from 'node:os';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { DataDirLockedError, openDatabase, type Database } from '../db/connect.js';
import { AppError } from '../http/errors.js';
import type { AuditActor } from '../modules/audit/writer.js';
import { safeTarget } from '../platform/start-failure.js';

export const EXIT = { ok: 0, failed: 1, unavailable: 2, usage: 64, config: 78 } as const;

/** A refusal that ends the command with one line and an exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failed,
    readonly code?: string,
  ) {
    super(message);
  }
}

export interface OutputOptions {
  json?: boolean;
}

export function cliActor(): AuditActor {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    /* no passwd entry (containers) */
  }
  return { userId: null, email: null, type: 'cli', name: `${user}@${hostname()}`.slice(0, 200) };
}

export function config(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message, EXIT.config, 'invalid_configuration');
    throw err;
  }
}

export async function withDatabase<T>(cfg: Config, work: (database: Database) => Promise<T>): Promise<T> {
  let database: Database;
  try {
    database = await openDatabase(cfg);
  } catch (err) {
    if (err instanceof DataDirLockedError)
      throw new CliError(
        `the embedded database in ${cfg.dataDir} is held by a running Gatehouse server (${err.message.match(/process (\d+)/)?.[0] ?? 'another process'}): stop the server first (two processes on one PGlite directory lose writes), or run against PostgreSQL (DATABASE_URL).`,
        EXIT.unavailable,
        'data_dir_locked',
      );
    const where = cfg.databaseUrl
      ? `PostgreSQL at ${safeTarget(cfg.databaseUrl)} (DATABASE_URL)`
      : `the embedded database in ${cfg.dataDir} (DATA_DIR)`;
    throw new CliError(
      `cannot open ${where}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
      EXIT.unavailable,
      'database_unavailable',
    );
  }
  try {
    return await work(database);
  } finally {
    await database.close();
  }
}

/** Progress of a long command, on stderr so that stdout stays the result (and valid JSON with --json). */
export function progress(text: string): void {
  if (process.stderr.isTTY) process.stderr.write(`\r\x1b[2K${text}`);
  else process.stderr.write(`${text}\n`);
}
export function progressDone(): void {
  if (process.stderr.isTTY) process.stderr.write('\n');
}

/** Prints the result: JSON (one document) or the text lines. */
export function output(opts: OutputOptions, result: unknown, lines: string[]): void {
  if (opts.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else process.stdout.write(`${lines.join('\n')}\n`);
}

/** Ends the process with the command's outcome; a known refusal is one line (or a JSON error with --json). */
export function fail(err: unknown, json: boolean): number {
  let message: string;
  let code: string;
  let exitCode: number = EXIT.failed;
  if (err instanceof CliError) {
    message = err.message;
    code = err.code ?? 'failed';
    exitCode = err.exitCode;
  } else if (err instanceof AppError) {
    message = err.code === 'weak_password' ? `${err.message} ${feedbackOf(err)}`.trim() : err.message;
    code = err.code;
  } else {
    message = err instanceof Error ? (err.stack ?? err.message) : String(err);
    code = 'internal_error';
    exitCode = EXIT.unavailable;
  }
  if (json) process.stdout.write(`${JSON.stringify({ ok: false, code, message })}\n`);
  else process.stderr.write(`gatehouse: ${message}\n`);
  return exitCode;
}

function feedbackOf(err: AppError): string {
  const fb = (err.extra.details as { feedback?: { warning?: string | null; suggestions?: string[] } } | undefined)
    ?.feedback;
  return [fb?.warning, ...(fb?.suggestions ?? [])].filter(Boolean).join(' ');
}

export async function readStdinLine(): Promise<string> {
  if (process.stdin.isTTY)
    throw new CliError(
      '--password-stdin reads the password from standard input: pipe it in (e.g. from a secrets manager).',
      EXIT.usage,
      'usage',
    );
  let data = '';
  for await (const chunk of process.stdin) data += chunk.toString();
  return data.replace(/\r?\n$/, '');
}

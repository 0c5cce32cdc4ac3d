// `gatehouse` as an operator runs it: a child process (the CLI compiled from the current sources, as `npm run build`
// does, into node_modules/.cache for this test file) against a fresh database of its own (PGlite directory or PostgreSQL database cloned from the migrated template). On PGlite the test opens the
// directory only between runs (one process at a time holds it).
import { execFileSync, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { openPglite, type Database } from '../../src/db/connect.js';
import { freshDatabase, type TestDatabase } from '../support/db.js';

export const ROOT = join(import.meta.dirname, '..', '..');

let compiled: string | null = null;
/** Compiles src/ once per test file (esbuild, ~1 s) so that each run starts like the installed CLI. */
function compiledCli(): string {
  if (compiled) return compiled;
  const outdir = join(ROOT, 'node_modules', '.cache', `gatehouse-cli-test-${process.pid}`);
  execFileSync(process.execPath, ['scripts/build-server.mjs', '--outdir', outdir], { cwd: ROOT, stdio: 'inherit' });
  process.on('exit', () => rmSync(outdir, { recursive: true, force: true }));
  compiled = join(outdir, 'cli', 'main.js');
  return compiled;
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  json<T = any>(): T;
}

export interface CliDb {
  env: Record<string, string>;
  run(args: string[], opts?: { stdin?: string; env?: Record<string, string> }): Promise<CliRun>;
  /** The database for assertions, between runs. */
  inspect<T>(work: (database: Database) => Promise<T>): Promise<T>;
  drop(): Promise<void>;
}

export async function cliDatabase(): Promise<CliDb> {
  const testDb: TestDatabase = await freshDatabase();
  if (testDb.dataDir) await testDb.database.close(); // the CLI must be able to take the directory
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    PUBLIC_URL: 'http://localhost:3999',
    APP_URL: 'http://localhost:3999',
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    ...(testDb.url ? { DATABASE_URL: testDb.url } : { DATA_DIR: testDb.dataDir! }),
  };
  return {
    env,
    run: (args, opts = {}) => runCli(args, { ...env, ...opts.env }, opts.stdin),
    async inspect(work) {
      if (!testDb.dataDir) return work(testDb.database);
      const database = await openPglite(testDb.dataDir);
      try {
        return await work(database);
      } finally {
        await database.close();
      }
    },
    drop: async () => {
      if (testDb.dataDir)
        await import('node:fs').then((fs) => fs.rmSync(testDb.dataDir!, { recursive: true, force: true }));
      else await testDb.drop();
    },
  };
}

export function runCli(args: string[], env: Record<string, string>, stdin?: string): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [compiledCli(), ...args], {
      cwd: ROOT,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.stdin.end(stdin ?? '');
    child.on('close', (code) =>
      resolve({
        code,
        stdout,
        stderr,
        json: () => {
          try {
            return JSON.parse(stdout);
          } catch {
            throw new Error(`not JSON (exit ${code}):\n${stdout}\n--- stderr\n${stderr}`);
          }
        },
      }),
    );
  });
}

export const rowsOf = <T>(result: unknown): T[] => (result as { rows?: T[] }).rows ?? (result as T[]);
export const STRONG = 'Harbour-lantern-7-quietly!';

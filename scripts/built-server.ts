// The server that `npm start` runs, for the tests and benchmarks that drive it as its own process: where the build is,
// rebuilding it when the sources are newer, and the command line package.json's start script gives node.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The build under test: GATEHOUSE_DIST_DIR (another build, e.g. a deliberately broken one), else dist/. */
export function distDir(): string {
  return resolve(ROOT, process.env.GATEHOUSE_DIST_DIR || 'dist');
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/** True when dist/ is missing or older than any file of src/ or the build script. */
export function distIsStale(): boolean {
  const stamp = join(ROOT, 'dist', 'BUILD');
  if (!existsSync(join(ROOT, 'dist', 'main.js')) || !existsSync(stamp)) return true;
  const sources = Math.max(newestMtime(join(ROOT, 'src')), statSync(join(ROOT, 'scripts', 'build-server.mjs')).mtimeMs);
  return statSync(stamp).mtimeMs < sources;
}

/**
 * Rebuilds dist/ (and web/dist when it is missing) unless GATEHOUSE_DIST_DIR names another build. Under a lock: two
 * runs at once must not delete the chunks of a server the other one is running.
 */
export function ensureBuilt(): void {
  if (process.env.GATEHOUSE_DIST_DIR) {
    if (!existsSync(join(distDir(), 'main.js'))) throw new Error(`GATEHOUSE_DIST_DIR: no main.js in ${distDir()}`);
    return;
  }
  const lock = '/tmp/gatehouse-dist-build.lock';
  if (distIsStale())
    execFileSync('flock', [lock, process.execPath, 'scripts/build-server.mjs'], { cwd: ROOT, stdio: 'inherit' });
  if (!existsSync(join(ROOT, 'web', 'dist', 'index.html')))
    execFileSync('flock', [lock, 'npx', 'vite', 'build', '--config', 'web/vite.config.ts', '--logLevel', 'warn'], {
      cwd: ROOT,
      stdio: 'inherit',
    });
}

/**
 * The V8 flags `npm start` gives node (package.json's start script: `exec node <flags> dist/main.js`), so a spawned
 * server runs as the product does. BENCH_NODE_FLAGS replaces them for an A/B (`BENCH_NODE_FLAGS= ` for none).
 */
export function startFlags(): string[] {
  const given = process.env.BENCH_NODE_FLAGS;
  if (given !== undefined) return given.split(/\s+/).filter(Boolean);
  const start = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts
    .start;
  const m = /\bnode\s+((?:--\S+\s+)*)dist\/main\.js/.exec(start);
  if (!m) throw new Error(`package.json start script not understood: ${start}`);
  return m[1]!.split(/\s+/).filter(Boolean);
}

/** argv of the server as `npm start` runs it, from the build under test. */
export function serverCommand(): string[] {
  return [process.execPath, ...startFlags(), join(distDir(), 'main.js')];
}

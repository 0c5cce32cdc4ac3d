// `npm run build:server`: the server and the CLI compiled to dist/ (esbuild: no type check here, `npm run typecheck`
// does that). Our code is bundled (one file read instead of hundreds at start); packages stay external and are
// loaded from node_modules; dynamic imports become chunks loaded on first use. Migrations are copied beside them.
// `--outdir DIR` builds elsewhere (the CLI tests compile the current sources once per run).
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const at = process.argv.indexOf('--outdir');
const outdir = at > 0 ? process.argv[at + 1] : 'dist';
rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: { main: 'src/main.ts', 'cli/main': 'src/cli/main.ts' },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  packages: 'external',
  sourcemap: true,
  chunkNames: 'chunks/[name]-[hash]',
  logLevel: 'warning',
});
cpSync('src/db/migrations', join(outdir, 'migrations'), { recursive: true });
writeFileSync(join(outdir, 'BUILD'), `${new Date().toISOString()}\n`);

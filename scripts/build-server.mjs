// `npm run build:server`: the server and the CLI compiled to dist/ (esbuild: no type check here, `npm run typecheck`
// does that). Our code and the pure-JavaScript packages are bundled: Node resolved, read and compiled ~1,200 files at
// start (~0.3 s of CPU, issue 15 P6); dynamic imports become chunks loaded on first use. Packages that read files
// beside themselves (wasm, native addons, worker scripts, static assets) stay external and load from node_modules.
// Migrations are copied beside the output.
// `--outdir DIR` builds elsewhere (the CLI tests compile the current sources once per run).
// Beside them goes pgdata-<PGlite version>.tgz: an initdb'd, empty PGlite data directory that a first start on an
// empty DATA_DIR unpacks instead of running initdb (~3-6 s and ~800 MB peak here; src/db/connect.ts). It is made once
// per PGlite version and kept in node_modules/.cache/gatehouse.
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';

const at = process.argv.indexOf('--outdir');
const EXTERNAL = [
  '@electric-sql/pglite', // pglite.wasm, pglite.data, initdb.wasm beside it
  '@node-rs/argon2', // native addon
  'pino', // worker-thread transports by file name (pino-pretty, thread-stream)
  'pino-pretty',
  '@fastify/swagger-ui', // the UI's static files
  'pg-native', // pg's optional native binding
  // Loaded with import() on first use (src: zxcvbn, SAML, WebAuthn, mail, QR codes, OpenID, phone numbers): kept out
  // of the bundle, as a CommonJS package bundled into a split chunk keeps only its default export.
  '@zxcvbn-ts/core',
  '@zxcvbn-ts/language-common',
  '@zxcvbn-ts/language-en',
  '@node-saml/node-saml',
  '@simplewebauthn/server',
  'nodemailer',
  'qrcode',
  'openid-client',
  'libphonenumber-js',
];
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
  external: EXTERNAL.flatMap((p) => [p, `${p}/*`]),
  // Bundled CommonJS calls require() (node: built-ins, optional peers): give each ESM chunk one.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
  sourcemap: true,
  // Whitespace and syntax only (names stay, so stack traces read): V8 keeps each script's source; 14 MB less RSS,
  // the same start CPU (A/B). Identifier mangling cost 7 % more start CPU with keepNames.
  minifyWhitespace: true,
  minifySyntax: true,
  chunkNames: 'chunks/[name]-[hash]',
  logLevel: 'warning',
});
cpSync('src/db/migrations', join(outdir, 'migrations'), { recursive: true });
cpSync(await pgdataTemplate(), join(outdir, templateName()), { force: true });
writeFileSync(join(outdir, 'BUILD'), `${new Date().toISOString()}\n`);

function templateName() {
  const pkg = JSON.parse(
    readFileSync(
      join(dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')), '..', 'package.json'),
      'utf8',
    ),
  );
  return `pgdata-${pkg.version}.tgz`;
}

async function pgdataTemplate() {
  const cached = join('node_modules', '.cache', 'gatehouse', templateName());
  if (existsSync(cached)) return cached;
  const { PGlite } = await import('@electric-sql/pglite');
  const pg = await PGlite.create(); // in memory: initdb, then the server on it
  await pg.exec('CHECKPOINT'); // the unpacked copy then opens without crash recovery
  const tarball = await pg.dumpDataDir('gzip');
  await pg.close();
  mkdirSync(dirname(cached), { recursive: true });
  const building = `${cached}.${process.pid}`;
  writeFileSync(building, Buffer.from(await tarball.arrayBuffer()));
  renameSync(building, cached); // two builds at once: each writes its own, the last rename wins, both are whole
  return cached;
}

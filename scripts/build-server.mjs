// `npm run build:server`: the server and the CLI compiled to dist/ (esbuild: no type check here, `npm run typecheck`
// does that). Our code and the pure-JavaScript packages it loads at start are bundled: Node resolved, read and compiled
// ~1,200 files at start otherwise. Migrations are copied beside the output.
//
// Which packages stay external (loaded from node_modules at run time), decided from the module graph on every build:
// 1. packages that read files beside themselves (wasm, native addons, worker scripts, static assets): listed below;
// 2. every package whose CommonJS any module (ours or a dependency's) loads with `import()`: with code splitting, a
//    CommonJS module bundled into a split chunk keeps only its default export (`@fastify/cookie`'s `import('cookie')`
//    lost `stringifySetCookie` that way). An ES module loaded with `import()` becomes a chunk that exports what the
//    module exports; the tests of the built server (test/dist/) load each such chunk through the route that needs it;
// 3. every package whose own code names `__dirname`, `__filename`, `require.resolve` or `import.meta.url`, or calls
//    `require()`/`import()` with a computed argument: bundled, these point at dist/ instead of the package;
// 4. every package a module imports only for its side effects while it also imports an external one: imports of
//    external packages are hoisted above bundled code, so the side effect would come too late.
// `--report` prints each package so kept external and why. `--outdir DIR` builds elsewhere; `--naive` builds with
// only list 1 (the rule switched off: the artefact tests must then fail, which is how CI proves they can); `--plain`
// bundles none of the packages (our code only), to measure what the bundle saves.
// Beside the output goes pgdata-<PGlite version>.tgz: an initdb'd, empty PGlite data directory that a first start on an
// empty DATA_DIR unpacks instead of running initdb (~3-6 s and ~800 MB peak here; src/db/connect.ts). It is made once
// per PGlite version and kept in node_modules/.cache/gatehouse.
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';

const argAt = (name) => process.argv.indexOf(name);
const FILES_BESIDE = [
  '@electric-sql/pglite', // pglite.wasm, pglite.data, initdb.wasm beside it
  '@node-rs/argon2', // native addon
  'pino', // worker-thread transports by file name (pino-pretty, thread-stream)
  'pino-pretty',
  '@fastify/swagger-ui', // the UI's static files
  'pg-native', // pg's optional native binding
];
const outdir = argAt('--outdir') > 0 ? process.argv[argAt('--outdir') + 1] : 'dist';
const naive = argAt('--naive') > 0;
// Our code only: every npm package is loaded from node_modules at run time, as tsc output would.
const plain = argAt('--plain') > 0;

const options = {
  entryPoints: { main: 'src/main.ts', 'cli/main': 'src/cli/main.ts' },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  // Bundled CommonJS calls require() (node: built-ins, external packages): give each ESM chunk one.
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
  ...(plain ? { packages: 'external' } : {}),
};
const asExternal = (names) => [...names].flatMap((p) => [p, `${p}/*`]);

const kept = new Map(FILES_BESIDE.map((p) => [p, 'reads files beside itself']));
if (!naive && !plain) {
  // Until nothing changes: a package made external takes its own imports out of the graph, never adds any.
  for (let changed = true; changed; ) {
    changed = false;
    const { metafile } = await build({ ...options, external: asExternal(kept.keys()), metafile: true, write: false });
    for (const [path, input] of Object.entries(metafile.inputs)) {
      for (const imp of input.imports) {
        if (imp.kind !== 'dynamic-import' || imp.external || metafile.inputs[imp.path]?.format === 'esm') continue;
        const target = packageOf(imp.path);
        if (target && !kept.has(target)) {
          kept.set(target, `import() of its CommonJS by ${packageOf(path) ?? path}`);
          changed = true;
        }
      }
      for (const name of sideEffectsBeforeExternal(path, input)) {
        if (!kept.has(name)) {
          kept.set(name, `imported for its side effects beside an external package by ${packageOf(path) ?? path}`);
          changed = true;
        }
      }
      const pkg = packageOf(path);
      if (!pkg || kept.has(pkg)) continue;
      const why = locationDependent(readFileSync(path, 'utf8'));
      if (why) {
        kept.set(pkg, `${why} in ${path.slice(path.lastIndexOf('node_modules/') + 13)}`);
        changed = true;
      }
    }
    for (const [importer, name] of otherCopies(metafile)) {
      if (!kept.has(importer)) {
        kept.set(importer, `imports ${name}, which is external, from a copy of its own`);
        changed = true;
      }
    }
  }
}
if (argAt('--report') > 0) for (const [pkg, why] of [...kept].sort()) console.log(`external ${pkg}: ${why}`);

rmSync(outdir, { recursive: true, force: true });
await build({ ...options, external: asExternal(kept.keys()) });
cpSync('src/db/migrations', join(outdir, 'migrations'), { recursive: true });
cpSync(await pgdataTemplate(), join(outdir, templateName()), { force: true });
writeFileSync(join(outdir, 'BUILD'), `${new Date().toISOString()}\n`);
writeFileSync(join(outdir, 'EXTERNAL.json'), `${JSON.stringify(Object.fromEntries(kept), null, 2)}\n`);

/** Bundled packages that import an external package which, from dist/, would resolve to another copy than the one
 * the importer loads (npm may nest another version under it): [importer package, imported package]. */
function otherCopies(metafile) {
  const found = [];
  const fromDist = createRequire(join(process.cwd(), outdir, 'main.js'));
  for (const [path, input] of Object.entries(metafile.inputs)) {
    if (!path.includes('node_modules/')) continue;
    const fromImporter = createRequire(join(process.cwd(), path));
    for (const imp of input.imports) {
      if (!imp.external || imp.path.startsWith('node:')) continue;
      const name = imp.path.startsWith('@') ? imp.path.split('/').slice(0, 2).join('/') : imp.path.split('/')[0];
      if (!kept.has(name)) continue; // a Node built-in named without node:
      const root = (req) => {
        try {
          return dirname(req.resolve(`${name}/package.json`));
        } catch {
          return packageRoot(req, name);
        }
      };
      if (root(fromImporter) !== root(fromDist)) found.push([packageOf(path), name]);
    }
  }
  return found;
}

/**
 * Packages a module imports only for their side effects (`import 'reflect-metadata'`) when it also imports an external
 * package: the external import is hoisted above all bundled code, so it would run before the side effect it relies on
 * (@simplewebauthn/server sets up reflect-metadata for @peculiar/x509's tsyringe that way). External too, both
 * imports stay in source order.
 */
function sideEffectsBeforeExternal(path, input) {
  if (!input.imports.some((i) => i.external && i.kind === 'import-statement' && !i.path.startsWith('node:'))) return [];
  const names = [];
  for (const m of readFileSync(path, 'utf8').matchAll(/(?:^|;)\s*import\s*['"]([^'"./][^'"]*)['"]/gm)) {
    const spec = m[1];
    if (spec.startsWith('node:')) continue;
    names.push(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);
  }
  return names;
}

/** A package's directory when its exports map hides package.json. */
function packageRoot(req, name) {
  try {
    const main = req.resolve(name);
    return main.slice(0, main.lastIndexOf(`node_modules/${name}/`) + 13 + name.length);
  } catch {
    return null; // not installed (an optional peer such as pg-native): absent from both
  }
}

/** The npm package a module path belongs to (the innermost node_modules), or null for our own sources. */
function packageOf(path) {
  const at = path.lastIndexOf('node_modules/');
  if (at < 0) return null;
  const parts = path.slice(at + 13).split('/');
  return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

/** Why a module's code would mean something else once moved into dist/ (comments included: a false alarm only keeps
 * a package external). */
function locationDependent(source) {
  for (const word of ['__dirname', '__filename', 'require.resolve', 'import.meta.url']) {
    if (source.includes(word)) return word;
  }
  if (/(?<![.\w$])require\(\s*[^'"`)\s]/.test(source)) return 'require() of a computed name';
  if (/(?<![.\w$])import\(\s*[^'"`)\s]/.test(source)) return 'import() of a computed name';
  return null;
}

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

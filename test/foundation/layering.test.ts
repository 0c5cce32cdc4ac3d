// The layering check (npm run lint:deps, docs/architecture.md) fails on each rule it holds, and passes on the tree.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const SCRIPT = join(ROOT, 'scripts/lint-deps.mjs');
let dir: string;

/** A tiny tree with one file per layer and nothing wrong; each case adds one file that breaks one rule. */
const CLEAN: Record<string, string> = {
  'src/db/schema/index.ts': 'export const t = 1;\n',
  'src/db/tenant-filter.ts':
    "import { eq } from 'drizzle-orm';\nimport { t } from './schema/index.js';\nexport const f = () => [eq, t];\n",
  'src/platform/clock.ts': 'export const now = () => 0;\n',
  'src/access/decision.ts':
    "import { now } from '../platform/clock.js';\nimport { f } from '../db/tenant-filter.js';\nexport const d = () => [now, f];\n",
  'src/access/repo.ts':
    "import { eq } from 'drizzle-orm';\nimport { t } from '../db/schema/index.js';\nexport const q = () => [eq, t];\n",
  'src/http/guards.ts':
    "import { now } from '../platform/clock.js';\nimport { d } from '../access/decision.js';\nexport const g = () => [now, d];\n",
  'src/modules/a/index.ts': "export { find } from './repo.js';\n",
  'src/modules/a/repo.ts':
    "import { eq } from 'drizzle-orm';\nimport { t } from '../../db/schema/index.js';\nexport const find = () => [eq, t];\n",
  'src/modules/b/service.ts':
    "import { find } from '../a/index.js';\nimport { g } from '../../http/guards.js';\nexport const s = () => [find, g];\n",
};

function lint(extra: Record<string, string> = {}) {
  rmSync(join(dir, 'src'), { recursive: true, force: true });
  rmSync(join(dir, 'web'), { recursive: true, force: true });
  for (const [path, text] of Object.entries({ ...CLEAN, ...extra })) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const r = spawnSync(process.execPath, [SCRIPT], { cwd: dir, encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gh-layering-'));
  copyFileSync(join(ROOT, '.dependency-cruiser.cjs'), join(dir, '.dependency-cruiser.cjs'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n');
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true },
      include: ['src'],
    }),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the layering check', { timeout: 120_000 }, () => {
  it('passes a tree that keeps the rules', () => {
    const r = lint();
    expect(r.out).toContain('no new violation');
    expect(r.status).toBe(0);
  });

  it.each([
    [
      'http-not-to-modules',
      { 'src/http/meta.ts': "import { find } from '../modules/a/index.js';\nexport const m = find;\n" },
    ],
    [
      'access-core-down-only',
      { 'src/access/scope.ts': "import { g } from '../http/guards.js';\nexport const s = g;\n" },
    ],
    [
      'access-core-down-only',
      { 'src/access/scope.ts': "import { find } from '../modules/a/index.js';\nexport const s = find;\n" },
    ],
    [
      'db-platform-not-up',
      { 'src/db/tenant-filter.ts': "import { d } from '../access/decision.js';\nexport const f = d;\n" },
    ],
    [
      'sql-only-in-db-and-repos',
      { 'src/access/scope.ts': "import { sql } from 'drizzle-orm';\nexport const s = sql;\n" },
    ],
    ['db-platform-not-up', { 'src/platform/mail.ts': "import { g } from '../http/guards.js';\nexport const m = g;\n" }],
    [
      'db-platform-not-up',
      { 'src/db/connect.ts': "import { find } from '../modules/a/index.js';\nexport const c = find;\n" },
    ],
    [
      'module-internals',
      { 'src/modules/c/service.ts': "import { find } from '../a/repo.js';\nexport const c = find;\n" },
    ],
    [
      'sql-only-in-db-and-repos',
      { 'src/modules/c/service.ts': "import { sql } from 'drizzle-orm';\nexport const c = sql;\n" },
    ],
    [
      'sql-only-in-db-and-repos',
      { 'src/http/step-up.ts': "import { t } from '../db/schema/index.js';\nexport const c = t;\n" },
    ],
    [
      'no-module-cycles',
      {
        'src/modules/a/uses-b.ts': "import type { s } from '../b/index.js';\nexport type S = typeof s;\n",
        'src/modules/b/index.ts': "export { s } from './service.js';\n",
      },
    ],
    // Three modules in a loop (b → a → c → b): no two of them import each other, and the loop still fails.
    [
      'no-module-cycles',
      {
        'src/modules/a/uses-c.ts': "import { c } from '../c/index.js';\nexport const u = c;\n",
        'src/modules/c/index.ts': "import { s } from '../b/index.js';\nexport const c = () => s;\n",
        'src/modules/b/index.ts': "export { s } from './service.js';\n",
      },
    ],
    [
      'web-no-circles',
      {
        'web/src/pages/Shell.tsx': "import { Users } from './Users';\nexport const useMe = () => Users;\n",
        'web/src/pages/Users.tsx': "import { useMe } from './Shell';\nexport const Users = () => useMe;\n",
      },
    ],
  ])('fails on %s', (rule, extra) => {
    const r = lint(extra);
    expect(r.out).toContain(`${rule}:`);
    expect(r.status).toBe(1);
  });

  it('names every module of a longer loop, in the order of its imports', () => {
    const r = lint({
      'src/modules/a/uses-c.ts': "import { c } from '../c/index.js';\nexport const u = c;\n",
      'src/modules/c/index.ts': "import { d } from '../d/index.js';\nexport const c = d;\n",
      'src/modules/d/index.ts': "import { s } from '../b/index.js';\nexport const d = () => s;\n",
      'src/modules/b/index.ts': "export { s } from './service.js';\n",
    });
    expect(r.out).toContain('no-module-cycles: a → c → d → b → a');
    expect(r.status).toBe(1);
  });

  it('passes modules that import each other in one direction only (b → a, c → a, c → b)', () => {
    const r = lint({
      'src/modules/c/index.ts':
        "import { s } from '../b/index.js';\nimport { find } from '../a/index.js';\nexport const c = [s, find];\n",
      'src/modules/b/index.ts': "export { s } from './service.js';\n",
    });
    expect(r.out).toContain('no new violation');
    expect(r.status).toBe(0);
  });

  it('ignores a violation listed in the baseline, and fails on the next one', () => {
    const bad = { 'src/http/meta.ts': "import { find } from '../modules/a/index.js';\nexport const m = find;\n" };
    lint(bad);
    execFileSync(process.execPath, [SCRIPT, '--write-baseline'], { cwd: dir });
    expect(lint(bad).status).toBe(0);
    const r = lint({
      ...bad,
      'src/http/guards2.ts': "import { find } from '../modules/a/index.js';\nexport const g2 = find;\n",
    });
    expect(r.out).toContain('src/http/guards2.ts');
    expect(r.status).toBe(1);
    // Pruning drops what was fixed and never adds the new one.
    lint();
    execFileSync(process.execPath, [SCRIPT, '--prune-baseline'], { cwd: dir });
    expect(JSON.parse(readFileSync(join(dir, '.dependency-cruiser-known-violations.json'), 'utf8'))).toEqual([]);
    rmSync(join(dir, '.dependency-cruiser-known-violations.json'));
  });

  it('passes on the repository as it is (violations beyond the baseline fail CI)', () => {
    const r = spawnSync(process.execPath, [SCRIPT], { cwd: ROOT, encoding: 'utf8' });
    expect(`${r.stdout}${r.stderr}`).toContain('no new violation');
    expect(r.status).toBe(0);
  });
});

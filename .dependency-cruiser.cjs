// Layering rules of docs/architecture.md, checked by `npm run lint:deps` in CI. Violations that
// existed when the check was introduced are listed in .dependency-cruiser-known-violations.json: the check fails
// on any new one; shrink that file as modules gain a repo.ts and an index.ts (`npm run lint:deps:baseline`).
// The last rule, no-module-cycles (no loop of imports between modules, of any length), is checked by
// scripts/lint-deps.mjs from the same cruise: dependency-cruiser's folder-level rules cannot be baselined.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'http-not-to-modules',
      comment: 'The request pipeline (src/http) knows no feature: it may use db, platform and the access core only.',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^src/modules/' },
    },
    {
      name: 'access-core-down-only',
      comment:
        'The access core (src/access: tokens, resolver, settings, decisions, scope) sits below the pipeline: it may use db and platform only.',
      severity: 'error',
      from: { path: '^src/access/' },
      to: { path: '^src/', pathNot: '^src/(access|db|platform)/' },
    },
    {
      name: 'db-platform-not-up',
      comment: 'src/db and src/platform are the bottom layers: they import no module and nothing of src/http or src/access.',
      severity: 'error',
      from: { path: '^src/(db|platform)/' },
      to: { path: '^src/(modules|http|access)/' },
    },
    {
      name: 'module-internals',
      comment: "A module reaches another module only through that module's index.ts.",
      severity: 'error',
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '^src/modules/[^/]+/', pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/index\\.ts$'] },
    },
    {
      name: 'sql-only-in-db-and-repos',
      comment:
        'drizzle-orm and the schema are used in src/db, in modules/<area>/repo.ts (and its repo-*.ts parts) and in src/access/repo.ts only. ' +
        'A repo-*.ts file is a piece of the repository split out for size, imported by repo.ts only: scim/repo-filter.ts compiles a ' +
        'SCIM filter to one SQL condition, so it builds SQL and belongs to the repository, but folded into repo.ts it would bury its statements.',
      severity: 'error',
      from: {
        path: '^src/',
        pathNot: ['^src/db/', '^src/modules/[^/]+/repo\\.ts$', '^src/modules/[^/]+/repo-[a-z-]+\\.ts$', '^src/access/repo\\.ts$'],
      },
      to: { path: ['^drizzle-orm', '(^|/)node_modules/drizzle-orm/', '^src/db/schema/'] },
    },
    {
      name: 'web-no-circles',
      comment:
        'The console (web/src) has no import circle: pages import shared hooks and components, never one another through a loop.',
      severity: 'error',
      from: { path: '^web/src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
    skipAnalysisNotInRules: true,
  },
};

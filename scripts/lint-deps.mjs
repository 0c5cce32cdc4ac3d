// npm run lint:deps: the layering rules of .dependency-cruiser.cjs over src/, failing on any violation that is not in
// .dependency-cruiser-known-violations.json, plus no-module-cycles: two modules never import each other (computed
// here from the same cruise, because dependency-cruiser cannot baseline its folder-level rules).
// --prune-baseline drops the known violations that are gone (npm run lint:deps:baseline, after fixing some);
// --write-baseline records every violation of the tree as known (only to accept one on purpose, reviewed).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const CONFIG = '.dependency-cruiser.cjs';
const BASELINE = '.dependency-cruiser-known-violations.json';
const CYCLE_RULE = { severity: 'error', name: 'no-module-cycles' };
const prune = process.argv.includes('--prune-baseline');
const write = process.argv.includes('--write-baseline');
const depcruise = fileURLToPath(new URL('../../bin/dependency-cruise.mjs', import.meta.resolve('dependency-cruiser')));

function cruise(outputType, ignoreKnown) {
  const args = [depcruise, 'src', '--config', CONFIG, '--output-type', outputType];
  if (ignoreKnown && existsSync(BASELINE)) args.push('--ignore-known', BASELINE);
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.error || !r.stdout) throw new Error(`depcruise failed: ${r.error?.message ?? r.stderr}`);
  return JSON.parse(r.stdout);
}

/** Pairs of modules that import each other, as `a<->b` with a < b. */
function modulePairs(modules) {
  const edges = new Set();
  const area = (path) => /^src\/modules\/([^/]+)\//.exec(path)?.[1];
  for (const m of modules) {
    const from = area(m.source);
    if (!from) continue;
    for (const d of m.dependencies) {
      const to = area(d.resolved);
      if (to && to !== from) edges.add(`${from}>${to}`);
    }
  }
  return [...edges]
    .filter((e) => e.split('>')[0] < e.split('>')[1] && edges.has(e.split('>').reverse().join('>')))
    .map((e) => e.replace('>', '<->'));
}
const pairEntry = (pair) => {
  const [a, b] = pair.split('<->').map((x) => `src/modules/${x}`);
  return {
    type: 'cycle',
    from: a,
    to: b,
    rule: CYCLE_RULE,
    cycle: [b, a].map((name) => ({ name, dependencyTypes: [] })),
  };
};
const knownPairs = () =>
  existsSync(BASELINE)
    ? new Set(
        JSON.parse(readFileSync(BASELINE, 'utf8'))
          .filter((v) => v.rule?.name === CYCLE_RULE.name)
          .map((v) => `${v.from.slice(12)}<->${v.to.slice(12)}`),
      )
    : new Set();

const keyOf = (v) => `${v.type}|${v.rule?.name}|${v.from}|${v.to}`;
if (prune || write) {
  const current = cruise('baseline', false).filter((v) => v.rule?.name !== CYCLE_RULE.name);
  const pairs = modulePairs(cruise('json', false).modules).map(pairEntry);
  let next = [...current, ...pairs];
  if (prune) {
    const before = existsSync(BASELINE) ? JSON.parse(readFileSync(BASELINE, 'utf8')) : [];
    const still = new Set(next.map(keyOf));
    next = before.filter((v) => still.has(keyOf(v)));
    console.log(`${BASELINE}: ${before.length} → ${next.length} known violations`);
  } else console.log(`${BASELINE}: ${next.length} known violations (${pairs.length} module pairs)`);
  writeFileSync(BASELINE, `${JSON.stringify(next, null, 2)}\n`);
  process.exit(0);
}

const result = cruise('json', true);
const fresh = result.summary.violations.filter((v) => v.rule.severity !== 'ignore');
const known = knownPairs();
const newPairs = modulePairs(result.modules).filter((p) => !known.has(p));
for (const v of fresh) console.error(`  ${v.rule.name}: ${v.from} → ${v.to}`);
for (const p of newPairs) console.error(`  ${CYCLE_RULE.name}: ${p.replace('<->', ' ↔ ')}`);
const ignored = result.summary.ignore ?? 0;
if (fresh.length || newPairs.length) {
  console.error(
    `✘ ${fresh.length + newPairs.length} new layering violation(s) (docs/architecture.md); ${ignored} known ones ignored.`,
  );
  process.exit(1);
}
console.log(`✔ layering: no new violation (${ignored} known in ${BASELINE}, ${known.size} known module pairs)`);

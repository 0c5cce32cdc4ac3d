// npm run lint:deps: the layering rules of .dependency-cruiser.cjs over src/ (and the console's web/src: no import
// circle), failing on any violation that is not in .dependency-cruiser-known-violations.json, plus no-module-cycles:
// no loop of imports between modules, of any length (a → b → a, a → b → c → a, ...), computed here from the same
// cruise because dependency-cruiser cannot baseline its folder-level rules.
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
// The server's code, and the console's where the tree has one.
const ROOTS = ['src', 'web/src'].filter((dir) => existsSync(dir));
const depcruise = fileURLToPath(new URL('../../bin/dependency-cruise.mjs', import.meta.resolve('dependency-cruiser')));

function cruise(outputType, ignoreKnown) {
  const args = [depcruise, ...ROOTS, '--config', CONFIG, '--output-type', outputType];
  if (ignoreKnown && existsSync(BASELINE)) args.push('--ignore-known', BASELINE);
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.error || !r.stdout) throw new Error(`depcruise failed: ${r.error?.message ?? r.stderr}`);
  return JSON.parse(r.stdout);
}

/** The module graph: for each area of src/modules, the other areas its files import (type-only imports included). */
function moduleGraph(modules) {
  const graph = new Map();
  const area = (path) => /^src\/modules\/([^/]+)\//.exec(path)?.[1];
  for (const m of modules) {
    const from = area(m.source);
    if (!from) continue;
    if (!graph.has(from)) graph.set(from, new Set());
    for (const d of m.dependencies) {
      const to = area(d.resolved);
      if (to && to !== from) graph.get(from).add(to);
    }
  }
  return graph;
}

/**
 * Every import loop between modules, of any length: one per strongly connected set of modules (Tarjan), shown as
 * one closed path through it that starts at its first module by name, e.g. [audit, webhooks, roles, audit].
 */
function moduleCycles(modules) {
  const graph = moduleGraph(modules);
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const sets = [];
  let next = 0;
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) !== index.get(v)) return;
    const set = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      set.push(w);
    } while (w !== v);
    if (set.length > 1) sets.push(set.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  // The shortest loop through the set's first module, by breadth-first search inside the set.
  return sets.map((set) => {
    const inSet = new Set(set);
    const start = set[0];
    const from = new Map([[start, null]]);
    const queue = [start];
    while (queue.length) {
      const v = queue.shift();
      for (const w of [...(graph.get(v) ?? [])].sort()) {
        if (w === start) {
          const path = [v];
          for (let u = from.get(v); u !== null; u = from.get(u)) path.unshift(u);
          return [...path, start];
        }
        if (inSet.has(w) && !from.has(w)) {
          from.set(w, v);
          queue.push(w);
        }
      }
    }
    return [...set, start];
  });
}
/** A loop is known by the set of modules it joins, whatever path shows it. */
const cycleKey = (names) => [...new Set(names.map((n) => n.replace(/^src\/modules\//, '')))].sort().join(',');
const cycleEntry = (cycle) => ({
  type: 'cycle',
  from: `src/modules/${cycle[0]}`,
  to: `src/modules/${cycle[1]}`,
  rule: CYCLE_RULE,
  cycle: cycle.slice(1).map((name) => ({ name: `src/modules/${name}`, dependencyTypes: [] })),
});
const knownCycles = () =>
  existsSync(BASELINE)
    ? new Set(
        JSON.parse(readFileSync(BASELINE, 'utf8'))
          .filter((v) => v.rule?.name === CYCLE_RULE.name)
          .map((v) => cycleKey(v.cycle.map((c) => c.name))),
      )
    : new Set();

const keyOf = (v) =>
  v.rule?.name === CYCLE_RULE.name
    ? `cycle|${cycleKey(v.cycle.map((c) => c.name))}`
    : `${v.type}|${v.rule?.name}|${v.from}|${v.to}`;
/** A circle of files, as the path dependency-cruiser found. */
const circle = (v) => (v.cycle?.length ? ` (${[v.from, ...v.cycle.map((c) => c.name)].join(' → ')})` : '');
if (prune || write) {
  const current = cruise('baseline', false).filter((v) => v.rule?.name !== CYCLE_RULE.name);
  const cycles = moduleCycles(cruise('json', false).modules).map(cycleEntry);
  let next = [...current, ...cycles];
  if (prune) {
    const before = existsSync(BASELINE) ? JSON.parse(readFileSync(BASELINE, 'utf8')) : [];
    const still = new Set(next.map(keyOf));
    next = before.filter((v) => still.has(keyOf(v)));
    console.log(`${BASELINE}: ${before.length} → ${next.length} known violations`);
  } else console.log(`${BASELINE}: ${next.length} known violations (${cycles.length} module loops)`);
  writeFileSync(BASELINE, `${JSON.stringify(next, null, 2)}\n`);
  process.exit(0);
}

const result = cruise('json', true);
const fresh = result.summary.violations.filter((v) => v.rule.severity !== 'ignore');
const known = knownCycles();
const newCycles = moduleCycles(result.modules).filter((c) => !known.has(cycleKey(c)));
for (const v of fresh) console.error(`  ${v.rule.name}: ${v.from} → ${v.to}${circle(v)}`);
for (const c of newCycles) console.error(`  ${CYCLE_RULE.name}: ${c.join(' → ')}`);
const ignored = result.summary.ignore ?? 0;
if (fresh.length || newCycles.length) {
  console.error(
    `✘ ${fresh.length + newCycles.length} new layering violation(s) (docs/architecture.md); ${ignored} known ones ignored.`,
  );
  process.exit(1);
}
console.log(`✔ layering: no new violation (${ignored} known in ${BASELINE}, ${known.size} known module loops)`);

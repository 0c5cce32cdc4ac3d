// `npm run docs:env`: rewrites the environment table of README.md from the config schema (src/config-docs.ts).
import { readFileSync, writeFileSync } from 'node:fs';
import { withEnvTable } from '../src/config-docs.js';

const readme = readFileSync('README.md', 'utf8');
const next = withEnvTable(readme);
if (next !== readme) writeFileSync('README.md', next);
console.log(next === readme ? 'README.md: environment table up to date' : 'README.md: environment table rewritten');

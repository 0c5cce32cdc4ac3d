// The README is part of the product: its environment table is the config schema's (regenerate with
// `npm run docs:env`), and every link points at a file in the repository.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { envSchema } from '../../src/config.js';
import { withEnvTable } from '../../src/config-docs.js';

const ROOT = join(import.meta.dirname, '..', '..');
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

describe('README.md', () => {
  it('carries the environment table of the current config schema (npm run docs:env)', () => {
    expect(withEnvTable(readme), 'README.md is stale: run npm run docs:env').toBe(readme);
    for (const name of Object.keys(envSchema.shape)) expect(readme).toContain(`| \`${name}\` |`);
  });

  it('starts with the two commands', () => {
    const firstBlock = readme.slice(readme.indexOf('```sh'), readme.indexOf('```', readme.indexOf('```sh') + 5));
    expect(firstBlock).toContain('npm ci && npm start');
    expect(firstBlock).toContain('npm test');
  });

  it('links only to files in the repository', () => {
    const targets = [...readme.matchAll(/\]\(([^)]+)\)/g)]
      .map((m) => m[1]!)
      .filter((t) => !/^https?:\/\//.test(t) && !t.startsWith('#'));
    for (const t of targets) expect(existsSync(join(ROOT, t.split('#')[0]!)), t).toBe(true);
    expect(readme).not.toContain('../shared');
  });
});

// `gatehouse --version` and `-V` print the package's version (the compiled CLI, as installed).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runCli } from './helpers.js';

const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };

describe('gatehouse --version', () => {
  it.each(['--version', '-V'])(
    '%s prints the version of package.json and exits 0',
    async (flag) => {
      const r = await runCli([flag], { PATH: process.env.PATH ?? '' });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.trim()).toBe(version);
    },
    120_000,
  );
});

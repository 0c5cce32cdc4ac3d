#!/usr/bin/env node
// `npx gatehouse`: the compiled CLI (dist/, built by `npm run build` at `npm ci`), or the sources through tsx when
// there is no build (a checkout where only `npm install --ignore-scripts` ran).
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/cli/main.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/cli/main.ts', import.meta.url).href);
}

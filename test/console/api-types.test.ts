// The console's typed client is generated from /openapi.json: the committed types must match the document.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiTypes, SCHEMA_FILE } from '../../scripts/gen-api-types.js';
import { startApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(() => t?.close());

describe('the console API types are generated from the served OpenAPI document', () => {
  it('web/src/api/schema.d.ts is not stale (run `npm run gen:api` after changing a route schema)', async () => {
    const doc = (await (await fetch(`${t.baseUrl}/openapi.json`)).json()) as Record<string, unknown>;
    const fresh = await generateApiTypes(doc);
    const committed = readFileSync(SCHEMA_FILE, 'utf8');
    expect(committed === fresh, 'web/src/api/schema.d.ts is stale: run `npm run gen:api`').toBe(true);
  });
});

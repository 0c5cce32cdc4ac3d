// The console's typed client is generated from the OpenAPI document: the committed types must match it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateApiTypes, SCHEMA_FILE } from '../../scripts/gen-api-types.js';

describe('the console API types are generated from the served OpenAPI document', () => {
  // The same generation as `npm run gen:api` (scripts/openapi-dump.ts builds the real app in-process).
  it('web/src/api/schema.d.ts is not stale (run `npm run gen:api` after changing a route schema)', {
    timeout: 300_000,
  }, async () => {
    const fresh = await generateApiTypes();
    const committed = readFileSync(SCHEMA_FILE, 'utf8');
    expect(committed === fresh, 'web/src/api/schema.d.ts is stale: run `npm run gen:api`').toBe(true);
  });
});

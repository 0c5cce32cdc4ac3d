// The test client is typed per route from the generated OpenAPI types (test/support/api-types.ts): this file proves
// the typing can fail. `npx tsc --noEmit` fails when an expected error below disappears (the typing went loose);
// the calls themselves never run.
import { describe, expectTypeOf, it } from 'vitest';
import type { ApiClient } from '../support/client.js';

async function typedCalls(api: ApiClient, id: string) {
  // A concrete path reaches its pattern: '/orgs/organizations/{id}', with or without a query string.
  const org = await api.get(`/orgs/organizations/${id}?include=sites`);
  expectTypeOf(org.body.slug).toEqualTypeOf<string>();
  // Of two patterns a path matches, the more specific: '/users/me' rather than '/users/{id}'.
  const me = await api.get('/users/me');
  expectTypeOf(me.body.permissions).toEqualTypeOf<string[]>();
  // The error envelope's fields are there to read after asserting an error status.
  const login = await api.post('/auth/login', { email: 'ada@example.org', password: 'x' });
  expectTypeOf(login.body.retryAfter).toEqualTypeOf<number | undefined>();

  // @ts-expect-error no route has this path
  await api.get('/orgs/organisations');
  // @ts-expect-error the route exists, but not for this method
  await api.delete('/auth/login');
  // @ts-expect-error a body field the route does not take
  await api.post('/auth/login', { email: 'ada@example.org', password: 'x', remember: true });
  // @ts-expect-error a body field of the wrong type
  await api.patch(`/orgs/organizations/${id}`, { name: 42 });
  // @ts-expect-error a field the route does not return
  void org.body.passwordHash;
  // @ts-expect-error the route's body is required
  await api.post('/auth/login');
  // @ts-expect-error a path held as a plain string names no route the compiler can check
  await api.get(`/users/${id}` as string);

  // The escape hatch: any method, path and body; the answer untyped.
  await api.raw.post('/auth/login', { email: 42 });
  await api.raw.request('BREW', '/orgs/organisations');
}

describe('the test client is typed per route', () => {
  it('type errors above are expected by tsc (this file compiles only while the typing catches them)', () => {
    expectTypeOf(typedCalls).toBeFunction();
  });
});

// The response serializer (src/http/serializer.ts): plain schemas compiled, everything else through zod, and the
// compiled answers the same bytes as zod's for the shapes the API uses.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { serializerCompiler as zodSerializerCompiler } from 'fastify-type-provider-zod';
import { plainSchema, serializerCompiler } from '../../src/http/serializer.js';
import { userProfile } from '../../src/modules/identity/schemas.js';
import { tokenResponse } from '../../src/modules/identity/token-response.js';
import { mfaChallenge } from '../../src/modules/auth/schemas.js';
import { errorEnvelope } from '../../src/http/schemas.js';

const route = (schema: unknown) => ({ schema, method: 'GET', url: '/x', httpStatus: '200' });
const compiled = (schema: unknown) => serializerCompiler(route(schema) as never) as (d: unknown) => string;
const viaZod = (schema: unknown) => zodSerializerCompiler(route(schema) as never) as (d: unknown) => string;

const profile = {
  id: '0b6b6a3e-7d0e-4c1e-9a55-0d4f5b3c2a10',
  email: 'ada@example.test',
  emailVerified: true,
  name: 'Ada "Countess" Lovelace \u2028',
  avatarUrl: null,
  status: 'active',
  mfaEnabled: true,
  mfaMethod: null,
  phoneVerified: false,
  phoneLast4: null,
  lastLoginAt: '2026-11-27T10:00:00.000Z',
  createdAt: '2026-01-01T00:00:00.000Z',
  scope: 'organization',
  partnerId: '1b6b6a3e-7d0e-4c1e-9a55-0d4f5b3c2a10',
  orgId: '2b6b6a3e-7d0e-4c1e-9a55-0d4f5b3c2a10',
  roleId: null,
  permissions: ['devices:read', 'users:read'],
};

describe('response serializer', () => {
  it('the profile is compiled and answers the same JSON as zod', () => {
    expect(plainSchema(userProfile)).not.toBeNull();
    expect(compiled(userProfile)(profile)).toBe(viaZod(userProfile)(profile));
  });

  it('a field the schema does not declare never reaches the answer (a hash, a secret)', () => {
    const leaky = { ...profile, passwordHash: '$argon2id$v=19$secret', totpSecret: 'JBSWY3DPEHPK3PXP' };
    const out = compiled(userProfile)(leaky);
    expect(out).not.toContain('argon2id');
    expect(out).not.toContain('JBSWY3DPEHPK3PXP');
    expect(JSON.parse(out)).toEqual(profile);
  });

  it('a union is written by the branch the value matches, a null enum included (the sign-in answer)', () => {
    const login = z.union([tokenResponse, mfaChallenge]);
    expect(plainSchema(login)).not.toBeNull();
    const tokens = {
      accessToken: 'eyJ.a.b',
      tokenType: 'Bearer',
      expiresIn: 900,
      user: profile,
      mfaEnrollmentRequired: false,
    };
    const challenge = { mfaRequired: true, mfaMethod: 'totp', tempToken: 'tmp', passkeyAvailable: true };
    for (const value of [tokens, challenge]) expect(compiled(login)(value)).toBe(viaZod(login)(value));
  });

  it('nullable objects, arrays of objects and optional fields answer as zod does', () => {
    const schema = z.object({
      items: z.array(z.object({ id: z.string(), count: z.number().int(), note: z.string().optional() })),
      owner: z.object({ id: z.string() }).nullable(),
      nextCursor: z.string().nullable(),
    });
    expect(plainSchema(schema)).not.toBeNull();
    for (const value of [
      {
        items: [
          { id: 'a', count: 1 },
          { id: 'b', count: 2, note: 'n' },
        ],
        owner: null,
        nextCursor: null,
      },
      { items: [], owner: { id: 'o', extra: 'dropped' }, nextCursor: 'c' },
    ])
      expect(compiled(schema)(value)).toBe(viaZod(schema)(value));
  });

  it('schemas that are not plain data stay with zod: loose objects, records, transforms, defaults', () => {
    expect(plainSchema(errorEnvelope)).toBeNull();
    expect(plainSchema(z.record(z.string(), z.number()))).toBeNull();
    expect(plainSchema(z.object({ at: z.date().transform((d) => d.toISOString()) }))).toBeNull();
    expect(plainSchema(z.object({ n: z.number().default(1) }))).toBeNull();
    // the error envelope keeps the fields its code names, as zod writes them
    const body = { error: 'Conflict', message: 'm', code: 'role_has_users', userCount: 3 };
    expect(JSON.parse(compiled(errorEnvelope)(body))).toEqual(body);
  });
});

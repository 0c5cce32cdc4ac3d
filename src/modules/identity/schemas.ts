// The signed-in user's profile as every token response and /auth/me and /users/me answer it.
import { z } from 'zod';

export const userProfile = z
  .object({
    id: z.uuid(),
    email: z.string(),
    emailVerified: z
      .boolean()
      .describe('Whether the address was proven (a mailed link opened, or a domain its tenant proved).'),
    name: z.string(),
    avatarUrl: z.string().nullable(),
    status: z.enum(['active', 'invited', 'disabled']),
    mfaEnabled: z.boolean(),
    mfaMethod: z.enum(['totp', 'sms', 'passkey']).nullable(),
    phoneVerified: z.boolean(),
    phoneLast4: z.string().nullable(),
    lastLoginAt: z.string().nullable(),
    createdAt: z.string(),
    scope: z.enum(['partner', 'organization']).nullable(),
    partnerId: z.uuid().nullable(),
    orgId: z.uuid().nullable(),
    roleId: z.uuid().nullable(),
    permissions: z.array(z.string()),
  })
  .meta({
    id: 'UserProfile',
    examples: [
      {
        id: '3f2b8c1e-6a4d-4e8f-9b2a-1c5d7e9f0a12',
        email: 'ada@example.org',
        emailVerified: true,
        name: 'Ada Lovelace',
        avatarUrl: null,
        status: 'active',
        mfaEnabled: true,
        mfaMethod: 'totp',
        phoneVerified: false,
        phoneLast4: null,
        lastLoginAt: '2026-11-20T08:15:00.000Z',
        createdAt: '2026-01-05T10:00:00.000Z',
        scope: 'partner',
        partnerId: '8d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6',
        orgId: null,
        roleId: '5b6c7d8e-9f01-4a2b-8c3d-4e5f6a7b8c9d',
        permissions: ['*:*'],
      },
    ],
  });
export type UserProfile = z.infer<typeof userProfile>;

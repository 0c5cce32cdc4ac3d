// The answer of every successful authentication: tokens in the body, refresh in a cookie.
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { loadPrincipal } from '../../access/caller.js';
import { onceAnswered } from '../../http/after-answer.js';
import { AppError } from '../../http/errors.js';
import { setSessionCookies } from './cookies.js';
import { recognizeDevice } from './devices.js';
import { currentProfile } from './profile.js';
import { markFlowAnswered, sessionExpiry } from './repo.js';
import { userProfile } from './schemas.js';

export const tokenResponse = z
  .object({
    accessToken: z.string(),
    tokenType: z.literal('Bearer'),
    expiresIn: z.number().int(),
    user: userProfile,
    mfaEnrollmentRequired: z.boolean(),
  })
  .meta({
    id: 'TokenResponse',
    examples: [
      {
        accessToken: 'eyJhbGciOiJFZERTQSIsImtpZCI6ImsxIn0.eyJzdWIiOiIzZjJiIn0.c2lnbmF0dXJl',
        tokenType: 'Bearer',
        expiresIn: 900,
        user: {
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
        mfaEnrollmentRequired: false,
      },
    ],
  });
export type TokenResponse = z.infer<typeof tokenResponse>;

export interface IssuedSession {
  userId: string;
  sessionId: string;
  accessToken: string;
  refreshToken: string;
  /** A new sign-in (not a refresh or a rotation): the device it came from is recognised or recorded. */
  signedIn?: boolean;
  /** The refresh token's expiry when the issuer knows it (else it is read back). */
  expiresAt?: Date;
  /** The single-use link this sign-in spent: closed for good once the answer went out (else it can be finished). */
  spentFlowId?: string;
}

/** Call after the transaction that created or rotated the session has committed. */
export async function respondWithTokens(
  deps: Deps,
  reply: FastifyReply,
  issued: IssuedSession,
): Promise<TokenResponse> {
  const principal = await loadPrincipal(deps.authContext, issued.userId, issued.sessionId);
  if (!principal) throw new AppError('unauthenticated', 'The session could not be established.');
  const expiresAt = issued.expiresAt ?? (await sessionExpiry(deps.db, issued.sessionId));
  const maxAge = expiresAt ? (expiresAt.getTime() - deps.clock.now().getTime()) / 1000 : deps.config.refreshTokenTtl;
  setSessionCookies(reply, deps.config, issued.refreshToken, maxAge);
  const { spentFlowId } = issued;
  if (spentFlowId) onceAnswered(reply, () => markFlowAnswered(deps.db, spentFlowId));
  if (issued.signedIn) {
    // A failure to note the device never fails the sign-in itself.
    await recognizeDevice(deps, reply.request, reply, issued.userId, issued.sessionId).catch((err: unknown) =>
      deps.logger.error({ err }, 'device recognition failed'),
    );
  }
  return {
    accessToken: issued.accessToken,
    tokenType: 'Bearer',
    expiresIn: deps.config.accessTokenTtl,
    // The liveness row just read holds the profile (read after the sign-in committed): no second read of the user.
    user: await currentProfile(deps.db, principal),
    mfaEnrollmentRequired: principal.mfaEnrollmentRequired,
  };
}

// WebAuthn assertions outside the password sign-in: passwordless sign-in (discoverable credentials, empty
// allowCredentials) and re-authentication of a signed-in user (step-up, removing the password). Each challenge is a
// stored flow consumed on first use; user verification is required; the counter may never go backwards.
// @simplewebauthn/server is imported where a ceremony runs (~0.3 s and ~20 MB to load, not needed to start).
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import { AppError } from '../../http/errors.js';
import { consumeFlow, createFlow } from '../identity/index.js';
import { findByCredential, moveCounter, type PasskeyRow, passkeysOf } from './repo.js';

export const ASSERTION_TTL_MS = 5 * 60 * 1000;

/**
 * passkey_login: nobody signed in yet (passwordless); webauthn_reauth: the signed-in user proves presence again;
 * webauthn_login: the second step of a password sign-in (bound to its tempToken flow).
 */
export type AssertionPurpose = 'passkey_login' | 'webauthn_reauth' | 'webauthn_login';

/** A passkey alone is possession and inherence only when the authenticator verified the user. */
const requiresUserVerification = (purpose: AssertionPurpose) => purpose !== 'webauthn_login';
type FlowRow = NonNullable<Awaited<ReturnType<typeof consumeFlow>>>;

export const relyingParty = (deps: Pick<Deps, 'config'>) => ({
  rpID: new URL(deps.config.publicUrl).hostname,
  origin: deps.config.appUrl,
});

export function challengeOf(clientDataJSON: unknown): string | null {
  try {
    const parsed = JSON.parse(Buffer.from(String(clientDataJSON), 'base64url').toString('utf8')) as {
      challenge?: unknown;
    };
    return typeof parsed.challenge === 'string' ? parsed.challenge : null;
  } catch {
    return null;
  }
}

/** Options for navigator.credentials.get(); for passwordless sign-in allowCredentials is empty (autofill). */
export async function assertionOptions(
  deps: Deps,
  purpose: AssertionPurpose,
  userId: string | null,
  data: Record<string, unknown> = {},
) {
  const keys = userId ? await passkeysOf(deps.db, userId) : [];
  if (userId && keys.length === 0) throw new AppError('invalid_challenge', 'This account has no passkey.');
  const { generateAuthenticationOptions } = await import('@simplewebauthn/server');
  const options = await generateAuthenticationOptions({
    rpID: relyingParty(deps).rpID,
    allowCredentials: keys.map((k) => ({ id: k.credentialId, transports: k.transports as never })),
    userVerification: requiresUserVerification(purpose) ? 'required' : 'preferred',
    timeout: ASSERTION_TTL_MS,
  });
  await createFlow(deps.db, {
    kind: purpose,
    userId,
    data: { ...data, challenge: options.challenge },
    ttlMs: ASSERTION_TTL_MS,
    now: deps.clock.now(),
    token: `${purpose}:${options.challenge}`,
  });
  return { options };
}

export interface VerifiedAssertion {
  key: PasskeyRow;
  newCounter: number;
  backedUp: boolean;
}

/**
 * Consumes the challenge, then checks the credential: registered (to `userId` when given), signed over this
 * challenge, origin and RP id, user verified. Passwordless: the user handle must name the key's owner.
 */
export async function verifyAssertion(
  deps: Deps,
  purpose: AssertionPurpose,
  credential: AuthenticationResponseJSON,
  userId: string | null,
  flowMatches: (flow: FlowRow) => boolean = () => true,
): Promise<VerifiedAssertion> {
  const challenge = challengeOf(credential.response?.clientDataJSON);
  const flow = challenge ? await consumeFlow(deps.db, purpose, `${purpose}:${challenge}`, deps.clock.now()) : null;
  if (!flow || (userId !== null && flow.userId !== userId) || !flowMatches(flow))
    throw new AppError('invalid_challenge');
  const key = await findByCredential(deps.db, String(credential.id), userId);
  if (!key) throw new AppError('passkey_verification_failed', 'This passkey is not registered.');
  if (purpose === 'passkey_login') {
    const handle = credential.response?.userHandle;
    if (!handle || Buffer.from(String(handle), 'base64url').toString('utf8') !== key.userId) {
      throw new AppError('passkey_verification_failed', 'The passkey does not belong to the account it names.');
    }
  }
  const { rpID, origin } = relyingParty(deps);
  const { verifyAuthenticationResponse } = await import('@simplewebauthn/server');
  let result: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    result = await verifyAuthenticationResponse({
      response: credential,
      expectedChallenge: challenge!,
      expectedOrigin: origin,
      expectedRPID: rpID,
      credential: {
        id: key.credentialId,
        publicKey: new Uint8Array(Buffer.from(key.publicKey, 'base64url')),
        counter: key.counter,
        transports: key.transports as never,
      },
      requireUserVerification: requiresUserVerification(purpose),
    });
  } catch (err) {
    throw new AppError('passkey_verification_failed', `The passkey could not be verified: ${(err as Error).message}`);
  }
  if (!result.verified) throw new AppError('passkey_verification_failed');
  return {
    key,
    newCounter: result.authenticationInfo.newCounter,
    backedUp: result.authenticationInfo.credentialBackedUp,
  };
}

/** Compare-and-set on the counter: a cloned authenticator racing the real one cannot both pass. */
export async function advanceCounter(tx: Executor, v: VerifiedAssertion, now: Date): Promise<void> {
  if (!(await moveCounter(tx, v.key, { counter: v.newCounter, backedUp: v.backedUp }, now)))
    throw new AppError('passkey_verification_failed', 'The signature counter did not advance.');
}

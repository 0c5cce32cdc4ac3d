// Passkeys with @simplewebauthn/server: registration behind a password re-check,
// single-use 5-minute challenges, a signature counter that may never go backwards.
// @simplewebauthn/server is imported where a ceremony runs (~0.3 s and ~20 MB to load, not needed to start).
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { Deps } from '../../deps.js';
import type { Principal } from '../../http/context.js';
import { AppError, notFound } from '../../http/errors.js';
import type { AuditRequestMeta } from '../audit/index.js';
import {
  consumeFlow,
  createFlow,
  voidFlows,
  startSession,
  verifyPassword,
  revokeUserSessions,
  type IssuedSession,
  findUser,
} from '../identity/index.js';
import {
  assertMethodAllowed,
  type PendingLogin,
  pendingLogin,
  recomputeFactors,
  recordSecondFactorFailure,
  takePendingLogin,
} from '../mfa/index.js';
import { advanceCounter, assertionOptions, challengeOf, relyingParty, verifyAssertion } from './assertion.js';
import {
  deletePasskeyRow,
  enablePasskeyFactor,
  findOwnPasskey,
  insertPasskey,
  lockUser,
  type PasskeyRow,
  passkeysNewestFirst,
  passkeysOf,
  renameOwnPasskey,
} from './repo.js';

export const CHALLENGE_TTL_MS = 5 * 60 * 1000;

const rp = relyingParty;

export const passkeyJson = (k: PasskeyRow) => ({
  id: k.id,
  name: k.name,
  createdAt: k.createdAt.toISOString(),
  lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
  backedUp: k.backedUp,
  transports: k.transports,
});

async function recheckPassword(deps: Deps, userId: string, password: string) {
  await deps.limits.enforce('passwordRecheck', userId);
  const user = await findUser(deps.db, userId);
  if (!user || !(await verifyPassword(user.passwordHash, password)))
    throw new AppError('invalid_credentials', 'The current password is not correct.', {}, 400);
  return user;
}

export async function registrationOptions(deps: Deps, p: Principal, input: { currentPassword: string; name: string }) {
  assertMethodAllowed(p, 'passkey');
  const user = await recheckPassword(deps, p.userId, input.currentPassword);
  const existing = await passkeysOf(deps.db, p.userId);
  const { rpID } = rp(deps);
  const { generateRegistrationOptions } = await import('@simplewebauthn/server');
  const options = await generateRegistrationOptions({
    rpName: 'Gatehouse',
    rpID,
    userName: user.email,
    userDisplayName: user.name,
    userID: new TextEncoder().encode(user.id),
    attestationType: 'none',
    excludeCredentials: existing.map((k) => ({ id: k.credentialId, transports: k.transports })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
    timeout: CHALLENGE_TTL_MS,
  });
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    await voidFlows(tx, p.userId, 'webauthn_register', now);
    await createFlow(tx, {
      kind: 'webauthn_register',
      userId: p.userId,
      data: { challenge: options.challenge, name: input.name },
      ttlMs: CHALLENGE_TTL_MS,
      now,
      token: `reg:${options.challenge}`,
    });
  });
  return { options };
}

export async function verifyRegistration(
  deps: Deps,
  p: Principal,
  credential: RegistrationResponseJSON,
  meta: AuditRequestMeta,
) {
  const challenge = challengeOf(credential.response?.clientDataJSON);
  const now = deps.clock.now();
  // Consumed on first read: a replayed or second attempt with this challenge finds nothing.
  const flow = challenge ? await consumeFlow(deps.db, 'webauthn_register', `reg:${challenge}`, now) : null;
  if (!flow || flow.userId !== p.userId) throw new AppError('invalid_challenge');
  const { rpID, origin } = rp(deps);
  const { verifyRegistrationResponse } = await import('@simplewebauthn/server');
  let verification: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verification = await verifyRegistrationResponse({
      response: credential,
      expectedChallenge: challenge!,
      expectedOrigin: origin,
      expectedRPID: rpID,
      requireUserVerification: false,
    });
  } catch (err) {
    throw new AppError('passkey_verification_failed', `The passkey could not be verified: ${(err as Error).message}`);
  }
  if (!verification.verified) throw new AppError('passkey_verification_failed');
  const info = verification.registrationInfo;
  const name = (flow.data as { name: string }).name;
  const row = await deps.db.transaction(async (tx) => {
    const u = await findUser(tx, p.userId);
    const inserted = await insertPasskey(tx, {
      userId: p.userId,
      name,
      credentialId: info.credential.id,
      publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
      counter: info.credential.counter,
      transports: (credential.response.transports ?? []) as string[],
      deviceType: info.credentialDeviceType,
      backedUp: info.credentialBackedUp,
      aaguid: info.aaguid,
    });
    if (!inserted) throw new AppError('conflict', 'This passkey is already registered.');
    // The first passkey becomes the primary method only when no TOTP or SMS factor exists.
    const primary = u?.mfaMethod === 'totp' || u?.mfaMethod === 'sms' ? u.mfaMethod : 'passkey';
    await enablePasskeyFactor(tx, p.userId, primary, now);
    // Turning MFA on ends the password-only sessions elsewhere, as enabling TOTP or SMS does.
    if (!u?.mfaEnabled) {
      await revokeUserSessions(deps, tx, p.userId, 'mfa_enabled', p.sessionId);
      await deps.audit.record(
        tx,
        {
          action: 'auth.mfa.setup',
          actor: { userId: p.userId, email: p.email },
          partnerId: p.partnerId,
          orgId: p.orgId,
          resourceType: 'user',
          resourceId: p.userId,
          details: { method: 'passkey' },
        },
        meta,
      );
    }
    await deps.audit.record(
      tx,
      {
        action: 'auth.mfa.passkey.register',
        actor: { userId: p.userId, email: p.email },
        partnerId: p.partnerId,
        orgId: p.orgId,
        resourceType: 'passkey',
        resourceId: inserted.id,
        details: { passkeyName: name },
      },
      meta,
    );
    return inserted;
  });
  return { passkey: passkeyJson(row) };
}

export async function listPasskeys(deps: Deps, p: Principal) {
  const rows = await passkeysNewestFirst(deps.db, p.userId);
  return { data: rows.map(passkeyJson) };
}

export async function renamePasskey(deps: Deps, p: Principal, id: string, name: string) {
  const row = await renameOwnPasskey(deps.db, p.userId, id, name);
  if (!row) throw notFound('passkey');
  return { passkey: passkeyJson(row) };
}

export async function deletePasskey(
  deps: Deps,
  p: Principal,
  id: string,
  currentPassword: string,
  meta: AuditRequestMeta,
) {
  await recheckPassword(deps, p.userId, currentPassword);
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    await lockUser(tx, p.userId);
    const row = await findOwnPasskey(tx, p.userId, id);
    if (!row) throw notFound('passkey');
    await deletePasskeyRow(tx, id);
    const after = await recomputeFactors(tx, p.userId, now);
    if (!after.mfaEnabled && p.security.requireMfa && deps.config.enable2fa) throw new AppError('last_factor_required');
    await deps.audit.record(
      tx,
      {
        action: 'auth.mfa.passkey.delete',
        actor: { userId: p.userId, email: p.email },
        partnerId: p.partnerId,
        orgId: p.orgId,
        resourceType: 'passkey',
        resourceId: id,
        details: { passkeyName: row.name, mfaStillEnabled: after.mfaEnabled },
      },
      meta,
    );
  });
}

export async function loginOptions(deps: Deps, tempToken: string) {
  const pending = await pendingLogin(deps, tempToken);
  return assertionOptions(deps, 'webauthn_login', pending.user.id, { loginFlowId: pending.flow.id });
}

export async function verifyLoginPasskey(
  deps: Deps,
  tempToken: string,
  credential: AuthenticationResponseJSON,
  meta: AuditRequestMeta,
): Promise<IssuedSession> {
  const pending = await pendingLogin(deps, tempToken);
  await deps.limits.enforce('mfaVerify', pending.user.id);
  try {
    return await assertPasskey(deps, pending, tempToken, credential, meta);
  } catch (err) {
    if (err instanceof AppError && (err.code === 'passkey_verification_failed' || err.code === 'invalid_challenge')) {
      await recordSecondFactorFailure(deps, pending, { method: 'passkey', reason: err.code }, meta);
    }
    throw err;
  }
}

async function assertPasskey(
  deps: Deps,
  pending: PendingLogin,
  tempToken: string,
  credential: AuthenticationResponseJSON,
  meta: AuditRequestMeta,
): Promise<IssuedSession> {
  const verified = await verifyAssertion(
    deps,
    'webauthn_login',
    credential,
    pending.user.id,
    (flow) => (flow.data as { loginFlowId?: string }).loginFlowId === pending.flow.id,
  );
  return deps.db.transaction(async (tx) => {
    await advanceCounter(tx, verified, deps.clock.now());
    await takePendingLogin(tx, deps, tempToken);
    return startSession(deps, tx, pending.user, pending.context, { mfa: true, method: 'password+passkey', meta });
  });
}

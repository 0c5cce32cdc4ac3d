// Every value sealed with the secret box: where it is stored and the associated data that binds it there. Writers
// and readers seal and open through their entry here, and `gatehouse keys rotate-encryption` walks the same list,
// so a value kind missing from it could not be written at all.
import type { SecretBox } from '../platform/secret-box.js';

export interface SealedKind {
  label: string;
  table: string;
  /** Column that identifies a row (the rotation's cursor). */
  id: string;
  /** A text column, or a jsonb column when `jsonField` names the text field inside it. */
  column: string;
  jsonField?: string;
  /** Column whose value is bound into the associated data (a sealed value copied to another row does not open). */
  boundTo?: string;
  /** Only rows matching this SQL condition hold the value. */
  where?: string;
  aad: (bound: string) => string;
}

export const SEALED = {
  signingKey: {
    label: 'signing keys',
    table: 'signing_keys',
    id: 'kid',
    column: 'private_jwk_enc',
    boundTo: 'kid',
    aad: (kid) => `signing-key:${kid}`,
  },
  totpSecret: {
    label: 'TOTP secrets',
    table: 'users',
    id: 'id',
    column: 'mfa_secret',
    boundTo: 'id',
    aad: (userId) => `totp:${userId}`,
  },
  totpSetupSecret: {
    label: 'pending TOTP setups',
    table: 'auth_flows',
    id: 'id',
    column: 'data',
    jsonField: 'secret',
    boundTo: 'user_id',
    where: "kind = 'mfa_setup'",
    aad: (userId) => `totp-setup:${userId}`,
  },
  totpSetupRecoveryCodes: {
    label: 'pending recovery codes',
    table: 'auth_flows',
    id: 'id',
    column: 'data',
    jsonField: 'recoveryCodes',
    boundTo: 'user_id',
    where: "kind = 'mfa_setup'",
    aad: (userId) => `recovery-setup:${userId}`,
  },
  ssoClientSecret: {
    label: 'SSO client secrets',
    table: 'sso_providers',
    id: 'id',
    column: 'client_secret',
    aad: () => 'sso-client-secret',
  },
  ssoNonce: { label: 'SSO login nonces', table: 'sso_sessions', id: 'id', column: 'nonce', aad: () => 'sso-nonce' },
  ssoVerifier: {
    label: 'SSO PKCE verifiers',
    table: 'sso_sessions',
    id: 'id',
    column: 'code_verifier',
    aad: () => 'sso-verifier',
  },
  webhookSecret: {
    label: 'webhook signing secrets',
    table: 'webhooks',
    id: 'id',
    column: 'secret_sealed',
    boundTo: 'id',
    aad: (webhookId) => `webhook-secret:${webhookId}`,
  },
  queuedMail: { label: 'queued mail', table: 'mail_outbox', id: 'id', column: 'sealed', aad: () => 'mail_outbox' },
} as const satisfies Record<string, SealedKind>;

export type SealedKindName = keyof typeof SEALED;

export const SEALED_KINDS: readonly SealedKind[] = Object.values(SEALED);

/** Seals a value of this kind; `bound` is the value of the kind's `boundTo` column in the row it goes to. */
export const sealAs = (box: SecretBox, kind: SealedKindName, plaintext: string, bound = '') =>
  box.seal(plaintext, SEALED[kind].aad(bound));

/** Opens a value of this kind read from a row whose `boundTo` column holds `bound`. */
export const openAs = (box: SecretBox, kind: SealedKindName, sealed: string, bound = '') =>
  box.open(sealed, SEALED[kind].aad(bound));

/** The same value sealed again under the current key (for the rotation); throws when no configured key opens it. */
export const reseal = (box: SecretBox, kind: SealedKind, sealed: string, bound: string) =>
  box.seal(box.open(sealed, kind.aad(bound)), kind.aad(bound));

// A software WebAuthn authenticator for the tests: ES256 keys from node:crypto, attestation "none",
// authenticatorData built by hand (rpIdHash, flags, signature counter, attested credential data with a COSE key).
// It plays both the browser (clientDataJSON, origin and RP id checks) and the authenticator.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { encodeCBOR, type CBORType } from '@levischuck/tiny-cbor';

// tiny-cbor (pure JavaScript, the CBOR library @simplewebauthn itself uses): maps are Maps, byte strings Uint8Arrays.
const cbor = { encode: (value: CBORType) => Buffer.from(encodeCBOR(value)) };

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;
const COSE_ALG_ES256 = -7;

const b64url = (b: Buffer | Uint8Array) => Buffer.from(b).toString('base64url');
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest();

/** A credential held by the software authenticator. `signCount` is public: set it back to act as a clone. */
export interface SoftCredential {
  /** base64url credential id, as the server stores it. */
  id: string;
  rawId: Buffer;
  rpId: string;
  /** base64url of the WebAuthn user handle (user.id of the creation options). */
  userHandle: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  signCount: number;
  /** A resident (discoverable) key: it can answer an empty allowCredentials and returns its user handle. */
  discoverable: boolean;
}

export interface CreateOptions {
  /** Store a resident key; by default whenever the RP does not discourage one (as platform authenticators do). */
  discoverable?: boolean;
  /** Flags of authenticatorData; defaults to UP | UV | AT. */
  flags?: number;
  /** First signature counter reported (default 0, as most passkeys do). */
  signCount?: number;
  transports?: string[];
}

export interface AssertionOptions {
  /** Counter to report instead of signCount + 1 (a clone reports a stale value). */
  signCount?: number;
  /** Flags of authenticatorData; defaults to UP | UV. */
  flags?: number;
  /** Answer even when the credential is not in allowCredentials (a browser would not). */
  ignoreAllowList?: boolean;
  /** RP id to hash instead of the options' (a phishing site's RP). */
  rpIdOverride?: string;
  /** User handle to return instead of the credential's (a key claiming another account). */
  userHandleOverride?: string;
}

/** The browser's rule: the RP id must be the origin's host or a registrable suffix of it. */
function assertRpIdFitsOrigin(rpId: string, origin: string) {
  const host = new URL(origin).hostname;
  if (host !== rpId && !host.endsWith(`.${rpId}`))
    throw new Error(`SecurityError: RP id ${rpId} does not fit origin ${origin}`);
  if (/^\d+\.\d+\.\d+\.\d+$/.test(host)) throw new Error(`SecurityError: ${host} is an invalid domain`);
}

function clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string, origin: string): Buffer {
  return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }), 'utf8');
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

/** COSE_Key (RFC 9053) of a P-256 public key: a Map with integer keys. */
export function coseKey(publicKey: KeyObject): Buffer {
  const jwk = publicKey.export({ format: 'jwk' });
  return cbor.encode(
    new Map<number, CBORType>([
      [1, 2], // kty: EC2
      [3, COSE_ALG_ES256], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, new Uint8Array(Buffer.from(jwk.x!, 'base64url'))],
      [-3, new Uint8Array(Buffer.from(jwk.y!, 'base64url'))],
    ]),
  );
}

/** navigator.credentials.create(): a new ES256 credential and its attestation ("none"). */
export function createCredential(
  options: PublicKeyCredentialCreationOptionsJSON,
  origin: string,
  opts: CreateOptions = {},
): { response: RegistrationResponseJSON; credential: SoftCredential } {
  const rpId = options.rp.id ?? new URL(origin).hostname;
  assertRpIdFitsOrigin(rpId, origin);
  if (!options.pubKeyCredParams.some((p) => p.alg === COSE_ALG_ES256))
    throw new Error('NotSupportedError: the RP does not accept ES256');
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const rawId = randomBytes(32);
  const signCount = opts.signCount ?? 0;
  const credIdLen = Buffer.alloc(2);
  credIdLen.writeUInt16BE(rawId.length);
  const authData = Buffer.concat([
    sha256(rpId),
    Buffer.from([opts.flags ?? FLAG_UP | FLAG_UV | FLAG_AT]),
    u32(signCount),
    Buffer.alloc(16), // aaguid: zeros
    credIdLen,
    rawId,
    coseKey(publicKey),
  ]);
  const attestationObject = cbor.encode(
    new Map<string, CBORType>([
      ['fmt', 'none'],
      ['attStmt', new Map()],
      ['authData', new Uint8Array(authData)],
    ]),
  );
  const cdj = clientData('webauthn.create', options.challenge, origin);
  const discoverable = opts.discoverable ?? options.authenticatorSelection?.residentKey !== 'discouraged';
  const credential: SoftCredential = {
    id: b64url(rawId),
    rawId,
    rpId,
    userHandle: options.user.id,
    privateKey,
    publicKey,
    signCount,
    discoverable,
  };
  const transports = opts.transports ?? ['internal'];
  return {
    credential,
    response: {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      response: { clientDataJSON: b64url(cdj), attestationObject: b64url(attestationObject), transports },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    },
  };
}

/** navigator.credentials.get(): an assertion over authenticatorData || SHA-256(clientDataJSON), DER-encoded. */
export function getAssertion(
  options: PublicKeyCredentialRequestOptionsJSON,
  origin: string,
  credential: SoftCredential,
  opts: AssertionOptions = {},
): AuthenticationResponseJSON {
  const rpId = options.rpId ?? new URL(origin).hostname;
  assertRpIdFitsOrigin(rpId, origin);
  const allowed = options.allowCredentials ?? [];
  if (!opts.ignoreAllowList && allowed.length > 0 && !allowed.some((c) => c.id === credential.id)) {
    throw new Error('NotAllowedError: the credential is not in allowCredentials');
  }
  if (!opts.ignoreAllowList && credential.rpId !== rpId)
    throw new Error('NotAllowedError: the credential belongs to another RP');
  // An empty allow list (passkey-first sign-in, autofill) can only be answered by a resident key.
  if (!opts.ignoreAllowList && allowed.length === 0 && !credential.discoverable)
    throw new Error('NotAllowedError: no discoverable credential for this RP');
  const signCount = opts.signCount ?? credential.signCount + 1;
  credential.signCount = Math.max(credential.signCount, signCount);
  const authData = Buffer.concat([
    sha256(opts.rpIdOverride ?? rpId),
    Buffer.from([opts.flags ?? FLAG_UP | FLAG_UV]),
    u32(signCount),
  ]);
  const cdj = clientData('webauthn.get', options.challenge, origin);
  const signature = sign('sha256', Buffer.concat([authData, sha256(cdj)]), credential.privateKey);
  return {
    id: credential.id,
    rawId: credential.id,
    type: 'public-key',
    response: {
      clientDataJSON: b64url(cdj),
      authenticatorData: b64url(authData),
      signature: b64url(signature),
      ...(credential.discoverable ? { userHandle: opts.userHandleOverride ?? credential.userHandle } : {}),
    },
    clientExtensionResults: {},
    authenticatorAttachment: 'platform',
  };
}

/** A copy of a credential (same key pair) with its own counter, as an extracted or cloned authenticator. */
export function cloneCredential(credential: SoftCredential, signCount = credential.signCount): SoftCredential {
  return { ...credential, signCount };
}

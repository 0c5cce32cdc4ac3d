// API keys: `gh_<environment>_<prefix>_<secret>`. The fixed `gh_` start and the shape make a leaked key findable by
// secret scanners (regex below); `prefix` (12 hex digits of the key's id) finds the row; `secret` is 43 base62
// characters (256 bits). Only SHA-256 of the whole key is stored: 256 bits of entropy need no salt or slow hash.
import { randomInt, randomUUID } from 'node:crypto';
import { safeEqual, sha256 } from '../../platform/crypto.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 43 × log2(62) = 256.03 bits. */
export const SECRET_LENGTH = 43;

/** The pattern of a key, for secret scanners (docs/decisions.md) and for the parser. */
export const API_KEY_PATTERN = /^gh_([a-z0-9]{1,16})_([0-9a-f]{12})_([0-9A-Za-z]{43})$/;

export interface ParsedKey {
  environment: string;
  prefix: string;
}

export function parseApiKey(key: string): ParsedKey | null {
  const m = API_KEY_PATTERN.exec(key);
  return m ? { environment: m[1]!, prefix: m[2]! } : null;
}

/** Whether a bearer credential is meant as an API key (then it never goes to the JWT verifier). */
export const looksLikeApiKey = (token: string) => token.startsWith('gh_');

export function newApiKey(environment: string) {
  const id = randomUUID();
  const prefix = id.replace(/-/g, '').slice(0, 12);
  let secret = '';
  // randomInt is uniform (no modulo bias).
  for (let i = 0; i < SECRET_LENGTH; i++) secret += BASE62[randomInt(62)];
  const key = `gh_${environment}_${prefix}_${secret}`;
  return { id, prefix, key, hash: sha256(key), display: displayPrefix(environment, prefix) };
}

/** What lists show to tell keys apart: the non-secret start of the key. */
export const displayPrefix = (environment: string, prefix: string) => `gh_${environment}_${prefix}`;

export const keyMatches = (key: string, storedHash: string) => safeEqual(sha256(key), storedHash);

// CIDR lists are shared with the tenants' IP allow-lists: one matcher, in src/platform/cidr.ts.
export { ipAllowed, normaliseCidr, normaliseIp } from '../../platform/cidr.js';

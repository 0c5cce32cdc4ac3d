// API keys: `gh_<environment>_<prefix>_<secret>`. The fixed `gh_` start and the shape make a leaked key findable by
// secret scanners (regex below); `prefix` (12 hex digits of the key's id) finds the row; `secret` is 43 base62
// characters (256 bits). Only SHA-256 of the whole key is stored: 256 bits of entropy need no salt or slow hash.
import { randomInt, randomUUID } from 'node:crypto';
import ipaddr from 'ipaddr.js';
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

/** A CIDR block normalised (`10.0.0.1/8` → `10.0.0.0/8`, IPv6 compressed), or null when it is not one. */
export function normaliseCidr(cidr: string): string | null {
  const c = cidr.trim();
  // Dotted quads only: ipaddr.js also reads `10.1/8` or `0x0a.0.0.0/8`, which nobody means in an allow-list.
  const v4 = ipaddr.IPv4.isValidCIDRFourPartDecimal(c);
  if (!v4 && !(c.includes(':') && ipaddr.IPv6.isValidCIDR(c))) return null;
  const bits = Number(c.slice(c.lastIndexOf('/') + 1));
  const network = v4 ? ipaddr.IPv4.networkAddressFromCIDR(c) : ipaddr.IPv6.networkAddressFromCIDR(c);
  return `${network.toString()}/${bits}`;
}

/** The client address as one form: an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) counts as IPv4. */
export function normaliseIp(ip: string): string | null {
  if (!ipaddr.isValid(ip)) return null;
  return ipaddr.process(ip).toString();
}

/** Whether `ip` lies in one of the blocks; an empty list allows every address. */
export function ipAllowed(ip: string, cidrs: readonly string[]): boolean {
  if (cidrs.length === 0) return true;
  if (!ipaddr.isValid(ip)) return false;
  const addr = ipaddr.process(ip);
  return cidrs.some((c) => {
    try {
      const range = ipaddr.parseCIDR(c);
      return range[0].kind() === addr.kind() && addr.match(range);
    } catch {
      return false;
    }
  });
}

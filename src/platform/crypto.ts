import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A high-entropy opaque token (refresh token, tempToken, reset link, exchange code). */
export const randomToken = (bytes = 32) => randomBytes(bytes).toString('base64url');

/** Tokens are stored as SHA-256: they carry 256 bits of entropy, so no salt or slow hash is needed. */
export const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

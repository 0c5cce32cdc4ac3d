// Verified access tokens, so a token's EdDSA signature is checked once and not on every request it is sent with.
// Only what verification proved is kept (the claims); liveness (session, user, membership) is still checked on every
// request (liveness-cache.ts), so a revoked session, a disabled user or a removed membership is refused on
// the next request as before.
import type { AccessClaims } from './tokens.js';

interface Entry {
  claims: AccessClaims;
  /** `exp` in ms: the entry is dead from then on, as the token is. */
  expiresAt: number;
}

export class VerifiedTokenCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    /** Bound on entries; the oldest inserted goes first. */
    private readonly max = 10_000,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The claims of a token verified before, unless its `exp` has passed at `nowMs`. */
  get(token: string, nowMs: number): AccessClaims | null {
    const hit = this.entries.get(token);
    if (!hit) return null;
    if (hit.expiresAt <= nowMs) {
      this.entries.delete(token);
      return null;
    }
    return hit.claims;
  }

  set(token: string, claims: AccessClaims, expSeconds: number): void {
    if (this.entries.size >= this.max) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(token, { claims, expiresAt: expSeconds * 1000 });
  }

  clear(): void {
    this.entries.clear();
  }
}

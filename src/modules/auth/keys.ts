// Ed25519 signing keys: generated on first start, private half sealed in the database, public halves
// published as JWKS. Every instance loads the same keys; an unknown kid triggers one reload (rotation).
import { randomUUID } from 'node:crypto';
import type { Db, Executor } from '../../db/connect.js';
import { exportJWK, generateKeyPair, importJWK, type JWK, type CryptoKey } from 'jose';
import type { SecretBox } from '../../platform/secret-box.js';
import { openAs, sealAs } from '../../db/sealed-catalogue.js';
import {
  hasActiveSigningKey,
  insertSigningKey,
  listSigningKeys,
  lockSigningKeys,
  retireActiveSigningKey,
} from './repo.js';

/** Signing keys are re-read at most this often (rotation reaches every instance within it). */
const RELOAD_MS = 60_000;

interface LoadedKey {
  kid: string;
  publicJwk: JWK;
  publicKey: CryptoKey;
}

export class KeyRing {
  private signing!: { kid: string; privateKey: CryptoKey };
  private verifying = new Map<string, LoadedKey>();
  private lastReload = 0;
  private reloading: Promise<void> | null = null;

  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    /** How long a retired key stays published: the access-token lifetime plus the reload interval. */
    private readonly retiredGraceMs = 15 * 60_000 + 2 * RELOAD_MS,
  ) {}

  /** Loads the keys, creating the first one if none exists (instances racing on first start agree on one). */
  async init(): Promise<void> {
    await this.db.transaction(async (tx) => {
      await lockSigningKeys(tx);
      if (await hasActiveSigningKey(tx)) return;
      await this.insertKey(tx);
    });
    await this.load();
  }

  private async insertKey(tx: Executor): Promise<string> {
    const { publicKey, privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const kid = randomUUID();
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: 'EdDSA', use: 'sig' };
    const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: 'EdDSA' };
    await insertSigningKey(tx, {
      kid,
      publicJwk,
      privateJwkEnc: sealAs(this.box, 'signingKey', JSON.stringify(privateJwk), kid),
    });
    return kid;
  }

  /**
   * A new active key; the previous one is retired but stays published (JWKS) for retiredGraceMs, so tokens it signed
   * verify until they expire. Running instances sign with the new key from their next reload (at most RELOAD_MS).
   */
  async rotate(tx: Executor, now: Date): Promise<{ kid: string; retiredKid: string | null }> {
    await lockSigningKeys(tx);
    const retiredKid = await retireActiveSigningKey(tx, now);
    const kid = await this.insertKey(tx);
    return { kid, retiredKid };
  }

  private async load(): Promise<void> {
    const rows = await listSigningKeys(this.db);
    const verifying = new Map<string, LoadedKey>();
    const publishedSince = Date.now() - this.retiredGraceMs;
    for (const row of rows) {
      if (!row.active && row.retiredAt && row.retiredAt.getTime() < publishedSince) continue;
      const publicJwk = row.publicJwk as JWK;
      verifying.set(row.kid, {
        kid: row.kid,
        publicJwk,
        publicKey: (await importJWK(publicJwk, 'EdDSA')) as CryptoKey,
      });
      if (row.active) {
        const privateJwk = JSON.parse(openAs(this.box, 'signingKey', row.privateJwkEnc, row.kid)) as JWK;
        this.signing = { kid: row.kid, privateKey: (await importJWK(privateJwk, 'EdDSA')) as CryptoKey };
      }
    }
    this.verifying = verifying;
    this.lastReload = Date.now();
  }

  signingKey() {
    // Picks up a rotation made elsewhere (the CLI, another instance) without blocking the caller.
    if (Date.now() - this.lastReload > RELOAD_MS && !this.reloading) {
      this.reloading = this.load()
        .catch(() => {})
        .finally(() => (this.reloading = null));
    }
    return this.signing;
  }

  /** Public key for a kid; reloads at most once every 10 s when another instance may have rotated. */
  async verificationKey(kid: string): Promise<CryptoKey | undefined> {
    const hit = this.verifying.get(kid);
    if (hit) return hit.publicKey;
    if (Date.now() - this.lastReload > 10_000) {
      await this.load();
      return this.verifying.get(kid)?.publicKey;
    }
    return undefined;
  }

  jwks(): { keys: JWK[] } {
    return { keys: [...this.verifying.values()].map((k) => k.publicJwk) };
  }
}

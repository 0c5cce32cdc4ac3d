// AES-256-GCM for secrets at rest; what is sealed, where, and with which associated data is src/db/sealed-catalogue.ts.
// Format: gh1.<keyId>.<iv>.<ciphertext+tag> (base64url). The key id lets old keys decrypt after rotation.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

export function parseKey(v: string): Buffer {
  const buf = /^[0-9a-fA-F]{64}$/.test(v) ? Buffer.from(v, 'hex') : Buffer.from(v, 'base64');
  if (buf.length !== 32) throw new Error('encryption key must be 32 bytes');
  return buf;
}

const keyId = (key: Buffer) => createHash('sha256').update(key).digest('hex').slice(0, 8);

export class SecretBox {
  private readonly current: { id: string; key: Buffer };
  private readonly keys = new Map<string, Buffer>();

  constructor(currentKey: Buffer, previousKeys: Buffer[] = []) {
    this.current = { id: keyId(currentKey), key: currentKey };
    for (const k of [currentKey, ...previousKeys]) this.keys.set(keyId(k), k);
  }

  seal(plaintext: string, aad = ''): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(Buffer.from(aad));
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return ['gh1', this.current.id, iv.toString('base64url'), ct.toString('base64url')].join('.');
  }

  open(sealed: string, aad = ''): string {
    const [version, id, ivB64, ctB64] = sealed.split('.');
    if (version !== 'gh1' || !id || !ivB64 || !ctB64) throw new Error('not a sealed value');
    const key = this.keys.get(id);
    if (!key) throw new Error(`no key ${id} to open this value (rotated away?)`);
    const data = Buffer.from(ctB64, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(ivB64, 'base64url'));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(data.subarray(data.length - 16));
    return Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]).toString('utf8');
  }

  /** Id of the current key: the second field of every value it seals. */
  get currentKeyId(): string {
    return this.current.id;
  }

  /** Whether a sealed value was made with an older key (for re-encryption jobs). */
  isStale(sealed: string): boolean {
    return sealed.split('.')[1] !== this.current.id;
  }
}

// TOTP (RFC 6238: SHA-1, 6 digits, 30 s, one step of drift), recovery codes and one-time SMS codes.
import { randomBytes, randomInt } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { sha256 } from '../../platform/crypto.js';

export const TOTP_PERIOD = 30;
export const ISSUER = 'Gatehouse';

export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

export function totpFor(secretBase32: string, label = 'account'): TOTP {
  return new TOTP({
    issuer: ISSUER,
    label,
    algorithm: 'SHA1',
    digits: 6,
    period: TOTP_PERIOD,
    secret: Secret.fromBase32(secretBase32),
  });
}

/** The time step a code matches (current ± 1), or null. The caller refuses a step already used. */
export function matchTotp(secretBase32: string, code: string, nowMs: number): number | null {
  const delta = totpFor(secretBase32).validate({ token: code, timestamp: nowMs, window: 1 });
  if (delta === null) return null;
  return Math.floor(nowMs / 1000 / TOTP_PERIOD) + delta;
}

/** qrcode is loaded with the first TOTP setup, not at start. */
export async function qrDataUrl(otpauthUrl: string): Promise<string> {
  const { default: QRCode } = await import('qrcode');
  return QRCode.toDataURL(otpauthUrl, { errorCorrectionLevel: 'M', margin: 1, width: 240 });
}

const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789'; // no 0/o, 1/l/i
/** 10 codes of 16 characters (~79 bits each): stored only as SHA-256, so a leaked table does not give them away. */
export function newRecoveryCodes(n = 10): string[] {
  return Array.from({ length: n }, () => {
    const chars = Array.from({ length: 16 }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');
    return chars.match(/.{4}/g)!.join('-');
  });
}

export const normaliseRecoveryCode = (code: string) => code.trim().toLowerCase().replace(/[\s-]/g, '');
export const hashRecoveryCode = (code: string) => sha256(`recovery:${normaliseRecoveryCode(code)}`);
export const looksLikeRecoveryCode = (code: string) => /^[a-z0-9]{16}$/.test(normaliseRecoveryCode(code));

export const newSmsCode = () => String(randomInt(0, 1_000_000)).padStart(6, '0');
export const hashSmsCode = (flowSalt: string, code: string) => sha256(`sms:${flowSalt}:${code}`);
export const randomSalt = () => randomBytes(16).toString('hex');

// Access tokens (EdDSA JWTs): signed at sign-in, refresh and client_credentials, verified on every request. The keys
// come from a SigningKeys (the auth module's KeyRing: generated, sealed and rotated there, wired in src/deps.ts).
import { SignJWT, jwtVerify, decodeProtectedHeader, errors as joseErrors, type CryptoKey } from 'jose';

/** The signing keys tokens are signed and verified with (implemented by modules/auth/keys.ts KeyRing). */
export interface SigningKeys {
  /** The active key: tokens are signed with it, its kid in the header. */
  signingKey(): { kid: string; privateKey: CryptoKey };
  /** The public key of a kid (active or recently retired), or nothing when unknown. */
  verificationKey(kid: string): Promise<CryptoKey | undefined | null>;
}

export interface AccessClaims {
  sub: string;
  sid: string;
  scope: 'partner' | 'organization' | null;
  partnerId: string | null;
  orgId: string | null;
  roleId: string | null;
  mfa: boolean;
  /** `auth_time`: the last password or second-factor proof of the session (epoch seconds); null when none. */
  authTime: Date | null;
  /** `client_id` (RFC 9068): set on a service account's token (client_credentials); `sid` is then the key's id. */
  clientId?: string | null;
}

export class TokenService {
  constructor(
    private readonly keys: SigningKeys,
    private readonly issuer: string,
    private readonly ttlSeconds: number,
    private readonly now: () => Date,
  ) {}

  get audience() {
    return 'gatehouse-api';
  }

  async sign(claims: AccessClaims): Promise<string> {
    const { kid, privateKey } = this.keys.signingKey();
    const iat = Math.floor(this.now().getTime() / 1000);
    const authTime = claims.authTime ? { auth_time: Math.floor(claims.authTime.getTime() / 1000) } : {};
    const client = claims.clientId ? { client_id: claims.clientId } : {};
    return new SignJWT({
      sid: claims.sid,
      scope: claims.scope,
      partnerId: claims.partnerId,
      orgId: claims.orgId,
      roleId: claims.roleId,
      mfa: claims.mfa,
      ...authTime,
      ...client,
    })
      .setProtectedHeader({ alg: 'EdDSA', kid, typ: 'at+jwt' })
      .setSubject(claims.sub)
      .setIssuer(this.issuer)
      .setAudience(this.audience)
      .setIssuedAt(iat)
      .setExpirationTime(iat + this.ttlSeconds)
      .sign(privateKey);
  }

  /** Verifies signature, issuer, audience and expiry; returns null for any invalid token. */
  async verify(token: string): Promise<AccessClaims | null> {
    try {
      const { kid, alg } = decodeProtectedHeader(token);
      if (alg !== 'EdDSA' || typeof kid !== 'string') return null;
      const key = await this.keys.verificationKey(kid);
      if (!key) return null;
      const { payload } = await jwtVerify(token, key, {
        issuer: this.issuer,
        audience: this.audience,
        algorithms: ['EdDSA'],
        currentDate: this.now(),
        requiredClaims: ['sub', 'sid', 'exp', 'iat'],
        typ: 'at+jwt',
      });
      if (typeof payload.sid !== 'string' || typeof payload.sub !== 'string') return null;
      return {
        sub: payload.sub,
        sid: payload.sid,
        scope: payload.scope === 'partner' || payload.scope === 'organization' ? payload.scope : null,
        partnerId: typeof payload.partnerId === 'string' ? payload.partnerId : null,
        orgId: typeof payload.orgId === 'string' ? payload.orgId : null,
        roleId: typeof payload.roleId === 'string' ? payload.roleId : null,
        mfa: payload.mfa === true,
        authTime: typeof payload.auth_time === 'number' ? new Date(payload.auth_time * 1000) : null,
        clientId: typeof payload.client_id === 'string' ? payload.client_id : null,
      };
    } catch (err) {
      if (err instanceof joseErrors.JOSEError || err instanceof TypeError || err instanceof SyntaxError) return null;
      throw err;
    }
  }
}

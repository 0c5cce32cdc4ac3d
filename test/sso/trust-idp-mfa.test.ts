// trustIdpMfa end to end against the real OpenID Provider (oidc-provider): an ID token whose amr names a second factor
// yields tokens with mfa:true only when the provider trusts the IdP's MFA; otherwise, and without such an amr, as before.
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { callbackFor, runSsoLogin, startOidcProvider, type TestIdp } from '../support/oidc.js';
import { exchange, idpUser, orgWithProvider, ORG_TECHNICIAN_ROLE_ID } from './helpers.js';

let t: TestApp;
let idp: TestIdp;

beforeAll(async () => {
  t = await startApp({ SSO_ALLOW_INSECURE_ISSUERS: 'true' });
  idp = await startOidcProvider({ redirectUris: [callbackFor(t.baseUrl)] });
});
afterAll(async () => {
  await t?.close();
  await idp?.close();
});

/** Signs a new user in through a fresh provider with the given trust, the IdP reporting `amr`; the access token's claims. */
async function signIn(trustIdpMfa: boolean | undefined, amr: string[]) {
  const s = await orgWithProvider(t, idp, { autoProvision: true, defaultRoleId: ORG_TECHNICIAN_ROLE_ID });
  if (trustIdpMfa !== undefined) {
    const patched = await s.api.patch(`/sso/providers/${s.provider.id}`, { trustIdpMfa });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.trustIdpMfa).toBe(trustIdpMfa);
  }
  idp.amr = amr;
  const r = await runSsoLogin(t, s.org.id, {
    idp,
    user: idpUser(`u-${Math.random().toString(36).slice(2, 8)}@${s.domain}`),
  });
  expect(r.error).toBeNull();
  const res = await exchange(t, r.ssoCode!);
  expect(res.status, res.text).toBe(200);
  return { claims: decodeJwt(res.body.accessToken), s };
}

describe("trustIdpMfa: the IdP's second factor counts only when the provider trusts it", () => {
  it('amr with a second factor (otp, hwk, mfa) and trustIdpMfa on → mfa:true', async () => {
    for (const amr of [['pwd', 'otp'], ['hwk'], ['mfa']])
      expect((await signIn(true, amr)).claims.mfa, amr.join()).toBe(true);
  });

  it('the same amr with trustIdpMfa off (the default) → mfa:false, as before the setting existed', async () => {
    expect((await signIn(undefined, ['pwd', 'otp'])).claims.mfa).toBe(false);
    expect((await signIn(false, ['mfa'])).claims.mfa).toBe(false);
  });

  it('trustIdpMfa on but amr without a second factor (pwd only, or none) → mfa:false', async () => {
    expect((await signIn(true, ['pwd'])).claims.mfa).toBe(false);
    expect((await signIn(true, [])).claims.mfa).toBe(false);
  });
});

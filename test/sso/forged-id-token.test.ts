// A forged ID token is refused: the token endpoint of a hand-rolled provider signs with a key it does not publish,
// names another audience, echoes a wrong nonce, names another issuer, is expired, or is unsigned. The same provider
// in honest mode completes the login, so each refusal is the forgery's doing.
import { eq, sql } from 'drizzle-orm';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogs, users } from '../../src/db/schema/index.js';
import { startApp, type TestApp } from '../support/app.js';
import { callbackFor, runSsoLogin, startForgingIdp, type ForgeryMode, type ForgingIdp } from '../support/oidc.js';
import { exchange, idpUser, orgWithProvider, ORG_TECHNICIAN_ROLE_ID } from './helpers.js';

let t: TestApp;
let idp: ForgingIdp;
let org: Awaited<ReturnType<typeof orgWithProvider>>;

beforeAll(async () => {
  t = await startApp({ SSO_ALLOW_INSECURE_ISSUERS: 'true' });
  idp = await startForgingIdp({ redirectUris: [callbackFor(t.baseUrl)] });
  org = await orgWithProvider(t, idp, { autoProvision: true, defaultRoleId: ORG_TECHNICIAN_ROLE_ID });
});
afterAll(async () => {
  await t?.close();
  await idp?.close();
});

async function loginWith(mode: ForgeryMode, local: string) {
  idp.mode = mode;
  const who = idpUser(`${local}@${org.domain}`);
  const issuedBefore = idp.issuedIdTokens.length;
  const r = await runSsoLogin(t, org.org.id, { idp, user: who });
  expect(idp.issuedIdTokens.length, 'the token endpoint was reached').toBe(issuedBefore + 1);
  return { r, who, idToken: idp.issuedIdTokens.at(-1)! };
}

const accounts = (email: string) => t.deps.db.select().from(users).where(sql`lower(${users.email}) = lower(${email})`);

describe('the hand-rolled provider is honest unless told otherwise', () => {
  it('completes the login with a correctly signed ID token (the control case)', async () => {
    const { r, who, idToken } = await loginWith('honest', 'control');
    expect(r.error).toBeNull();
    expect(decodeJwt(idToken)).toMatchObject({ iss: idp.issuer, aud: idp.clientId, sub: who.sub });
    const res = await exchange(t, r.ssoCode!);
    expect(res.status, res.text).toBe(200);
    expect(res.body.user.email).toBe(who.email);
  });
});

describe('a forged ID token ends the flow with error=id_token_invalid and signs nobody in', () => {
  const cases: [ForgeryMode, string][] = [
    ['wrong_key', 'signed with a key the provider does not publish (same kid)'],
    ['wrong_audience', 'issued to another client (aud)'],
    ['wrong_nonce', 'carrying a nonce other than the one this flow sent'],
    ['wrong_issuer', 'naming another issuer'],
    ['expired', 'expired'],
    ['unsigned', 'unsigned (alg none)'],
  ];
  for (const [mode, what] of cases) {
    it(`refuses an ID token ${what}`, async () => {
      const { r, who, idToken } = await loginWith(mode, `forged.${mode}`);
      expect(r.location).toBe(`${t.deps.config.appUrl}/login?error=id_token_invalid`);
      expect(r.ssoCode).toBeNull();
      expect(await accounts(who.email)).toHaveLength(0);
      const failed = await t.deps.db.select().from(auditLogs).where(eq(auditLogs.action, 'auth.login.failed'));
      expect(failed.at(-1)).toMatchObject({
        resourceId: org.provider.id,
        details: { method: 'sso', reason: 'id_token_invalid' },
      });
      if (mode === 'wrong_key') expect(decodeProtectedHeader(idToken).kid).toBeTruthy();
    });
  }

  it('is honest again afterwards: the refusals came from the tokens, not from a broken provider', async () => {
    const { r } = await loginWith('honest', 'control.after');
    expect(r.ssoCode).toBeTruthy();
  });
});

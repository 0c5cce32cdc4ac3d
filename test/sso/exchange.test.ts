// The SSO exchange code: single use, 60 seconds, valid on any instance (two replicas on one database and store).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, startPeer, type PeerApp, type TestApp } from '../support/app.js';
import { callbackFor, runSsoLogin, startOidcProvider, type TestIdp } from '../support/oidc.js';
import { exchange, idpUser, orgWithProvider, ORG_TECHNICIAN_ROLE_ID } from './helpers.js';

let t: TestApp;
let peer: PeerApp;
let idp: TestIdp;

beforeAll(async () => {
  t = await startApp({ SSO_ALLOW_INSECURE_ISSUERS: 'true' });
  peer = await startPeer(t);
  idp = await startOidcProvider({ redirectUris: [callbackFor(t.baseUrl)] });
});
afterAll(async () => {
  await peer?.close();
  await t?.close();
  await idp?.close();
});

async function freshCode() {
  const s = await orgWithProvider(t, idp, { autoProvision: true, defaultRoleId: ORG_TECHNICIAN_ROLE_ID });
  const r = await runSsoLogin(t, s.org.id, { idp, user: idpUser(`user@${s.domain}`) });
  expect(r.ssoCode, r.location ?? '').toBeTruthy();
  return { ...s, code: r.ssoCode! };
}

describe('an exchange code is single-use', () => {
  it('yields tokens once; the replay answers 401 invalid_exchange_code', async () => {
    const { code } = await freshCode();
    const first = await exchange(t, code);
    expect(first.status, first.text).toBe(200);
    expect(first.body.accessToken).toBeTruthy();
    const replay = await exchange(t, code);
    expect(replay.status).toBe(401);
    expect(replay.body).toMatchObject({ code: 'invalid_exchange_code' });
    expect(replay.headers.getSetCookie()).toHaveLength(0);
  });

  it('gives tokens to exactly one of several concurrent exchanges, across both instances', async () => {
    const { code } = await freshCode();
    const answers = await Promise.all([
      exchange(t, code),
      exchange(peer, code),
      exchange(t, code),
      exchange(peer, code),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 401, 401, 401]);
  });

  it('refuses a code that was never issued', async () => {
    const res = await exchange(t, 'A'.repeat(43));
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('invalid_exchange_code');
    const malformed = await t.client().post('/sso/exchange', { code: 'short' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe('validation_failed');
  });
});

describe('an exchange code works on any instance', () => {
  it('is redeemed on a second instance (same database and store), and then on neither', async () => {
    const { code, org } = await freshCode();
    const onPeer = await exchange(peer, code);
    expect(onPeer.status, onPeer.text).toBe(200);
    expect(onPeer.body.user).toMatchObject({ orgId: org.id, roleId: ORG_TECHNICIAN_ROLE_ID });
    // The tokens the peer minted work on the first instance too.
    expect((await t.client().withToken(onPeer.body.accessToken).me()).status).toBe(200);
    expect((await exchange(t, code)).status).toBe(401);
    expect((await exchange(peer, code)).status).toBe(401);
  });
});

describe('an exchange code lives 60 seconds', () => {
  it('still works after 59 seconds', async () => {
    const { code } = await freshCode();
    t.clock.advance(59_000);
    expect((await exchange(peer, code)).status).toBe(200);
  });

  it('is refused after 60 seconds, on either instance', async () => {
    const { code } = await freshCode();
    t.clock.advance(61_000);
    const late = await exchange(t, code);
    expect(late.status).toBe(401);
    expect(late.body.code).toBe('invalid_exchange_code');
    expect((await exchange(peer, code)).status).toBe(401);
  });
});

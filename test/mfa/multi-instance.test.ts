// Two replicas over one database and one shared store: pending sign-ins, WebAuthn challenges, recovery codes and
// the MFA verification limit hold across instances, and revocations bite on the other instance at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, startPeer, type PeerApp, type TestApp } from '../support/app.js';
import type { ApiClient } from '../support/client.js';
import { createCredential, getAssertion } from '../support/webauthn.js';
import {
  expectError,
  freshTotp,
  member,
  PASSWORD,
  registerPasskey,
  signIn,
  statuses,
  totpCode,
  totpMember,
  userRow,
} from './helpers.js';

let t: TestApp;
let peer: PeerApp;
beforeAll(async () => {
  t = await startApp();
  peer = await startPeer(t);
});
afterAll(async () => {
  await peer?.close();
  await t?.close();
});

/** The same client state (token, cookies) pointed at the peer. */
function onPeer(api: ApiClient): ApiClient {
  const c = peer.client();
  c.token = api.token;
  for (const [k, v] of api.cookies) c.cookies.set(k, v);
  return c;
}

async function loginOn(client: ApiClient, email: string) {
  const res = await client.post('/auth/login', { email, password: PASSWORD });
  expect(res.status, res.text).toBe(200);
  return res.body.tempToken as string;
}

describe('pending sign-ins and challenges are shared', () => {
  it('a tempToken from one instance completes on the other, and is then dead on both', async () => {
    const m = await totpMember(t);
    const tempToken = await loginOn(t.client(), m.email);
    const ok = await peer.client().post('/auth/mfa/verify', { tempToken, code: freshTotp(t, m.secret) });
    expect(ok.status, ok.text).toBe(200);
    expectError(
      await t.client().post('/auth/mfa/verify', { tempToken, code: m.recoveryCodes[0]! }),
      401,
      'invalid_temp_token',
    );
  });

  it('a TOTP step used on one instance is refused on the other', async () => {
    const m = await totpMember(t);
    const code = freshTotp(t, m.secret);
    const a = await loginOn(t.client(), m.email);
    const b = await loginOn(peer.client(), m.email);
    expect((await t.client().post('/auth/mfa/verify', { tempToken: a, code })).status).toBe(200);
    expectError(await peer.client().post('/auth/mfa/verify', { tempToken: b, code }), 401, 'invalid_mfa_code');
  });

  it('the same recovery code raced on both instances: exactly one 200', async () => {
    const m = await totpMember(t);
    const a = await loginOn(t.client(), m.email);
    const b = await loginOn(peer.client(), m.email);
    const code = m.recoveryCodes[4]!;
    const results = await Promise.all([
      t.client().post('/auth/mfa/verify', { tempToken: a, code }),
      peer.client().post('/auth/mfa/verify', { tempToken: b, code }),
    ]);
    expect(statuses(results)).toEqual([200, 401]);
    expect((await userRow(t, m.user.id)).mfaRecoveryCodes).toHaveLength(9);
  });

  it('a registration challenge issued on one instance verifies on the other, once', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const opts = await api.post('/auth/passkeys/register/options', { currentPassword: PASSWORD, name: 'Cross' });
    const { response } = createCredential(opts.body.options, t.deps.config.appUrl);
    const results = await Promise.all([
      onPeer(api).post('/auth/passkeys/register/verify', { credential: response }),
      api.post('/auth/passkeys/register/verify', { credential: response }),
    ]);
    expect(statuses(results)).toEqual([201, 400]);
  });

  it('a sign-in assertion sent to both instances at once: exactly one 200', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const { credential } = await registerPasskey(t, api);
    const tempToken = await loginOn(t.client(), m.email);
    const opts = await peer.client().post('/auth/mfa/passkey/options', { tempToken });
    const assertion = getAssertion(opts.body.options, t.deps.config.appUrl, credential);
    const results = await Promise.all([
      t.client().post('/auth/mfa/passkey/verify', { tempToken, credential: assertion }),
      peer.client().post('/auth/mfa/passkey/verify', { tempToken, credential: assertion }),
    ]);
    expect(statuses(results)).toEqual([200, 400]);
  });
});

describe('limits and revocations hold across instances', () => {
  it('the MFA verification limit is per user across instances', async () => {
    const m = await totpMember(t); // two hits already (setup confirmation and sign-in)
    const { limit } = t.deps.config.rateLimits.mfaVerify;
    const wrong = () => (totpCode(t, m.secret) === '000000' ? '111111' : '000000');
    let spent = 2;
    let i = 0;
    while (spent < limit) {
      const client = i++ % 2 ? peer.client() : t.client();
      const tempToken = await loginOn(client, m.email);
      for (let k = 0; k < 4 && spent < limit; k++, spent++)
        expectError(await client.post('/auth/mfa/verify', { tempToken, code: wrong() }), 401, 'invalid_mfa_code');
    }
    for (const client of [t.client(), peer.client()]) {
      const tempToken = await loginOn(client, m.email);
      expectError(
        await client.post('/auth/mfa/verify', { tempToken, code: totpCode(t, m.secret, 1) }),
        429,
        'rate_limited',
      );
    }
  });

  it('disabling MFA on one instance ends the other sessions on the other instance at once', async () => {
    const m = await totpMember(t);
    const elsewhere = onPeer(
      await (async () => {
        const c = t.client();
        const tempToken = await loginOn(c, m.email);
        const res = await c.post('/auth/mfa/verify', { tempToken, code: freshTotp(t, m.secret) });
        c.token = res.body.accessToken;
        return c;
      })(),
    );
    expect((await elsewhere.me()).status).toBe(200);
    const disabled = await onPeer(m.api).post('/auth/mfa/disable', {
      currentPassword: PASSWORD,
      code: freshTotp(t, m.secret),
    });
    expect(disabled.status, disabled.text).toBe(200);
    expectError(await elsewhere.me(), 401, 'unauthenticated');
  });

  it("an admin reset on one instance ends the user's sessions on the other at once", async () => {
    const admin = await totpMember(t);
    const target = await totpMember(t, { partnerId: admin.partnerId, orgId: admin.orgId! });
    const targetOnPeer = onPeer(target.api);
    expect((await targetOnPeer.me()).status).toBe(200);
    expect((await admin.api.post(`/users/${target.user.id}/mfa/reset`)).status).toBe(200);
    expectError(await targetOnPeer.me(), 401, 'unauthenticated');
  });
});

// A wrong currentPassword answers 400 invalid_credentials (401 would mean the bearer token is dead) with the envelope's
// `error` text matching the status ("Bad Request", never "Unauthorized") on every route that re-checks the current
// password, while a failed sign-in stays 401 "Unauthorized".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import type { ApiResponse } from '../support/client.js';
import { PASSWORD, signIn } from '../auth/helpers.js';
import { member, registerPasskey, totpMember, freshTotp } from '../mfa/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp({ RATE_LIMIT_LOGIN: '1000/900', RATE_LIMIT_PASSWORD_RECHECK: '1000/900' });
});
afterAll(async () => t?.close());

const WRONG = 'not the password at all 91';
function expectWrongCurrentPassword(res: ApiResponse, route: string) {
  expect({ status: res.status, body: res.body }, route).toEqual({
    status: 400,
    body: { error: 'Bad Request', message: expect.any(String), code: 'invalid_credentials' },
  });
}

describe('a wrong currentPassword answers 400 invalid_credentials with the error text of a 400', () => {
  it('change-password, passkey registration, passkey delete and MFA disable', async () => {
    const m = await totpMember(t);
    expectWrongCurrentPassword(
      await m.api.post('/auth/change-password', { currentPassword: WRONG, newPassword: 'Glacier-7f3a91-Saffron!' }),
      'change-password',
    );
    expectWrongCurrentPassword(
      await m.api.post('/auth/passkeys/register/options', { currentPassword: WRONG, name: 'Key' }),
      'passkeys/register/options',
    );
    const { passkey } = await registerPasskey(t, m.api);
    expectWrongCurrentPassword(
      await m.api.delete(`/auth/passkeys/${passkey.id}`, { body: { currentPassword: WRONG } }),
      'DELETE passkeys/:id',
    );
    expectWrongCurrentPassword(
      await m.api.post('/auth/mfa/disable', { currentPassword: WRONG, code: freshTotp(t, m.secret) }),
      'mfa/disable',
    );
  });

  it('a wrong password at sign-in stays 401 invalid_credentials "Unauthorized"', async () => {
    const m = await member(t);
    await signIn(t, m.email, PASSWORD);
    const res = await t.client().post('/auth/login', { email: m.email, password: WRONG });
    expect({ status: res.status, body: res.body }).toEqual({
      status: 401,
      body: { error: 'Unauthorized', message: expect.any(String), code: 'invalid_credentials' },
    });
  });
});

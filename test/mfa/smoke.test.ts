import { afterAll, beforeAll, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { totpFor } from '../../src/modules/mfa/codes.js';
import { PARTNER_ADMIN_ROLE_ID } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import { addPartnerMember, createPartner, createUser } from '../support/fixtures.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => t?.close());

it('a Partner Admin held by Force MFA enrols TOTP, then signs in with password + code', async () => {
  const password = 'a very long passphrase for tests 77';
  const partner = await createPartner(t);
  const user = await createUser(t, { password });
  await addPartnerMember(t, { partnerId: partner.id, userId: user.id, roleId: PARTNER_ADMIN_ROLE_ID });
  const api = t.client();
  const login = await api.post('/auth/login', { email: user.email, password });
  expect(login.body.mfaEnrollmentRequired).toBe(true);
  api.token = login.body.accessToken;
  expect((await api.get('/roles')).status).toBe(428);
  const setup = await api.post('/auth/mfa/setup');
  expect(setup.status, JSON.stringify(setup.body)).toBe(200);
  expect(setup.body.recoveryCodes).toHaveLength(10);
  expect(setup.body.qrCodeDataUrl).toMatch(/^data:image\/png;base64,/);
  const code = totpFor(setup.body.secret).generate({ timestamp: t.clock.now().getTime() });
  const enable = await api.post('/auth/mfa/enable', { code });
  expect(enable.status, JSON.stringify(enable.body)).toBe(200);
  expect(enable.body.recoveryCodes).toEqual(setup.body.recoveryCodes);
  expect(decodeJwt(enable.body.accessToken).mfa).toBe(true);
  api.token = enable.body.accessToken;
  expect((await api.get('/roles')).status).toBe(200);

  const second = t.client();
  const challenge = await second.post('/auth/login', { email: user.email, password });
  expect(challenge.body).toMatchObject({ mfaRequired: true, mfaMethod: 'totp', tempToken: expect.any(String) });
  expect(challenge.headers.getSetCookie()).toEqual([]);
  const reused = await second.post('/auth/mfa/verify', { tempToken: challenge.body.tempToken, code });
  expect(reused.body.code).toBe('invalid_mfa_code');
  t.clock.advance(30_000);
  const fresh = totpFor(setup.body.secret).generate({ timestamp: t.clock.now().getTime() });
  const ok = await second.post('/auth/mfa/verify', { tempToken: challenge.body.tempToken, code: fresh });
  expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  expect(decodeJwt(ok.body.accessToken).mfa).toBe(true);
  const again = await second.post('/auth/mfa/verify', {
    tempToken: challenge.body.tempToken,
    code: setup.body.recoveryCodes[0]!,
  });
  expect(again.body.code).toBe('invalid_temp_token');
});

// Registration limits count attempts per client address and per e-mail, and only attempts that could succeed:
// a body refused by validation or a weak password does not burn one (a newcomer's typos never lock them out).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { strongPassword } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp({
    ENABLE_REGISTRATION: 'true',
    TRUST_PROXY: 'true',
    RATE_LIMIT_REGISTER_PARTNER: '2/3600',
    RATE_LIMIT_REGISTER: '2/3600',
  });
});
afterAll(async () => t?.close());

const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });
const partnerBody = (email: string, password = strongPassword()) => ({
  companyName: `Co ${email}`,
  email,
  password,
  name: 'Reg User',
});
const email = () => `reg-${Math.random().toString(36).slice(2, 9)}@limits.test`;

describe('a refused registration body does not count against the limit', () => {
  it('five weak passwords and five invalid bodies from one address, then two registrations still succeed', async () => {
    const c = t.client();
    for (let i = 0; i < 5; i++) {
      const weak = await c.post('/auth/register-partner', partnerBody(email(), 'password'), from('198.51.100.1'));
      expect(weak.body.code).toBe('weak_password');
      const invalid = await c.post(
        '/auth/register-partner',
        { companyName: 'X', email: 'nope', password: strongPassword(), name: 'X' },
        from('198.51.100.1'),
      );
      expect(invalid.body.code).toBe('validation_failed');
    }
    for (let i = 0; i < 2; i++)
      expect((await c.post('/auth/register-partner', partnerBody(email()), from('198.51.100.1'))).status).toBe(201);
    const third = await c.post('/auth/register-partner', partnerBody(email()), from('198.51.100.1'));
    expect(third.status).toBe(429);
    expect(third.body.code).toBe('rate_limited');
  }, 120_000);
});

describe('registration attempts are counted per e-mail as well as per address', () => {
  it('one e-mail tried from many addresses is limited', async () => {
    const target = email();
    const c = t.client();
    // The first attempt creates the account; the second is a duplicate (409), which still counts.
    expect(
      (await c.post('/auth/register', { email: target, password: strongPassword(), name: 'A' }, from('203.0.113.1')))
        .status,
    ).toBe(201);
    expect(
      (await c.post('/auth/register', { email: target, password: strongPassword(), name: 'A' }, from('203.0.113.2')))
        .status,
    ).toBe(409);
    const third = await c.post(
      '/auth/register',
      { email: target.toUpperCase(), password: strongPassword(), name: 'A' },
      from('203.0.113.3'),
    );
    expect(third.status).toBe(429);
  });

  it('another address and another e-mail are not affected', async () => {
    expect(
      (
        await t
          .client()
          .post('/auth/register', { email: email(), password: strongPassword(), name: 'B' }, from('203.0.113.9'))
      ).status,
    ).toBe(201);
  });
});

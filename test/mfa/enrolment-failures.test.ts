// A wrong code while enrolling an authenticator app is a failed second-factor proof: audited and counted, like one at
// sign-in, and still limited by the second-factor attempt limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { auditOf, expectError, member, signIn, totpCode } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => t?.close());

const failures = async () =>
  (await t.deps.metrics.mfaVerifications.get()).values.find(
    (v) => v.labels.result === 'failure' && v.labels.method === 'totp',
  )?.value ?? 0;

describe('a wrong enrolment code is audited and counted', () => {
  it('each wrong code leaves an auth.mfa.setup.failed record and one failure in the metrics; the right one enrols', async () => {
    const m = await member(t);
    const api = await signIn(t, m.email);
    const setup = await api.post('/auth/mfa/setup');
    expect(setup.status, setup.text).toBe(200);
    const before = await failures();
    const right = totpCode(t, setup.body.secret);
    const wrong = right === '000000' ? '111111' : '000000';
    expectError(await api.post('/auth/mfa/enable', { code: wrong }), 401, 'invalid_mfa_code');
    expectError(await api.post('/auth/mfa/enable', { code: wrong }), 401, 'invalid_mfa_code');
    const records = await auditOf(t, 'auth.mfa.setup.failed', m.user.id);
    expect(records).toHaveLength(2);
    expect(records[0]).toMatchObject({ result: 'denied', actorUserId: m.user.id });
    expect((await failures()) - before).toBe(2);
    expect((await api.post('/auth/mfa/enable', { code: right })).status).toBe(200);
    expect(await auditOf(t, 'auth.mfa.setup.failed', m.user.id)).toHaveLength(2);
  });
});

// Recovery codes: ten, stored hashed, shown once, each good once (atomically, also under
// concurrency), all replaced at once by POST /auth/mfa/recovery-codes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashRecoveryCode } from '../../src/modules/mfa/codes.js';
import { startApp, type TestApp } from '../support/app.js';
import { sessionFor } from '../support/fixtures.js';
import { ORG_ADMIN_ROLE_ID } from '../../src/modules/roles/catalog.js';
import { auditOf, challenge, claimsOf, expectError, member, signIn, statuses, totpMember, userRow } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => t?.close());

describe('recovery codes are ten, distinct, well formed and stored only as hashes', () => {
  it('ten distinct codes of 16 characters; the row holds exactly their hashes', async () => {
    const m = await totpMember(t);
    expect(m.recoveryCodes).toHaveLength(10);
    expect(new Set(m.recoveryCodes).size).toBe(10);
    for (const c of m.recoveryCodes) expect(c).toMatch(/^[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}$/);
    const stored = (await userRow(t, m.user.id)).mfaRecoveryCodes!;
    expect([...stored].sort()).toEqual(m.recoveryCodes.map(hashRecoveryCode).sort());
  });

  it('they are shown once: no later response carries them', async () => {
    const m = await totpMember(t);
    const texts = [(await m.api.me()).text, (await m.api.usersMe()).text, (await m.api.get('/auth/passkeys')).text];
    for (const text of texts) for (const c of m.recoveryCodes) expect(text).not.toContain(c);
  });
});

describe('a recovery code completes a sign-in once', () => {
  it('a recovery code in place of the TOTP code signs in with mfa: true and is then spent', async () => {
    const m = await totpMember(t);
    const code = m.recoveryCodes[3]!;
    const first = await challenge(t, m.email);
    const ok = await first.api.post('/auth/mfa/verify', { tempToken: first.body.tempToken, code });
    expect(ok.status, ok.text).toBe(200);
    expect(claimsOf(ok.body.accessToken).mfa).toBe(true);
    expect((await userRow(t, m.user.id)).mfaRecoveryCodes).toHaveLength(9);
    const second = await challenge(t, m.email);
    expectError(
      await second.api.post('/auth/mfa/verify', { tempToken: second.body.tempToken, code }),
      401,
      'invalid_mfa_code',
    );
    const logins = (await auditOf(t, 'user.login')).filter((r) => r.actorUserId === m.user.id);
    expect(logins.at(-1)!.details).toMatchObject({ method: 'password+recovery_code' });
  });

  it('case, dashes and spaces do not matter', async () => {
    const m = await totpMember(t);
    const typed = ` ${m.recoveryCodes[0]!.toUpperCase().replace(/-/g, ' ')} `;
    const { api, body } = await challenge(t, m.email);
    const ok = await api.post('/auth/mfa/verify', { tempToken: body.tempToken, code: typed });
    expect(ok.status, ok.text).toBe(200);
  });

  it('a code of another account is refused', async () => {
    const a = await totpMember(t);
    const b = await totpMember(t);
    const { api, body } = await challenge(t, a.email);
    expectError(
      await api.post('/auth/mfa/verify', { tempToken: body.tempToken, code: b.recoveryCodes[0]! }),
      401,
      'invalid_mfa_code',
    );
  });

  it('two sign-ins racing with the same recovery code: exactly one 200', async () => {
    const m = await totpMember(t);
    const code = m.recoveryCodes[5]!;
    const challenges = await Promise.all([challenge(t, m.email), challenge(t, m.email), challenge(t, m.email)]);
    const results = await Promise.all(
      challenges.map((c) => c.api.post('/auth/mfa/verify', { tempToken: c.body.tempToken, code })),
    );
    expect(statuses(results)).toEqual([200, 401, 401]);
    for (const r of results.filter((x) => x.status === 401)) expect(r.body.code).toBe('invalid_mfa_code');
    expect((await userRow(t, m.user.id)).mfaRecoveryCodes).toHaveLength(9);
  });

  it('one tempToken raced with two different good codes: one sign-in, and only one code spent', async () => {
    const m = await totpMember(t);
    const { api, body } = await challenge(t, m.email);
    const results = await Promise.all([
      api.post('/auth/mfa/verify', { tempToken: body.tempToken, code: m.recoveryCodes[0]! }),
      api.post('/auth/mfa/verify', { tempToken: body.tempToken, code: m.recoveryCodes[1]! }),
    ]);
    expect(statuses(results)).toEqual([200, 401]);
    expect(results.find((r) => r.status === 401)!.body.code).toBe('invalid_temp_token');
    // The loser must not burn the user's code for nothing.
    expect((await userRow(t, m.user.id)).mfaRecoveryCodes).toHaveLength(9);
  });
});

describe('POST /auth/mfa/recovery-codes replaces every code at once', () => {
  it('ten new codes; every old code stops working, the new ones work; audited', async () => {
    const m = await totpMember(t);
    const res = await m.api.post('/auth/mfa/recovery-codes');
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body)).toEqual(['recoveryCodes']);
    const fresh: string[] = res.body.recoveryCodes;
    expect(fresh).toHaveLength(10);
    for (const c of fresh) expect(m.recoveryCodes).not.toContain(c);
    const stored = (await userRow(t, m.user.id)).mfaRecoveryCodes!;
    expect([...stored].sort()).toEqual(fresh.map(hashRecoveryCode).sort());

    const old = await challenge(t, m.email);
    expectError(
      await old.api.post('/auth/mfa/verify', { tempToken: old.body.tempToken, code: m.recoveryCodes[9]! }),
      401,
      'invalid_mfa_code',
    );
    const ok = await old.api.post('/auth/mfa/verify', { tempToken: old.body.tempToken, code: fresh[9]! });
    expect(ok.status, ok.text).toBe(200);

    const audit = await auditOf(t, 'auth.mfa.recovery_codes.rotate', m.user.id);
    expect(audit).toHaveLength(1);
    expect(JSON.stringify(audit[0])).not.toContain(fresh[0]!);
  });

  it('two concurrent rotations leave exactly one of the two sets, never a mix', async () => {
    const m = await totpMember(t);
    const [a, b] = await Promise.all([m.api.post('/auth/mfa/recovery-codes'), m.api.post('/auth/mfa/recovery-codes')]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const stored = [...(await userRow(t, m.user.id)).mfaRecoveryCodes!].sort();
    const setA = a.body.recoveryCodes.map(hashRecoveryCode).sort();
    const setB = b.body.recoveryCodes.map(hashRecoveryCode).sort();
    expect([JSON.stringify(setA), JSON.stringify(setB)]).toContain(JSON.stringify(stored));
  });

  it('needs a session that passed MFA: 403 mfa_required', async () => {
    const m = await totpMember(t);
    // A session of the same account that did not pass a second factor.
    const s = await sessionFor(
      t,
      m.user.id,
      { scope: 'organization', partnerId: m.partnerId, orgId: m.orgId, roleId: ORG_ADMIN_ROLE_ID },
      false,
    );
    expectError(await t.client().withToken(s.accessToken).post('/auth/mfa/recovery-codes'), 403, 'mfa_required');
  });

  it('without MFA enabled there is nothing to rotate: 409 conflict', async () => {
    const m = await member(t);
    const s = await sessionFor(
      t,
      m.user.id,
      { scope: 'organization', partnerId: m.partnerId, orgId: m.orgId, roleId: ORG_ADMIN_ROLE_ID },
      true,
    );
    expectError(await t.client().withToken(s.accessToken).post('/auth/mfa/recovery-codes'), 409, 'conflict');
  });

  it('without a token: 401 unauthenticated', async () => {
    expectError(await t.client().post('/auth/mfa/recovery-codes'), 401, 'unauthenticated');
  });

  it('a recovery code is also accepted by POST /auth/mfa/disable, and spent', async () => {
    const m = await totpMember(t);
    const api = await signIn(t, m.email).catch(() => null);
    expect(api).toBeNull(); // MFA on: password alone does not sign in
    const res = await m.api.post('/auth/mfa/disable', { currentPassword: m.password, code: m.recoveryCodes[2]! });
    expect(res.status, res.text).toBe(200);
    expect((await userRow(t, m.user.id)).mfaRecoveryCodes).toBeNull();
  });
});

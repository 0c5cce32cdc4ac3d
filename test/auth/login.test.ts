import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogs } from '../../src/db/schema/index.js';
import { ORG_ADMIN_ROLE_ID } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import { addOrgMember, createOrg, createPartner, createUser } from '../support/fixtures.js';
import { startMailCatcher, type MailCatcher } from '../support/smtp.js';

let t: TestApp;
let mail: MailCatcher;
const PASSWORD = 'correct horse battery staple 42';

beforeAll(async () => {
  mail = await startMailCatcher();
  t = await startApp({ SMTP_URL: mail.url, RATE_LIMIT_LOGIN: '100/900' });
});
afterAll(async () => {
  await t?.close();
  await mail?.close();
});

async function orgMember(opts: { status?: 'active' | 'invited' | 'disabled'; password?: string | null } = {}) {
  const partner = await createPartner(t);
  const org = await createOrg(t, partner.id);
  const user = await createUser(t, {
    password: opts.password === null ? undefined : (opts.password ?? PASSWORD),
    status: opts.status,
  });
  await addOrgMember(t, { orgId: org.id, userId: user.id, roleId: ORG_ADMIN_ROLE_ID });
  return { partner, org, user };
}

describe('password login issues an access token and a refresh cookie', () => {
  it('answers the token response with both cookies and records user.login', async () => {
    const { user, org } = await orgMember();
    const api = t.client();
    const res = await api.post('/auth/login', { email: user.email.toUpperCase(), password: PASSWORD });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      tokenType: 'Bearer',
      expiresIn: 900,
      mfaEnrollmentRequired: false,
      user: { id: user.id, scope: 'organization', orgId: org.id },
    });
    const cookies = res.headers.getSetCookie();
    const refresh = cookies.find((c) => c.startsWith('service_refresh_token='))!;
    expect(refresh).toMatch(/HttpOnly/i);
    expect(refresh).toMatch(/Path=\/api\/v1\/auth/);
    expect(refresh).toMatch(/SameSite=Lax/i);
    expect(refresh).not.toMatch(/Secure/);
    const csrf = cookies.find((c) => c.startsWith('service_csrf_token='))!;
    expect(csrf).not.toMatch(/HttpOnly/i);
    expect(csrf).toMatch(/Path=\//);
    const me = await api.withToken(res.body.accessToken).me();
    expect(me.status).toBe(200);
    const audit = await t.deps.db.select().from(auditLogs).where(eq(auditLogs.actorUserId, user.id));
    expect(audit.map((a) => a.action)).toContain('user.login');
    expect(audit.find((a) => a.action === 'user.login')).toMatchObject({
      orgId: org.id,
      result: 'success',
      details: { method: 'password', mfa: false },
    });
  });
});

describe('login failures look alike', () => {
  it('unknown email, wrong password, disabled, invited and password-less users all get the same 401', async () => {
    const disabled = await orgMember({ status: 'disabled' });
    const invited = await orgMember({ status: 'invited' });
    const noPassword = await orgMember({ password: null });
    const good = await orgMember();
    const attempts = [
      { email: 'nobody-here@example.test', password: PASSWORD },
      { email: good.user.email, password: 'wrong password entirely 9' },
      { email: disabled.user.email, password: PASSWORD },
      { email: invited.user.email, password: PASSWORD },
      { email: noPassword.user.email, password: PASSWORD },
    ];
    const bodies = [];
    for (const a of attempts) {
      const res = await t.client().post('/auth/login', a);
      expect(res.status).toBe(401);
      expect(res.headers.getSetCookie()).toEqual([]);
      bodies.push(res.body);
    }
    expect(new Set(bodies.map((b) => JSON.stringify(b))).size).toBe(1);
    expect(bodies[0]).toMatchObject({ code: 'invalid_credentials' });
  });
});

// Throttling and the distributed-guess measure that replaced the account lock: test/auth/lockout.test.ts.

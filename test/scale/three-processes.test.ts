// Three processes of the built server (what `npm start` runs) on one PostgreSQL database and one Redis, as three
// replicas behind a load balancer: what three-instances.test.ts shows for three apps in one Node process, shown here
// with nothing shared but the database and the store: sign-in attempts share one rate-limit window, a logout and a
// spent refresh token are refused by the other processes on the next request, a TOTP step is accepted once across
// the three, and the mail outbox, worked by every process, delivers an invitation once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailCatcher, linkToken, type MailCatcher } from '../support/smtp.js';
import type { ApiClient } from '../support/client.js';
import {
  CSRF_COOKIE,
  firstAdmin,
  PARTNER_TECHNICIAN_ROLE_ID,
  REFRESH_COOKIE,
  refresh,
  signInWithTotp,
  strongPassword,
  totp,
  uniq,
  type Admin,
} from '../dist/flows.js';
import { startBuiltServer, startReplica, type BuiltServer } from '../dist/server.js';

const shared = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let all: BuiltServer[] = [];
let mail: MailCatcher;
let admin: Admin;

beforeAll(async () => {
  if (!shared) return;
  mail = await startMailCatcher();
  const first = await startBuiltServer({ SMTP_URL: mail.url, RATE_LIMIT_LOGIN: '6/900' });
  all = [first, await startReplica(first), await startReplica(first)];
  admin = await firstAdmin(first);
}, 300_000);
afterAll(async () => {
  for (const s of all.slice().reverse()) await s.close();
  await mail?.close();
});

/** The same token and cookies, sent to another process. */
function on(server: BuiltServer, api: ApiClient): ApiClient {
  const x = server.client();
  x.token = api.token;
  for (const [k, v] of api.cookies) x.cookies.set(k, v);
  return x;
}
const meEverywhere = async (api: ApiClient) =>
  Promise.all(all.map(async (s) => (await on(s, api).raw.get('/users/me')).status));

// Three processes on one embedded database cannot be: PGlite is one process's. CI's second pass has both servers.
describe.skipIf(!shared)('three processes of the built server on one PostgreSQL and one Redis', () => {
  const tech = { email: `tech-${uniq()}@three.test`, password: strongPassword() };

  it('an invitation sent through one process is mailed once, though every process works the outbox', async () => {
    const inv = await on(all[1]!, admin.api).raw.post('/users/invite', {
      email: tech.email,
      name: 'Tech',
      roleId: PARTNER_TECHNICIAN_ROLE_ID,
      orgAccess: 'all',
    });
    expect(inv.status, inv.text).toBe(201);
    const m = await mail.waitFor(tech.email, undefined, 20_000);
    await sleep(3000); // time for a second delivery, were there one
    expect(mail.countTo(tech.email)).toBe(1);
    const accepted = await all[2]!
      .client()
      .raw.post('/auth/accept-invite', { token: linkToken(m), password: tech.password });
    expect(accepted.status, accepted.text).toBe(200);
  });

  it('sign-in attempts for one account spread over the three share one window (RATE_LIMIT_LOGIN 6/900)', async () => {
    for (let i = 0; i < 6; i++) {
      const res = await all[i % 3]!.client().raw.post('/auth/login', {
        email: tech.email,
        password: 'wrong password 123!',
      });
      expect(res.status, res.text).toBe(401);
    }
    for (const s of all) {
      const res = await s.client().raw.post('/auth/login', { email: tech.email, password: tech.password });
      expect(res.status, res.text).toBe(429);
    }
  });

  it('one TOTP code sent to the three processes at once: exactly one signs in', async () => {
    const temps: string[] = [];
    for (const s of all)
      temps.push(
        (await s.client().raw.post('/auth/login', { email: admin.email, password: admin.password })).body.tempToken,
      );
    const code = totp(admin.secret, 30_000); // the next time step: enrolment used the current one
    const answers = await Promise.all(
      all.map((s, i) => s.client().raw.post('/auth/mfa/verify', { tempToken: temps[i], code })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 401, 401]);
  });

  it('a refresh token rotated by one process is refused by another, and that reuse ends the session everywhere', async () => {
    const api = await signInWithTotp(all[2]!, admin, admin.recoveryCodes[0]);
    const before = api.cookies.get(REFRESH_COOKIE)!;
    const rotated = await refresh(on(all[0]!, api));
    expect(rotated.status, rotated.text).toBe(200);
    const replay = all[2]!.client();
    replay.cookies.set(REFRESH_COOKIE, before);
    replay.cookies.set(CSRF_COOKIE, api.cookies.get(CSRF_COOKIE)!);
    expect((await refresh(replay)).status).toBe(401);
    const fresh = all[1]!.client();
    fresh.token = rotated.body.accessToken;
    expect((await fresh.raw.get('/users/me')).status).toBe(401);
  });

  it('a logout through one process: the access token is refused by all three on the next request', async () => {
    const api = await signInWithTotp(all[0]!, admin, admin.recoveryCodes[1]);
    expect(await meEverywhere(api)).toEqual([200, 200, 200]);
    expect((await on(all[1]!, api).raw.post('/auth/logout')).status).toBe(200);
    expect(await meEverywhere(api)).toEqual([401, 401, 401]);
  });
});

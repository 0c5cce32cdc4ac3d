import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authFlows } from '../../src/db/schema/index.js';
import { startApp, startPeer, type PeerApp, type TestApp } from '../support/app.js';
import type { ApiResponse } from '../support/client.js';
import { startMailCatcher, type MailCatcher } from '../support/smtp.js';
import { orgMember, PASSWORD, strongPassword } from './helpers.js';

// Low limits, configured the way an operator would: RATE_LIMIT_<NAME>=<count>/<seconds>.
let t: TestApp;
let peer: PeerApp;
let mail: MailCatcher;

beforeAll(async () => {
  mail = await startMailCatcher();
  t = await startApp({
    SMTP_URL: mail.url,
    ENABLE_REGISTRATION: 'true',
    RATE_LIMIT_LOGIN: '3/60',
    RATE_LIMIT_FORGOT_PASSWORD: '2/3600',
    RATE_LIMIT_REGISTER: '2/3600',
    RATE_LIMIT_REGISTER_PARTNER: '1/3600',
  });
  peer = await startPeer(t);
});
afterAll(async () => {
  await peer?.close();
  await t?.close();
  await mail?.close();
});

function expectRateLimited(res: ApiResponse, maxSeconds: number) {
  expect(res.status).toBe(429);
  expect(res.body).toMatchObject({ code: 'rate_limited', error: expect.any(String), message: expect.any(String) });
  expect(Number.isInteger(res.body.retryAfter)).toBe(true);
  expect(res.body.retryAfter).toBeGreaterThanOrEqual(1);
  expect(res.body.retryAfter).toBeLessThanOrEqual(maxSeconds);
  expect(res.headers.get('retry-after')).toBe(String(res.body.retryAfter));
}

async function withClock(fn: (advance: (ms: number) => void) => Promise<void>) {
  let moved = 0;
  try {
    await fn((ms) => {
      moved += ms;
      t.clock.advance(ms);
    });
  } finally {
    t.clock.advance(-moved);
  }
}

const login = (email: string, password = 'not the password 1') => t.client().post('/auth/login', { email, password });

describe('login over its limit answers 429 with retryAfter and Retry-After', () => {
  it('refuses the fourth attempt in the window, even with the right password; another email is not affected', async () => {
    const { user } = await orgMember(t);
    for (let i = 0; i < 3; i++) expect((await login(user.email)).status).toBe(401);
    const limited = await login(user.email, PASSWORD);
    expectRateLimited(limited, 60);
    expect(limited.headers.getSetCookie()).toEqual([]);
    const { user: other } = await orgMember(t);
    expect((await login(other.email, PASSWORD)).status).toBe(200);
  });

  it('counts in a sliding window: a slot frees when the oldest hit is 60 s old, not at a window boundary', async () => {
    const { user } = await orgMember(t);
    await withClock(async (advance) => {
      expect((await login(user.email)).status).toBe(401); // t = 0
      advance(30_000);
      expect((await login(user.email)).status).toBe(401); // t = 30
      advance(10_000);
      expect((await login(user.email)).status).toBe(401); // t = 40
      advance(15_000);
      const full = await login(user.email); // t = 55: three hits in the last 60 s
      expectRateLimited(full, 60);
      expect(full.body.retryAfter).toBeLessThanOrEqual(6);
      advance(6_000); // t = 61: the hit at 0 left the window, those at 30 and 40 did not
      expect((await login(user.email, PASSWORD)).status).toBe(200);
      const again = await login(user.email);
      expectRateLimited(again, 60);
      // A fixed window restarting at 60 would allow two more here; the sliding one waits for the hit at 30.
      // (29 s on an idle machine; real time spent between the steps comes off it, so the lower bound has slack.)
      expect(again.body.retryAfter).toBeGreaterThanOrEqual(15);
      expect(again.body.retryAfter).toBeLessThanOrEqual(30);
    });
  });

  it('is exact under concurrency: of ten simultaneous attempts three get through', async () => {
    const { user } = await orgMember(t);
    const results = await Promise.all(Array.from({ length: 10 }, () => login(user.email)));
    expect(results.filter((r) => r.status === 401)).toHaveLength(3);
    expect(results.filter((r) => r.status === 429)).toHaveLength(7);
  });

  it('is shared by every instance', async () => {
    const { user } = await orgMember(t);
    const onPeer = (password = 'not the password 1') =>
      peer.client().post('/auth/login', { email: user.email, password });
    expect((await login(user.email)).status).toBe(401);
    expect((await onPeer()).status).toBe(401);
    expect((await login(user.email)).status).toBe(401);
    expectRateLimited(await onPeer(PASSWORD), 60);
    expectRateLimited(await login(user.email, PASSWORD), 60);
  });
});

describe('forgot-password over its limit still answers 200 and sends nothing', () => {
  it('mails within the limit; past it answers the same 200, creates no link and sends no mail', async () => {
    const first = await orgMember(t);
    const second = await orgMember(t);
    for (let i = 0; i < 2; i++) {
      const res = await t.client().post('/auth/forgot-password', { email: first.user.email });
      expect(res.status).toBe(200);
    }
    await mail.waitFor(first.user.email, () => mail.countTo(first.user.email) === 2);
    const over = await t.client().post('/auth/forgot-password', { email: second.user.email });
    expect(over.status).toBe(200);
    expect(over.body).toEqual({ success: true });
    expect(over.headers.get('retry-after')).toBeNull();
    await new Promise((r) => setTimeout(r, 300));
    expect(mail.countTo(second.user.email)).toBe(0);
    const links = await t.deps.db
      .select()
      .from(authFlows)
      .where(and(eq(authFlows.userId, second.user.id), eq(authFlows.kind, 'password_reset')));
    expect(links).toHaveLength(0);
    expect(t.logs()).toMatch(/forgot-password over its limit/);
    // An hour later the window has passed.
    await withClock(async (advance) => {
      advance(3600_000 + 1000);
      expect((await t.client().post('/auth/forgot-password', { email: second.user.email })).status).toBe(200);
      await mail.waitFor(second.user.email);
    });
  });
});

describe('registration has its own limits per IP', () => {
  it('register answers 429 past RATE_LIMIT_REGISTER, register-partner past RATE_LIMIT_REGISTER_PARTNER', async () => {
    const email = () => `limit-${randomBytes(4).toString('hex')}@example.test`;
    for (let i = 0; i < 2; i++)
      expect(
        (await t.client().post('/auth/register', { email: email(), password: strongPassword(), name: 'R' })).status,
      ).toBe(201);
    expectRateLimited(
      await t.client().post('/auth/register', { email: email(), password: strongPassword(), name: 'R' }),
      3600,
    );
    expect(
      (
        await t.client().post('/auth/register-partner', {
          companyName: 'Limit Co',
          email: email(),
          password: strongPassword(),
          name: 'P',
        })
      ).status,
    ).toBe(201);
    const limited = await t.client().post('/auth/register-partner', {
      companyName: 'Limit Co 2',
      email: email(),
      password: strongPassword(),
      name: 'P',
    });
    expectRateLimited(limited, 3600);
    expect(limited.body.retryAfter).toBeGreaterThan(3500);
  });
});

import { connect, type Socket } from 'node:net';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessions } from '../../src/db/schema/index.js';
import { ORG_ADMIN_ROLE_ID } from '../../src/modules/roles/catalog.js';
import { markRotationDelivered, refresh as doRefresh } from '../../src/modules/auth/refresh-service.js';
import { startApp, type TestApp } from '../support/app.js';
import {
  auditOf,
  claimsOf,
  clientWithRefreshToken,
  CSRF_COOKIE,
  orgMember,
  refresh,
  REFRESH_COOKIE,
  signIn,
  statuses,
} from './helpers.js';

let t: TestApp;
const DAY = 24 * 3600 * 1000;

beforeAll(async () => {
  t = await startApp({ RATE_LIMIT_LOGIN: '1000/900' });
});
afterAll(async () => t?.close());

/** Runs `fn` with the clock moved; puts it back afterwards so the other tests of the file see real time. */
async function withClock<T>(fn: (advance: (ms: number) => void) => Promise<T>): Promise<T> {
  let moved = 0;
  try {
    return await fn((ms) => {
      moved += ms;
      t.clock.advance(ms);
    });
  } finally {
    t.clock.advance(-moved);
  }
}

describe('a refresh needs the refresh cookie and a matching CSRF header', () => {
  it('answers 403 csrf_failed without the header, with a header that does not match the cookie, or without the CSRF cookie', async () => {
    const { user } = await orgMember(t);
    const api = await signIn(t, user.email);
    const noHeader = await api.post('/auth/refresh', undefined, { token: null });
    expect(noHeader.status).toBe(403);
    expect(noHeader.body).toMatchObject({ code: 'csrf_failed' });
    const mismatch = await api.post('/auth/refresh', undefined, {
      token: null,
      headers: { 'x-service-csrf': 'x'.repeat(32) },
    });
    expect(mismatch.status).toBe(403);
    expect(mismatch.body.code).toBe('csrf_failed');
    // A header alone proves nothing: it must equal a cookie the attacker's page cannot set.
    const csrf = api.cookies.get(CSRF_COOKIE)!;
    const withoutCsrfCookie = await api.post('/auth/refresh', undefined, {
      token: null,
      headers: { 'x-service-csrf': csrf, cookie: `${REFRESH_COOKIE}=${api.refreshToken}` },
    });
    expect(withoutCsrfCookie.status).toBe(403);
    expect(withoutCsrfCookie.body.code).toBe('csrf_failed');
    // None of the refused attempts rotated the token: the proper request still works.
    expect((await refresh(api)).status).toBe(200);
  });

  it('answers 403 csrf_failed to a foreign Origin and accepts the app origin', async () => {
    const { user } = await orgMember(t);
    const api = await signIn(t, user.email);
    const foreign = await refresh(api, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.body.code).toBe('csrf_failed');
    const lookalike = await refresh(api, { origin: `${t.deps.config.appUrl}.evil.example` });
    expect(lookalike.status).toBe(403);
    const ok = await refresh(api, { origin: t.deps.config.appUrl });
    expect(ok.status).toBe(200);
  });

  it('answers 401 without a refresh cookie and for a token that was never issued', async () => {
    const api = t.client();
    api.cookies.set(CSRF_COOKIE, 'c'.repeat(32));
    const none = await refresh(api);
    expect(none.status).toBe(401);
    const forged = await refresh(clientWithRefreshToken(t, 'A'.repeat(43)));
    expect(forged.status).toBe(401);
    expect(forged.body.code).toBe('invalid_refresh_token');
  });
});

describe('a refresh rotates the token pair', () => {
  it('returns a working access token, a new refresh cookie and a new CSRF cookie, in the same session and context', async () => {
    const { user, org, partner } = await orgMember(t);
    const api = await signIn(t, user.email);
    const before = claimsOf(api.token!);
    const oldRefresh = api.refreshToken;
    const oldCsrf = api.cookies.get(CSRF_COOKIE);
    const res = await refresh(api);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      tokenType: 'Bearer',
      expiresIn: 900,
      user: { id: user.id, scope: 'organization', orgId: org.id },
    });
    expect(api.cookies.get(REFRESH_COOKIE)).toBeTruthy();
    expect(api.cookies.get(REFRESH_COOKIE)).not.toBe(oldRefresh);
    expect(api.cookies.get(CSRF_COOKIE)).not.toBe(oldCsrf);
    const after = claimsOf(res.body.accessToken);
    expect(after).toMatchObject({
      sub: user.id,
      sid: before.sid,
      scope: 'organization',
      orgId: org.id,
      partnerId: partner.id,
      roleId: ORG_ADMIN_ROLE_ID,
      mfa: false,
    });
    expect((await api.me()).status).toBe(200);
    // The session row now holds the new token's hash only.
    const [row] = await t.deps.db
      .select()
      .from(sessions)
      .where(eq(sessions.id, String(before.sid)));
    expect(row!.revokedAt).toBeNull();
  });

  it('kills the old refresh token: presenting it again is refused', async () => {
    const { user } = await orgMember(t);
    const api = await signIn(t, user.email);
    const old = api.refreshToken;
    expect((await refresh(api)).status).toBe(200);
    const replay = await refresh(clientWithRefreshToken(t, old));
    expect(replay.status).toBe(401);
    expect(replay.body.code).toBe('invalid_refresh_token');
  });
});

describe('replaying a rotated refresh token revokes the whole session', () => {
  it('after the replay the new refresh token and the access token both fail, and auth.refresh.reuse_detected is recorded', async () => {
    const { user, org, partner } = await orgMember(t);
    const victim = await signIn(t, user.email);
    const stolen = victim.refreshToken;
    const sid = String(claimsOf(victim.token!).sid);
    expect((await refresh(victim)).status).toBe(200); // the legitimate client rotates first
    expect((await victim.me()).status).toBe(200);

    const attacker = await refresh(clientWithRefreshToken(t, stolen), { 'user-agent': 'thief/1.0' });
    expect(attacker.status).toBe(401);
    expect(
      attacker.headers
        .getSetCookie()
        .some((c) => c.startsWith(`${REFRESH_COOKIE}=`) && !/max-age=0|expires=thu, 01 jan 1970/i.test(c)),
    ).toBe(false);

    // Next request of the legitimate client: both its credentials are dead.
    expect((await victim.me()).status).toBe(401);
    const again = await refresh(victim);
    expect(again.status).toBe(401);

    const [row] = await t.deps.db.select().from(sessions).where(eq(sessions.id, sid));
    expect(row).toMatchObject({ revokeReason: 'refresh_reuse' });
    expect(row!.revokedAt).not.toBeNull();

    const events = await auditOf(t, 'auth.refresh.reuse_detected', user.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      result: 'denied',
      actorEmail: user.email,
      orgId: org.id,
      partnerId: partner.id,
      resourceType: 'session',
      resourceId: sid,
    });
  });

  it("leaves the user's other sessions alone", async () => {
    const { user } = await orgMember(t);
    const a = await signIn(t, user.email);
    const b = await signIn(t, user.email);
    const stolen = a.refreshToken;
    expect((await refresh(a)).status).toBe(200);
    expect((await refresh(clientWithRefreshToken(t, stolen), { 'user-agent': 'thief/1.0' })).status).toBe(401);
    expect((await a.me()).status).toBe(401);
    expect((await b.me()).status).toBe(200);
    expect((await refresh(b)).status).toBe(200);
  });
});

describe('the same client presenting its rotated token again', () => {
  it('within 10 s of the answer it is a lost race (401, session kept); later it is a replay (session revoked)', async () => {
    const { user } = await orgMember(t);
    const api = await signIn(t, user.email);
    const sid = String(claimsOf(api.token!).sid);
    const first = api.refreshToken;
    expect((await refresh(api)).status).toBe(200);
    const twin = await refresh(clientWithRefreshToken(t, first));
    expect(twin.status).toBe(401);
    expect((await api.me()).status).toBe(200);
    expect(await auditOf(t, 'auth.refresh.reuse_detected', user.id)).toHaveLength(0);
    await withClock(async (advance) => {
      advance(11_000);
      expect((await refresh(clientWithRefreshToken(t, first))).status).toBe(401);
    });
    const [row] = await t.deps.db.select().from(sessions).where(eq(sessions.id, sid));
    expect(row).toMatchObject({ revokeReason: 'refresh_reuse' });
    expect((await refresh(api)).status).toBe(401);
  });
});

describe('two concurrent refreshes with one token: exactly one succeeds', () => {
  it('of two simultaneous requests one gets 200 with a new pair and the other 401', async () => {
    for (let round = 0; round < 3; round++) {
      const { user } = await orgMember(t);
      const api = await signIn(t, user.email);
      const twin = t.client();
      for (const [k, v] of api.cookies) twin.cookies.set(k, v);
      const results = await Promise.all([refresh(api), refresh(twin)]);
      expect(statuses(results)).toEqual([200, 401]);
      const loser = results.find((r) => r.status === 401)!;
      expect(loser.body.code).toBe('invalid_refresh_token');
    }
  });

  it('of eight simultaneous requests exactly one gets a new token pair', async () => {
    const { user } = await orgMember(t);
    const api = await signIn(t, user.email);
    const clients = Array.from({ length: 8 }, () => clientWithRefreshToken(t, api.refreshToken));
    const results = await Promise.all(clients.map((c) => refresh(c)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 401)).toHaveLength(7);
    const issued = new Set(clients.map((c) => c.cookies.get(REFRESH_COOKIE)).filter((v) => v !== api.refreshToken));
    expect(issued.size).toBe(1);
  });

  it("a twin that arrived before the winner's answer was ready loses the race without killing the session", async () => {
    // Driven through the service so both requests have certainly arrived before either answer exists (over HTTP
    // that ordering depends on scheduling). A late twin is indistinguishable from a replay and is treated as one.
    const { user } = await orgMember(t);
    const api = await signIn(t, user.email);
    const meta = { ip: '127.0.0.1', userAgent: 'vitest' };
    const results = await Promise.allSettled([
      doRefresh(t.deps, api.refreshToken, meta),
      doRefresh(t.deps, api.refreshToken, meta),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const won = results.find(
      (r): r is PromiseFulfilledResult<Awaited<ReturnType<typeof doRefresh>>> => r.status === 'fulfilled',
    )!.value;
    await markRotationDelivered(t.deps, api.refreshToken);
    expect((await t.client().withToken(won.accessToken).me()).status).toBe(200);
    expect((await refresh(clientWithRefreshToken(t, won.refreshToken))).status).toBe(200);
    expect(await auditOf(t, 'auth.refresh.reuse_detected', user.id)).toHaveLength(0);
  });
});

/**
 * Sends `n` refreshes with one token over `n` TCP connections that are all open before the first byte is written,
 * then writes every request in the same tick: the server has all of them before it can answer any. (Fresh
 * connections from one client are set up ~10 ms apart here, so requests that open their own connection arrive
 * spread over half a second: that is a sequence, and a late twin is indistinguishable from a replay.)
 */
async function concurrentRefreshes(refreshToken: string, n: number) {
  const { port } = new URL(t.baseUrl);
  const sockets = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<Socket>((resolve, reject) => {
          const s = connect(Number(port), '127.0.0.1', () => resolve(s));
          s.once('error', reject);
        }),
    ),
  );
  const csrf = 'c'.repeat(32);
  const request = [
    'POST /api/v1/auth/refresh HTTP/1.1',
    `Host: localhost:${port}`,
    `Cookie: ${REFRESH_COOKIE}=${refreshToken}; ${CSRF_COOKIE}=${csrf}`,
    `x-service-csrf: ${csrf}`,
    'Content-Length: 0',
    'Connection: close',
    '',
    '',
  ].join('\r\n');
  const answers = sockets.map(
    (s) =>
      new Promise<string>((resolve, reject) => {
        let raw = '';
        s.setEncoding('utf8');
        s.on('data', (chunk: string) => (raw += chunk));
        s.once('end', () => resolve(raw));
        s.once('error', reject);
      }),
  );
  for (const s of sockets) s.write(request);
  return (await Promise.all(answers)).map((raw) => {
    const [head, body] = raw.split('\r\n\r\n', 2) as [string, string];
    const refreshCookie = /^set-cookie: service_refresh_token=([^;]*)/im.exec(head)?.[1];
    const chunked = /^transfer-encoding: chunked/im.test(head);
    const json = chunked
      ? body
          .split('\r\n')
          .filter((_, i) => i % 2 === 1)
          .join('')
      : body;
    return {
      status: Number(head.split(' ')[1]),
      body: JSON.parse(json) as { accessToken?: string; code?: string },
      refreshCookie,
    };
  });
}

describe("concurrent refreshes with one token on either database: one wins and the winner's session lives on", () => {
  for (const [n, rounds] of [
    [2, 6],
    [10, 4],
    [50, 3],
  ] as const) {
    it(`${n} simultaneous refreshes, ${rounds} times: exactly one 200, the rest 401, the new pair works, no reuse revocation`, async () => {
      for (let round = 0; round < rounds; round++) {
        const { user } = await orgMember(t);
        const api = await signIn(t, user.email);
        const sid = String(claimsOf(api.token!).sid);
        const results = await concurrentRefreshes(api.refreshToken, n);
        const winners = results.filter((r) => r.status === 200);
        expect(winners, `round ${round}`).toHaveLength(1);
        expect(results.filter((r) => r.status === 401 && r.body.code === 'invalid_refresh_token')).toHaveLength(n - 1);
        const won = winners[0]!;
        expect(won.refreshCookie).toBeTruthy();
        expect(
          (await t.client().withToken(won.body.accessToken!).me()).status,
          `round ${round}: the new access token`,
        ).toBe(200);
        const next = await refresh(clientWithRefreshToken(t, won.refreshCookie!));
        expect(next.status, `round ${round}: the new refresh token`).toBe(200);
        expect((await t.client().withToken(next.body.accessToken).me()).status).toBe(200);
        const [row] = await t.deps.db.select().from(sessions).where(eq(sessions.id, sid));
        expect(row!.revokedAt).toBeNull();
        expect(await auditOf(t, 'auth.refresh.reuse_detected', user.id)).toHaveLength(0);
      }
    }, 60_000);
  }
});

describe('a session lives at most 30 days from sign-in', () => {
  it('refreshing every five days keeps it alive until day 30, then the refresh fails', async () => {
    const { user } = await orgMember(t);
    const api = await signIn(t, user.email);
    await withClock(async (advance) => {
      for (let day = 5; day <= 25; day += 5) {
        advance(5 * DAY);
        const res = await refresh(api);
        expect(res.status, `refresh on day ${day}`).toBe(200);
      }
      advance(4 * DAY); // day 29: still inside the cap, and the cookie now ends with the cap
      const late = await refresh(api);
      expect(late.status).toBe(200);
      const cookie = late.headers.getSetCookie().find((c) => c.startsWith(`${REFRESH_COOKIE}=`))!;
      const maxAge = Number(/Max-Age=(\d+)/i.exec(cookie)![1]);
      expect(maxAge).toBeLessThanOrEqual(DAY / 1000);
      expect(maxAge).toBeGreaterThan(DAY / 1000 - 120);
      advance(DAY + 1000); // day 30 + 1 s
      const capped = await refresh(api);
      expect(capped.status).toBe(401);
      expect(capped.body.code).toBe('invalid_refresh_token');
    });
  });

  it('a refresh token not used for its sliding lifetime (7 days) expires', async () => {
    const { user } = await orgMember(t);
    const api = await signIn(t, user.email);
    await withClock(async (advance) => {
      advance(7 * DAY + 60_000);
      expect((await refresh(api)).status).toBe(401);
    });
  });

  it('the access token stops working after 15 minutes; a refresh gives a fresh one', async () => {
    const { user } = await orgMember(t);
    const api = await signIn(t, user.email);
    const first = api.token;
    await withClock(async (advance) => {
      advance(15 * 60 * 1000 + 1000);
      expect((await t.client().withToken(first).me()).status).toBe(401);
      expect((await refresh(api)).status).toBe(200);
      expect((await api.me()).status).toBe(200);
    });
  });
});

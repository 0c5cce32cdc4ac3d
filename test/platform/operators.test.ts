// What an operator gets: /metrics behind a token (METRICS_TOKEN), tenant-free gauges (live sessions, mail outbox,
// webhook backlog and lag), error answers counted by their catalogue code; request log lines naming the user, the
// tenant and the error code; the console's files logged at debug only.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app.js';
import { partnerAdmin } from '../support/fixtures.js';

const TOKEN = randomBytes(24).toString('base64url');
let t: TestApp;
beforeAll(async () => {
  t = await startApp({ METRICS_TOKEN: TOKEN, LOG_LEVEL: 'info' });
});
afterAll(async () => t?.close());

const scrape = (token?: string) =>
  fetch(`${t.baseUrl}/metrics`, token ? { headers: { authorization: `Bearer ${token}` } } : {});

const logLines = () =>
  t
    .logs()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('/metrics is protected by METRICS_TOKEN', () => {
  it('answers 401 unauthenticated without the token or with another, and the metrics with it', async () => {
    for (const res of [await scrape(), await scrape(`${TOKEN}x`), await scrape(TOKEN.slice(1))]) {
      expect(res.status).toBe(401);
      expect(((await res.json()) as { code: string }).code).toBe('unauthenticated');
    }
    const ok = await scrape(TOKEN);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('http_requests_total');
  });
});

describe('tenant-free gauges and error reasons', () => {
  it('counts live sessions, the outbox and the webhook backlog, and error answers by code, never by tenant', async () => {
    const { partner, user, api } = await partnerAdmin(t);
    expect((await api.get('/auth/me')).status).toBe(200);
    expect((await t.client().get('/auth/me')).status).toBe(401);
    const text = await (await scrape(TOKEN)).text();
    const value = (name: string) => Number(text.match(new RegExp(`^${name} (\\S+)$`, 'm'))?.[1]);
    expect(value('gatehouse_sessions_active')).toBeGreaterThanOrEqual(1);
    expect(value('gatehouse_mail_outbox_backlog')).toBeGreaterThanOrEqual(0);
    expect(value('gatehouse_webhook_backlog')).toBeGreaterThanOrEqual(0);
    expect(value('gatehouse_webhook_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(text).toMatch(/^gatehouse_http_errors_total\{code="unauthenticated",status="401"\} [1-9]/m);
    expect(text).not.toContain(partner.id);
    expect(text).not.toContain(user.id);
  });
});

describe('request log lines', () => {
  it('name the user and tenant of an authenticated request, and the error code of a refusal', async () => {
    const { partner, user, api } = await partnerAdmin(t);
    await api.get('/auth/me', { headers: { 'x-request-id': 'ops-me-1' } });
    await t.client().get('/auth/me', { headers: { 'x-request-id': 'ops-anon-1' } });
    await api.get('/orgs/organizations/00000000-0000-4000-8000-000000000000', {
      headers: { 'x-request-id': 'ops-404-1' },
    });
    const lines = logLines().filter((l) => l.msg === 'request');
    const byId = (id: string) => lines.find((l) => l.reqId === id);
    expect(byId('ops-me-1')).toMatchObject({ status: 200, userId: user.id, partnerId: partner.id });
    expect(byId('ops-me-1')).not.toHaveProperty('code');
    expect(byId('ops-anon-1')).toMatchObject({ status: 401, code: 'unauthenticated' });
    expect(byId('ops-anon-1')).not.toHaveProperty('userId');
    expect(byId('ops-404-1')).toMatchObject({ status: 404, code: 'not_found', userId: user.id });
  });
});

describe("the console's files", () => {
  it('are logged at debug, so an info log has no line for them; the page itself is logged', async () => {
    const { readdirSync, existsSync } = await import('node:fs');
    const assets = new URL('../../web/dist/assets/', import.meta.url);
    if (!existsSync(assets)) return; // no console build: the server serves no files to log
    const file = readdirSync(assets).find((f) => f.endsWith('.js'))!;
    for (const [path, id] of [
      [`/assets/${file}`, 'ops-asset-1'],
      ['/favicon.svg', 'ops-favicon-1'],
      ['/tenants', 'ops-page-1'],
    ] as const) {
      const res = await fetch(`${t.baseUrl}${path}`, { headers: { 'x-request-id': id, accept: 'text/html' } });
      expect(res.status, path).toBe(200);
      await res.arrayBuffer();
    }
    const ids = logLines().map((l) => l.reqId);
    expect(ids).not.toContain('ops-asset-1');
    expect(ids).not.toContain('ops-favicon-1');
    expect(ids).toContain('ops-page-1');
  });
});

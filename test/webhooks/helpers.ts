// Helpers of the audit webhook tests: subscribe through the API (registering the secret with the receiver), write
// audit records through the real writer, read the delivery rows.
import { asc, eq } from 'drizzle-orm';
import { expect } from 'vitest';
import { webhookDeliveries } from '../../src/db/schema/index.js';
import type { TestApp } from '../support/app.js';
import type { ApiClient } from '../support/client.js';
import type { Receiver } from '../support/webhook-receiver.js';

export async function subscribe(
  api: ApiClient,
  rcv: Receiver,
  body: { url?: string; events: string[]; orgId?: string; description?: string },
  path = '/hook',
) {
  const res = await api.post('/webhooks', { url: `${rcv.url}${path}`, ...body });
  expect(res.status, res.text).toBe(201);
  rcv.secrets.set(res.body.id, res.body.secret);
  return res.body as { id: string; secret: string; orgId: string | null; partnerId: string };
}

/** An audit record written by the real writer in its own transaction (as every audited change does). */
export async function recordEvent(
  t: TestApp,
  e: { action: string; partnerId: string | null; orgId?: string | null; details?: Record<string, unknown> },
) {
  return t.deps.db.transaction((tx) =>
    t.deps.audit.record(
      tx,
      { action: e.action, partnerId: e.partnerId, orgId: e.orgId ?? null, resourceType: 'test', details: e.details },
      { ip: '203.0.113.9', userAgent: 'vitest' },
    ),
  );
}

export const deliveryRows = (t: TestApp, webhookId: string) =>
  t.deps.db
    .select()
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.webhookId, webhookId))
    .orderBy(asc(webhookDeliveries.sequence));

export async function until<T>(what: string, probe: () => Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

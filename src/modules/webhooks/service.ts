// Audit webhook subscriptions: per partner (its events and those of all its organisations) or per
// organisation (that organisation's events), under audit:manage. The URL passes the one outbound guard when it is
// set and again at every delivery; the signing secret is shown once and kept sealed.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import type { Executor } from '../../db/connect.js';
import type { Principal } from '../../http/context.js';
import { ORGANIZATION_WIDE } from '../../access/ceiling.js';
import { speaksForPartner } from '../../access/principal.js';
import { AppError, notFound } from '../../http/errors.js';
import { assertWithinReach } from '../../http/refusal.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { assertPublicUrl, OutboundRefusedError } from '../../platform/outbound.js';
import { actorOf, type AuditRequestMeta } from '../../access/audit.js';
import { auditTenant } from '../tenants/index.js';
import type { Target } from '../../db/tenant-filter.js';
import { RETRY_WINDOW_MS } from './fanout.js';
import {
  deleteWebhookRow,
  findWebhookRow,
  insertWebhook,
  listDeliveryRows,
  listWebhookRows,
  requeueDeliveries,
  updateWebhookRow,
  type DeliveryRow,
  type WebhookRow,
} from './repo.js';
import { newSecret, openSecret, sealSecret, sendSigned } from './sender.js';

type Row = WebhookRow;

export const webhookToJson = (r: Row) => ({
  id: r.id,
  partnerId: r.partnerId,
  orgId: r.orgId,
  url: r.url,
  events: r.events,
  description: r.description,
  active: r.active,
  createdAt: r.createdAt.toISOString(),
  updatedAt: r.updatedAt.toISOString(),
});

const fieldError = (field: string, msg: string) =>
  new AppError('validation_failed', msg, { details: { fieldErrors: { [field]: [msg] }, formErrors: [] } });

/** https and a public address (or as far as the configured reach allows): the one outbound guard. */
async function checkUrl(deps: Deps, url: string): Promise<void> {
  try {
    await assertPublicUrl(new URL(url), 'The webhook URL', deps.config.webhooksOutbound);
  } catch (err) {
    if (err instanceof OutboundRefusedError) throw fieldError('url', err.message);
    throw fieldError('url', 'The webhook URL host could not be resolved.');
  }
}

/**
 * A partner-wide subscription carries every organisation's events: only a partner caller with access to all of them
 * may create, see or change one. Any subscription carries a whole tenant's records: never from a caller restricted to
 * sites or device groups.
 */
export function assertMayHandle(p: Principal, t: Target): void {
  if (t.kind === 'partner' && p.orgAccess !== 'all') throw new AppError('full_org_access_required');
  assertWithinReach(p, ORGANIZATION_WIDE);
}

export async function findWebhook(db: Executor, t: Target, id: string): Promise<Row> {
  const row = await findWebhookRow(db, t, id);
  if (!row) throw notFound('webhook');
  return row;
}

const actor = actorOf;
/** The host only: a URL's path or query often carries the receiver's own token. */
const hostOf = (url: string) => new URL(url).host;

export async function createWebhook(
  deps: Deps,
  p: Principal,
  t: Target,
  input: { url: string; events: string[]; description?: string },
  meta: AuditRequestMeta,
) {
  assertMayHandle(p, t);
  await checkUrl(deps, input.url);
  const id = randomUUID();
  const secret = newSecret();
  const row = await deps.db.transaction(async (tx) => {
    const created = await insertWebhook(tx, {
      id,
      partnerId: t.partnerId,
      orgId: t.orgId,
      url: input.url,
      events: [...new Set(input.events)],
      description: input.description ?? null,
      secretSealed: sealSecret(deps.box, id, secret),
      createdBy: p.userId,
      madeByPartner: t.orgId === null || speaksForPartner(p),
    });
    await deps.audit.record(
      tx,
      {
        action: 'webhook.create',
        actor: actor(p),
        ...auditTenant(t),
        resourceType: 'webhook',
        resourceId: id,
        details: { host: hostOf(input.url), events: created.events },
      },
      meta,
    );
    return created;
  });
  deps.webhooks.kickIfQueued();
  return { ...webhookToJson(row), secret };
}

export async function listWebhooks(deps: Deps, p: Principal, t: Target, q: { limit: number; cursor?: string }) {
  assertMayHandle(p, t);
  const after = decodeCursor(q.cursor, z.object({ id: z.uuid() }));
  const rows = await listWebhookRows(deps.db, t, { after, limit: q.limit });
  const page = pageOf(rows, q.limit, (r) => ({ id: r.id }));
  return { data: page.data.map(webhookToJson), nextCursor: page.nextCursor };
}

export async function getWebhook(deps: Deps, p: Principal, t: Target, id: string) {
  assertMayHandle(p, t);
  return webhookToJson(await findWebhook(deps.db, t, id));
}

export async function updateWebhook(
  deps: Deps,
  p: Principal,
  t: Target,
  id: string,
  input: { url?: string; events?: string[]; description?: string | null; active?: boolean },
  meta: AuditRequestMeta,
) {
  assertMayHandle(p, t);
  if (input.url !== undefined) await checkUrl(deps, input.url);
  const row = await deps.db.transaction(async (tx) => {
    const current = await findWebhook(tx, t, id);
    const updated = await updateWebhookRow(tx, current.id, {
      ...(input.url !== undefined ? { url: input.url } : {}),
      ...(input.events !== undefined ? { events: [...new Set(input.events)] } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.active !== undefined ? { active: input.active } : {}),
      updatedAt: deps.clock.now(),
    });
    const changed = Object.keys(input);
    await deps.audit.record(
      tx,
      {
        action: 'webhook.update',
        actor: actor(p),
        ...auditTenant(t),
        resourceType: 'webhook',
        resourceId: id,
        details: {
          changed,
          ...(input.url !== undefined ? { host: hostOf(input.url) } : {}),
          ...(input.active !== undefined ? { active: input.active } : {}),
        },
      },
      meta,
    );
    return updated;
  });
  // Reactivated: what waited goes out now.
  deps.webhooks.kick();
  return webhookToJson(row);
}

export async function deleteWebhook(
  deps: Deps,
  p: Principal,
  t: Target,
  id: string,
  meta: AuditRequestMeta,
): Promise<void> {
  assertMayHandle(p, t);
  await deps.db.transaction(async (tx) => {
    const current = await findWebhook(tx, t, id);
    await deleteWebhookRow(tx, current.id);
    await deps.audit.record(
      tx,
      {
        action: 'webhook.delete',
        actor: actor(p),
        ...auditTenant(t),
        resourceType: 'webhook',
        resourceId: id,
        details: { host: hostOf(current.url) },
      },
      meta,
    );
  });
  deps.webhooks.kickIfQueued();
}

const iso = (d: Date | null) => d?.toISOString() ?? null;
export const deliveryToJson = (r: DeliveryRow) => ({
  id: r.id,
  webhookId: r.webhookId,
  sequence: r.sequence,
  auditId: r.auditId,
  action: r.action,
  status: r.status as 'pending' | 'delivered' | 'failed',
  attempts: r.attempts,
  nextAttemptAt: r.status === 'pending' ? r.notBefore.toISOString() : null,
  lastAttemptAt: iso(r.lastAttemptAt),
  lastStatus: r.lastStatus,
  lastError: r.lastError,
  createdAt: r.createdAt.toISOString(),
  deliveredAt: iso(r.deliveredAt),
  failedAt: iso(r.failedAt),
});

/** The delivery log, newest event first (keyset on the subscription's sequence). */
export async function listDeliveries(
  deps: Deps,
  p: Principal,
  t: Target,
  id: string,
  q: { limit: number; cursor?: string; status?: 'pending' | 'delivered' | 'failed' },
) {
  assertMayHandle(p, t);
  const hook = await findWebhook(deps.db, t, id);
  const before = decodeCursor(q.cursor, z.object({ s: z.number().int() }));
  const rows = await listDeliveryRows(deps.db, hook.id, { status: q.status, before, limit: q.limit });
  const page = pageOf(rows, q.limit, (r) => ({ s: r.sequence }));
  return { data: page.data.map(deliveryToJson), nextCursor: page.nextCursor };
}

/**
 * Queues one delivery (any status) or every failed one again, with a fresh retry window. They keep their sequence,
 * so they go out before the subscription's later events.
 */
export async function redeliver(
  deps: Deps,
  p: Principal,
  t: Target,
  id: string,
  deliveryId: string | undefined,
  meta: AuditRequestMeta,
) {
  assertMayHandle(p, t);
  const now = deps.clock.now();
  const queued = await deps.db.transaction(async (tx) => {
    const hook = await findWebhook(tx, t, id);
    const rows = await requeueDeliveries(tx, hook.id, deliveryId, now, new Date(now.getTime() + RETRY_WINDOW_MS));
    if (deliveryId && rows.length === 0) throw notFound('delivery');
    await deps.audit.record(
      tx,
      {
        action: 'webhook.redeliver',
        actor: actor(p),
        ...auditTenant(t),
        resourceType: 'webhook',
        resourceId: id,
        details: { deliveryId: deliveryId ?? null, queued: rows.length },
      },
      meta,
    );
    return rows.length;
  });
  deps.webhooks.kick();
  return { queued };
}

/** A signed `webhook.ping` straight to the URL (not queued, not numbered): the receiver's answer is the result. */
export async function ping(deps: Deps, p: Principal, t: Target, id: string) {
  assertMayHandle(p, t);
  const hook = await findWebhook(deps.db, t, id);
  let secret: string;
  try {
    secret = openSecret(deps.box, hook.id, hook.secretSealed);
  } catch {
    return { ok: false, status: null, error: 'the signing secret cannot be opened (encryption key missing)' };
  }
  const body = JSON.stringify({
    type: 'webhook.ping',
    timestamp: deps.clock.now().toISOString(),
    data: { webhookId: hook.id },
  });
  return sendSigned({
    url: hook.url,
    secret,
    messageId: `ping_${randomUUID()}`,
    body,
    reach: deps.config.webhooksOutbound,
  });
}

// One signed POST to a subscriber (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature) through the
// one outbound guard (src/platform/outbound.ts). Used by the delivery worker and by the ping.
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { outboundFailure, type OutboundReach, publicFetch } from '../../platform/outbound.js';
import { openAs, sealAs } from '../../db/sealed-catalogue.js';
import type { SecretBox } from '../../platform/secret-box.js';

/** A delivery that takes longer than this counts as failed (and is retried). */
export const SEND_TIMEOUT_MS = 10_000;

export const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/** The secret is sealed bound to its subscription: a sealed value copied to another row does not open. */
export const sealSecret = (box: SecretBox, webhookId: string, secret: string) =>
  sealAs(box, 'webhookSecret', secret, webhookId);
export const openSecret = (box: SecretBox, webhookId: string, sealed: string) =>
  openAs(box, 'webhookSecret', sealed, webhookId);

export interface SendResult {
  ok: boolean;
  status: number | null;
  error: string | null;
}

/**
 * Signs and POSTs one message. `messageId` is the same on every attempt of one delivery (receivers drop repeats by it).
 * The signature timestamp is the wall clock: receivers compare it with theirs to refuse replays.
 */
export async function sendSigned(o: {
  url: string;
  secret: string;
  messageId: string;
  body: string;
  reach: OutboundReach;
}): Promise<SendResult> {
  const at = new Date();
  const signature = new Webhook(o.secret).sign(o.messageId, at, o.body);
  try {
    const res = await publicFetch(
      o.url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Gatehouse-Webhooks/1',
          'webhook-id': o.messageId,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': signature,
        },
        body: o.body,
        signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
      },
      o.reach,
      'The webhook URL',
    );
    // The answer's body is not needed: drop it unread.
    await res.body?.cancel().catch(() => {});
    if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status, error: null };
    return { ok: false, status: res.status, error: `the receiver answered ${res.status}` };
  } catch (err) {
    return { ok: false, status: null, error: outboundFailure(err) };
  }
}

// Known devices: a long-lived random device cookie, stored only as its SHA-256 per user. A sign-in from
// a browser the account has not used before mails the user once, with a "this was not me" link that ends that
// session and starts a password reset.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.js';
import { onceAnswered } from '../../http/after-answer.js';
import { randomToken, sha256 } from '../../platform/crypto.js';
import { mails } from './mail-templates.js';
import {
  bindKnownDevice,
  bindSessionDevice,
  createFlow,
  findSession,
  findUser,
  hasKnownDevice,
  insertKnownDevice,
  lockUser,
  touchKnownDevice,
} from './repo.js';
import { toSessionJson } from './session-json.js';

export const DEVICE_COOKIE = 'service_device';
/** Browsers cap cookie lifetimes at 400 days. */
const DEVICE_COOKIE_MAX_AGE_S = 400 * 24 * 3600;
export const REPORT_TTL_MS = 72 * 3600 * 1000;
const DEVICE_TOKEN = /^[A-Za-z0-9_-]{32,64}$/;

/**
 * Runs after a sign-in committed: a returning browser's session is bound to its device at once; a new device is
 * recorded, and the user mailed about it, only once the answer went out (a sign-in whose answer failed mails
 * nobody, and its retry from the same browser is the new sign-in).
 */
export async function recognizeDevice(
  deps: Deps,
  req: FastifyRequest,
  reply: FastifyReply,
  userId: string,
  sessionId: string,
): Promise<void> {
  const presented = req.cookies[DEVICE_COOKIE];
  const token = presented && DEVICE_TOKEN.test(presented) ? presented : randomToken();
  // A returning browser (the common case): one statement, no lock; only a new device needs the account's lock.
  if (token === presented && (await bindKnownDevice(deps.db, userId, sha256(token), sessionId, deps.clock.now())))
    return;
  if (token !== presented) {
    reply.setCookie(DEVICE_COOKIE, token, {
      httpOnly: true,
      sameSite: 'lax',
      secure: deps.config.secureCookies,
      path: '/api/v1',
      maxAge: DEVICE_COOKIE_MAX_AGE_S,
    });
  }
  onceAnswered(reply, () => recordNewDevice(deps, userId, sessionId, token));
}

/** Records a device the account has not used before (or finds it, when two sign-ins raced) and mails about it. */
async function recordNewDevice(deps: Deps, userId: string, sessionId: string, token: string): Promise<void> {
  const now = deps.clock.now();
  const mailed = await deps.db.transaction(async (tx) => {
    // One sign-in at a time per account decides what counts as its first device.
    await lockUser(tx, userId);
    const known = await touchKnownDevice(tx, userId, sha256(token), now);
    if (known) {
      await bindSessionDevice(tx, sessionId, known);
      return false;
    }
    const other = await hasKnownDevice(tx, userId);
    const device = await insertKnownDevice(tx, userId, sha256(token), now);
    await bindSessionDevice(tx, sessionId, device);
    // The account's first device ever is recorded silently: there is nothing to compare it with.
    if (!other) return false;
    const { token: report } = await createFlow(tx, {
      kind: 'session_report',
      userId,
      data: { sessionId },
      ttlMs: REPORT_TTL_MS,
      now,
    });
    const user = await findUser(tx, userId);
    // Mailed even when the session already ended: signing out at once must not hide a sign-in.
    const session = await findSession(tx, sessionId);
    const s = session ? toSessionJson(session, null) : { browser: null, os: null, ip: null };
    const seenOn = [s.browser, s.os].filter(Boolean).join(' on ') || 'an unknown browser';
    const url = `${deps.config.appUrl}/account/not-me?token=${encodeURIComponent(report)}`;
    await deps.outbox.enqueue(
      tx,
      mails.newDevice(user!.email, { when: now.toISOString(), ip: s.ip ?? 'unknown', device: seenOn, url }),
    );
    return true;
  });
  if (mailed) deps.outbox.kick();
}

// Known devices (issue 19): a long-lived random device cookie, stored only as its SHA-256 per user. A sign-in from
// a browser the account has not used before mails the user once, with a "this was not me" link that ends that
// session and starts a password reset.
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.js';
import { knownDevices, sessions, users } from '../../db/schema/index.js';
import { AppError } from '../../http/errors.js';
import { randomToken, sha256 } from '../../platform/crypto.js';
import type { AuditRequestMeta } from '../audit/writer.js';
import { consumeFlow, createFlow, voidFlows } from './flows.js';
import { RESET_TTL_MS, resetUrl } from './login-service.js';
import { bindKnownDevice } from './login-statements.js';
import { mails } from './mail-templates.js';
import { listMemberships, pickDefault } from './memberships.js';
import { toSessionJson } from './session-list.js';

export const DEVICE_COOKIE = 'service_device';
/** Browsers cap cookie lifetimes at 400 days. */
const DEVICE_COOKIE_MAX_AGE_S = 400 * 24 * 3600;
export const REPORT_TTL_MS = 72 * 3600 * 1000;
const DEVICE_TOKEN = /^[A-Za-z0-9_-]{32,64}$/;

/** Runs after a sign-in committed: binds the session to the device and mails the user about a new one. */
export async function recognizeDevice(
  deps: Deps,
  req: FastifyRequest,
  reply: FastifyReply,
  userId: string,
  sessionId: string,
): Promise<void> {
  const presented = req.cookies[DEVICE_COOKIE];
  const token = presented && DEVICE_TOKEN.test(presented) ? presented : randomToken();
  const now = deps.clock.now();
  // A returning browser (the common case): one statement, no lock; only a new device needs the account's lock.
  if (token === presented && (await bindKnownDevice(deps.db, userId, sha256(token), sessionId, now))) return;
  const outcome = await deps.db.transaction(async (tx) => {
    // One sign-in at a time per account decides what counts as its first device.
    await tx.execute(sql`select id from users where id = ${userId} for update`);
    const [known] = await tx
      .update(knownDevices)
      .set({ lastSeenAt: now })
      .where(and(eq(knownDevices.userId, userId), eq(knownDevices.tokenHash, sha256(token))))
      .returning({ id: knownDevices.id });
    if (known) {
      await tx.update(sessions).set({ deviceId: known.id }).where(eq(sessions.id, sessionId));
      return { isNew: false as const };
    }
    const [other] = await tx
      .select({ id: knownDevices.id })
      .from(knownDevices)
      .where(eq(knownDevices.userId, userId))
      .limit(1);
    const [device] = await tx
      .insert(knownDevices)
      .values({ userId, tokenHash: sha256(token), createdAt: now, lastSeenAt: now })
      .returning({ id: knownDevices.id });
    await tx.update(sessions).set({ deviceId: device!.id }).where(eq(sessions.id, sessionId));
    // The account's first device ever is recorded silently: there is nothing to compare it with.
    if (!other) return { isNew: true as const, report: null };
    const { token: report } = await createFlow(tx, {
      kind: 'session_report',
      userId,
      data: { sessionId },
      ttlMs: REPORT_TTL_MS,
      now,
    });
    const [user] = await tx.select({ email: users.email }).from(users).where(eq(users.id, userId));
    const [session] = await tx.select().from(sessions).where(eq(sessions.id, sessionId));
    const s = toSessionJson(session!, null);
    const seenOn = [s.browser, s.os].filter(Boolean).join(' on ') || 'an unknown browser';
    const url = `${deps.config.appUrl}/account/not-me?token=${encodeURIComponent(report)}`;
    await deps.outbox.enqueue(
      tx,
      mails.newDevice(user!.email, { when: now.toISOString(), ip: s.ip ?? 'unknown', device: seenOn, url }),
    );
    return { isNew: true as const, report };
  });
  if (token !== presented) {
    reply.setCookie(DEVICE_COOKIE, token, {
      httpOnly: true,
      sameSite: 'lax',
      secure: deps.config.secureCookies,
      path: '/api/v1',
      maxAge: DEVICE_COOKIE_MAX_AGE_S,
    });
  }
  if (outcome.isNew && outcome.report) deps.outbox.kick();
}

/**
 * POST /auth/sessions/report: the "this was not me" link. Ends the reported session (once; the link is single-use)
 * and mails a password reset link, voiding any earlier one.
 */
export async function reportSession(deps: Deps, token: string, meta: AuditRequestMeta): Promise<void> {
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    const flow = await consumeFlow(tx, 'session_report', token, now);
    if (!flow?.userId) throw new AppError('invalid_report_token');
    const sessionId = (flow.data as { sessionId: string }).sessionId;
    const ended = await tx
      .update(sessions)
      .set({ revokedAt: now, revokeReason: 'reported_not_me' })
      .where(and(eq(sessions.id, sessionId), eq(sessions.userId, flow.userId), isNull(sessions.revokedAt)))
      .returning({ id: sessions.id });
    const [user] = await tx.select().from(users).where(eq(users.id, flow.userId));
    if (!user) throw new AppError('invalid_report_token');
    await voidFlows(tx, user.id, 'password_reset', now);
    const reset =
      user.status === 'active'
        ? await createFlow(tx, { kind: 'password_reset', userId: user.id, ttlMs: RESET_TTL_MS, now })
        : null;
    const ctx = pickDefault(await listMemberships(tx, user.id));
    await deps.audit.record(
      tx,
      {
        action: 'auth.session.reported',
        actor: { userId: user.id, email: user.email },
        partnerId: ctx.partnerId,
        orgId: ctx.orgId,
        resourceType: 'session',
        resourceId: sessionId,
        details: { sessionEnded: ended.length === 1, resetSent: reset !== null },
      },
      meta,
    );
    if (reset) await deps.outbox.enqueue(tx, mails.passwordReset(user.email, { url: resetUrl(deps, reset.token) }));
  });
  deps.outbox.kick();
}

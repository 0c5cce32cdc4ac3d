import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mailOutbox } from '../../src/db/schema/index.js';
import { retryDelayMs } from '../../src/platform/mail-outbox.js';
import { orgMember } from '../auth/helpers.js';
import { startApp, startPeer, type TestApp } from '../support/app.js';
import { linkToken, startMailCatcher, type MailCatcher } from '../support/smtp.js';

let t: TestApp;
let mail: MailCatcher;

beforeAll(async () => {
  mail = await startMailCatcher();
  t = await startApp({ SMTP_URL: mail.url, MAIL_LEASE_SECONDS: '30' });
}, 120_000);
afterAll(async () => {
  await t?.close();
  await mail?.close();
});
beforeEach(async () => {
  mail.mode = 'accept';
  await t.deps.db.delete(mailOutbox);
});

const outbox = () => t.deps.db.select().from(mailOutbox);
const isReset = (m: { subject: string }) => /reset/i.test(m.subject);

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('mail is written with the change that calls for it and sent after the commit', () => {
  it('a reset request leaves no row once the server accepted the mail, and the mailed link works', async () => {
    const { user } = await orgMember(t);
    expect((await t.client().post('/auth/forgot-password', { email: user.email })).status).toBe(200);
    const m = await mail.waitFor(user.email, isReset);
    expect(linkToken(m)).toMatch(/.{16,}/);
    await until('the sent row to be deleted', async () => (await outbox()).length === 0);
    expect(await (await fetch(`${t.baseUrl}/metrics`)).text()).toMatch(
      /gatehouse_mails_total\{result="sent",template="password_reset"\} [1-9]/,
    );
  });

  it('at rest the message is sealed: neither the link token nor the address is readable in the row', async () => {
    const { user } = await orgMember(t);
    mail.mode = 'refuse';
    expect((await t.client().post('/auth/forgot-password', { email: user.email })).status).toBe(200);
    const row = await until('a refused row', async () => (await outbox()).find((r) => r.attempts >= 1 && r.lastError));
    mail.mode = 'accept';
    t.clock.advance(retryDelayMs(row!.attempts) + 1);
    t.deps.outbox.kick();
    const token = linkToken(await mail.waitFor(user.email, isReset));
    expect(row!.sealed).toMatch(/^gh1\./);
    expect(row!.sealed).not.toContain(token);
    expect(row!.sealed).not.toContain(user.email);
    expect(row!.template).toBe('password_reset');
  });
});

describe('a refusing mail server delays the mail, it does not lose it', () => {
  it('451 → the row stays with its error and a backoff; once the server accepts, the retry delivers it', async () => {
    const { user } = await orgMember(t);
    mail.mode = 'refuse';
    expect((await t.client().post('/auth/forgot-password', { email: user.email })).status).toBe(200);
    const row = await until('the first failed attempt', async () =>
      (await outbox()).find((r) => r.attempts === 1 && r.lastError),
    );
    expect(row.lastError).toMatch(/451|try again/i);
    expect(row.leasedUntil).toBeNull();
    expect(row.notBefore.getTime()).toBeGreaterThan(t.clock.now().getTime() + retryDelayMs(1) - 1_000);
    // Not due yet: a kick sends nothing.
    mail.mode = 'accept';
    t.deps.outbox.kick();
    await new Promise((r) => setTimeout(r, 300));
    expect(mail.countTo(user.email)).toBe(0);
    // Due: delivered once, row gone.
    t.clock.advance(retryDelayMs(1) + 1);
    t.deps.outbox.kick();
    await mail.waitFor(user.email, isReset);
    await until('the row to be deleted', async () => (await outbox()).length === 0);
    expect(mail.countTo(user.email)).toBe(1);
  });

  it('after eight refused attempts the mail is given up: kept with failed_at and its last error, never retried', async () => {
    const { user } = await orgMember(t);
    mail.mode = 'refuse';
    expect((await t.client().post('/auth/forgot-password', { email: user.email })).status).toBe(200);
    for (let attempt = 1; attempt <= 8; attempt++) {
      await until(`attempt ${attempt}`, async () =>
        (await outbox()).find((r) => r.attempts === attempt && r.leasedUntil === null),
      );
      t.clock.advance(retryDelayMs(attempt) + 1);
      t.deps.outbox.kick();
    }
    const [row] = await until('the give-up', async () => {
      const rows = await outbox();
      return rows[0]?.failedAt ? rows : undefined;
    });
    expect(row!.attempts).toBe(8);
    mail.mode = 'accept';
    t.clock.advance(3_600_000);
    t.deps.outbox.kick();
    await new Promise((r) => setTimeout(r, 300));
    expect(mail.countTo(user.email)).toBe(0);
    expect(t.logs()).toContain('mail delivery failed; given up');
  });
});

describe('an instance that died while sending does not lose the mail', () => {
  it('a row leased by a dead instance waits for the lease, then another instance sends it', async () => {
    const { user } = await orgMember(t);
    // As if an instance had claimed the mail and then died: the row is leased for 30 s.
    await t.deps.db.transaction(async (tx) => {
      await t.deps.outbox.enqueue(tx, {
        to: user.email,
        subject: 'Reset your password',
        text: 'https://x/reset-password?token=abcdefghijklmnopqrstuvwxyz',
        html: '<p>x</p>',
        template: 'password_reset',
      });
    });
    await t.deps.db.update(mailOutbox).set({ leasedUntil: new Date(t.clock.now().getTime() + 30_000), attempts: 1 });
    const peer = await startPeer(t);
    try {
      peer.deps.outbox.kick();
      t.deps.outbox.kick();
      await new Promise((r) => setTimeout(r, 300));
      expect(mail.countTo(user.email)).toBe(0);
      t.clock.advance(30_001);
      peer.deps.outbox.kick();
      t.deps.outbox.kick();
      await mail.waitFor(user.email, isReset);
      await until('the row to be deleted', async () => (await outbox()).length === 0);
      // Claimed by one instance only: sent once.
      expect(mail.countTo(user.email)).toBe(1);
    } finally {
      await peer.close();
    }
  });

  it('a transaction that rolls back leaves no mail behind', async () => {
    const { user } = await orgMember(t);
    await expect(
      t.deps.db.transaction(async (tx) => {
        await t.deps.outbox.enqueue(tx, {
          to: user.email,
          subject: 'Reset your password',
          text: 'x',
          html: 'x',
          template: 'password_reset',
        });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    t.deps.outbox.kick();
    await new Promise((r) => setTimeout(r, 300));
    expect(await outbox()).toHaveLength(0);
    expect(mail.countTo(user.email)).toBe(0);
  });
});

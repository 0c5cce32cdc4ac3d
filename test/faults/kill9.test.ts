// kill -9 of the service in the middle of work loses nothing committed and leaves no partial rows (PostgreSQL).
// The service runs as a child process (src/main.ts through tsx) on this test file's fresh database, so SIGKILL is a
// real one: no shutdown hook, no finally block, the database ends the connection and rolls back what was open.
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contacts, devices, enrollmentKeys, mailOutbox, sessions, users } from '../../src/db/schema/index.js';
import { SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { createKey } from '../onboarding/helpers.js';
import { startApp, type TestApp } from '../support/app.js';
import { kill9, spawnService as spawnChild } from '../support/child-service.js';
import { ApiClient } from '../support/client.js';
import { createOrg, createPartner, createSite, signedInOrgMember } from '../support/fixtures.js';
import { linkToken, startMailCatcher, type MailCatcher } from '../support/smtp.js';

const onPostgres = Boolean(process.env.DATABASE_URL);
const ORG_VIEWER = SYSTEM_ROLES[5]!.id as string;
const PASSWORD = 'Glacier-7f3a9c-Saffron!';
let t: TestApp;
let mail: MailCatcher;

beforeAll(async () => {
  if (!onPostgres) return;
  mail = await startMailCatcher();
  // A short lease: a mail the killed instance held is retried by the next one two seconds later.
  t = await startApp({ SMTP_URL: mail.url, MAIL_LEASE_SECONDS: '2' });
}, 120_000);
afterAll(async () => {
  await t?.close();
  await mail?.close();
});

const spawnService = () => spawnChild(t);

/** Waits until a connection of this database (other than ours) has held a transaction open for `ms`. */
/** Other sessions' activity, read as the login role: the application's role sees only its own in pg_stat_activity. */
function asLogin<T extends Record<string, unknown>>(q: ReturnType<typeof sql>) {
  return t.deps.db.transaction(async (tx) => {
    await tx.execute(sql`select set_config('role', 'none', true)`);
    return tx.execute<T>(q);
  });
}

async function transactionOpenFor(ms: number, timeoutMs = 30_000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const rows = await asLogin<{ n: number }>(
      sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and xact_start is not null and now() - xact_start > make_interval(secs => ${ms / 1000})`,
    );
    if (Number((rows as unknown as { rows: { n: number }[] }).rows[0]!.n) > 0) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

/** Holds a table in EXCLUSIVE mode (reads pass, writes wait) until release() is called. */
async function holdWrites(table: 'sessions' | 'devices'): Promise<() => Promise<void>> {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let locked!: () => void;
  const isLocked = new Promise<void>((r) => (locked = r));
  const done = t.deps.db.transaction(async (tx) => {
    await tx.execute(sql.raw(`lock table ${table} in exclusive mode`));
    locked();
    await released;
  });
  await isLocked;
  return async () => {
    release();
    await done;
  };
}

/** Waits until another connection of this database waits on a lock (the request is inside its transaction). */
async function someoneWaitsOnALock(timeoutMs = 30_000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const rows = await asLogin<{ n: number }>(
      sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and wait_event_type = 'Lock'`,
    );
    if (Number((rows as unknown as { rows: { n: number }[] }).rows[0]!.n) > 0) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

/** Whether the connection waiting on a lock has already written to `table` in its open transaction. */
async function waiterHasWritten(table: string): Promise<boolean> {
  const rows = await asLogin<{ n: number }>(sql`
    select count(*)::int as n from pg_locks l join pg_class c on c.oid = l.relation
    where c.relname = ${table} and l.mode = 'RowExclusiveLock' and l.granted
      and l.pid in (select pid from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock')`);
  return Number((rows as unknown as { rows: { n: number }[] }).rows[0]!.n) > 0;
}

const csvOf = (n: number, tag: string) =>
  [
    'externalId,firstName,lastName,email',
    ...Array.from({ length: n }, (_, i) => `${tag}-${i},${tag}First${i},${tag}Last${i % 997},${tag}${i}@kill.example`),
  ].join('\n');

describe.skipIf(!onPostgres)('kill -9 during work loses nothing committed and leaves no partial rows', () => {
  it("a contacts import killed mid-transaction: the earlier import is intact, none of the killed one's rows exist", async () => {
    const partner = await createPartner(t);
    const org = await createOrg(t, partner.id);
    const admin = await signedInOrgMember(t, org);
    const child = await spawnService();
    try {
      const api = new ApiClient(child.origin).withToken(admin.session.accessToken);
      const first = await api.request('POST', '/contacts/import', {
        rawBody: csvOf(25, 'kept'),
        contentType: 'text/csv',
        query: { orgId: org.id },
      });
      expect(first.status, first.text).toBe(200);

      const big = api
        .request('POST', '/contacts/import', {
          rawBody: csvOf(20_000, 'killed'),
          contentType: 'text/csv',
          query: { orgId: org.id },
        })
        .catch((err: Error) => err);
      expect(await transactionOpenFor(100), 'the import held a transaction open').toBe(true);
      await kill9(child);
      expect(await big).toBeInstanceOf(Error); // the connection died with the process: no answer
    } finally {
      await kill9(child);
    }
    // The server rolled the killed import back: what was committed before is all there is.
    const rows = await t.deps.db
      .select({ externalId: contacts.externalId })
      .from(contacts)
      .where(eq(contacts.orgId, org.id));
    expect(rows).toHaveLength(25);
    expect(rows.every((r) => r.externalId!.startsWith('kept-'))).toBe(true);

    // And the service starts again on the same database and imports.
    const again = await spawnService();
    try {
      const api = new ApiClient(again.origin).withToken(admin.session.accessToken);
      const res = await api.request('POST', '/contacts/import', {
        rawBody: csvOf(10, 'after'),
        contentType: 'text/csv',
        query: { orgId: org.id },
      });
      expect(res.status, res.text).toBe(200);
    } finally {
      await kill9(again);
    }
    expect(await t.deps.db.select().from(contacts).where(eq(contacts.orgId, org.id))).toHaveLength(35);
  }, 180_000);
});

describe.skipIf(!onPostgres)('kill -9 inside an invitation acceptance, an enrolment and a mail send', () => {
  it('an acceptance killed after it activated the account but before its session row: the invitation is still whole and works', async () => {
    const org = await createOrg(t, (await createPartner(t)).id);
    const admin = await signedInOrgMember(t, org);
    const to = `killed-${Date.now()}@example.test`;
    expect(
      (await admin.api.post('/users/invite', { email: to, name: 'Kill Nine', roleId: ORG_VIEWER, orgId: org.id }))
        .status,
    ).toBe(201);
    const token = linkToken(await mail.waitFor(to));
    const child = await spawnService();
    const release = await holdWrites('sessions');
    try {
      const accepting = new ApiClient(child.origin)
        .post('/auth/accept-invite', { token, password: PASSWORD })
        .catch((err: Error) => err);
      expect(await someoneWaitsOnALock(), 'the acceptance waits inside its transaction').toBe(true);
      expect(await waiterHasWritten('users'), 'it has already activated the account').toBe(true);
      await kill9(child);
      expect(await accepting).toBeInstanceOf(Error);
    } finally {
      await kill9(child);
      await release();
    }
    const [user] = await t.deps.db.select().from(users).where(eq(users.email, to));
    expect(user).toMatchObject({ status: 'invited', passwordHash: null });
    expect(await t.deps.db.select().from(sessions).where(eq(sessions.userId, user!.id))).toHaveLength(0);
    // The same link still works (the consumed flow was rolled back with the rest).
    const accepted = await t.client().post('/auth/accept-invite', { token, password: PASSWORD });
    expect(accepted.status, accepted.text).toBe(200);
  }, 180_000);

  it('an enrolment killed after it counted the key but before its device row: the key is unused and enrols afterwards', async () => {
    const org = await createOrg(t, (await createPartner(t)).id);
    const site = await createSite(t, org.id);
    const admin = await signedInOrgMember(t, org);
    const key = await createKey(admin.api, { orgId: org.id, siteId: site.id, maxUsage: 1 });
    const child = await spawnService();
    const release = await holdWrites('devices');
    try {
      const enrolling = new ApiClient(child.origin)
        .post('/agents/enroll', { enrollmentKey: key.key, hostname: 'pc-killed', osType: 'windows' })
        .catch((err: Error) => err);
      expect(await someoneWaitsOnALock(), 'the enrolment waits inside its transaction').toBe(true);
      expect(await waiterHasWritten('enrollment_keys'), 'it has already counted the key').toBe(true);
      await kill9(child);
      expect(await enrolling).toBeInstanceOf(Error);
    } finally {
      await kill9(child);
      await release();
    }
    const [row] = await t.deps.db.select().from(enrollmentKeys).where(eq(enrollmentKeys.id, key.id));
    expect(row!.usageCount).toBe(0);
    expect(await t.deps.db.select().from(devices).where(eq(devices.orgId, org.id))).toHaveLength(0);
    const again = await t
      .client()
      .post('/agents/enroll', { enrollmentKey: key.key, hostname: 'pc-after', osType: 'windows' });
    expect(again.status, again.text).toBe(201);
  }, 180_000);

  it('a mail send killed while the mail server holds the message: the next instance sends it once the lease ran out', async () => {
    const org = await createOrg(t, (await createPartner(t)).id);
    const { user } = await signedInOrgMember(t, org, { mfaEnabled: false });
    mail.mode = 'stall';
    const stalledBefore = mail.stalled;
    // The in-process app must not take the mail: only the child sends.
    await t.deps.outbox.stop();
    const child = await spawnService();
    try {
      expect((await new ApiClient(child.origin).post('/auth/forgot-password', { email: user.email })).status).toBe(200);
      const deadline = Date.now() + 30_000;
      while (mail.stalled === stalledBefore && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(mail.stalled, 'the child was sending').toBeGreaterThan(stalledBefore);
      await kill9(child);
    } finally {
      await kill9(child);
      mail.mode = 'accept';
    }
    expect(await t.deps.db.select().from(mailOutbox)).toHaveLength(1);
    const next = await spawnService();
    try {
      const m = await mail.waitFor(user.email, (x) => /reset/i.test(x.subject), 30_000);
      const reset = await new ApiClient(next.origin).post('/auth/reset-password', {
        token: linkToken(m),
        newPassword: 'Another-8d2b4e-Marigold!',
      });
      expect(reset.status, reset.text).toBe(200);
      const deadline = Date.now() + 10_000;
      while ((await t.deps.db.select().from(mailOutbox)).length > 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      expect(await t.deps.db.select().from(mailOutbox)).toHaveLength(0);
    } finally {
      await kill9(next);
      t.deps.outbox.start();
    }
  }, 180_000);
});

// Rotating ENCRYPTION_KEY as docs/operations.md tells an operator: seed one value of every sealed kind through the
// API, run the rotation command, restart with the new key alone, and everything queued still goes out: each webhook
// delivers (verified by a real receiver) and each queued mail sends (real SMTP capture). The database is also
// scanned for sealed values (the secret box's `gh1.` prefix) in columns the catalogue does not name.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rotateEncryptionCommand } from '../../src/cli/commands.js';
import { loadConfig } from '../../src/config.js';
import { SEALED, SEALED_KINDS } from '../../src/db/sealed-catalogue.js';
import { mailOutbox } from '../../src/db/schema/index.js';
import { parseKey, SecretBox } from '../../src/platform/secret-box.js';
import { member, PASSWORD, signIn, totpCode } from '../mfa/helpers.js';
import { orgWithProvider } from '../sso/helpers.js';
import { startApp, startPeer, type PeerApp, type TestApp } from '../support/app.js';
import { callbackFor, startOidcProvider, type TestIdp } from '../support/oidc.js';
import { startMailCatcher, type MailCatcher } from '../support/smtp.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';
import { subscribe, until } from '../webhooks/helpers.js';

let t: TestApp;
let peer: PeerApp | undefined;
let tClosed = false;
let mail: MailCatcher;
let rcv: Receiver;
let idp: TestIdp;

beforeAll(async () => {
  mail = await startMailCatcher();
  rcv = await startReceiver();
  t = await startApp({ SMTP_URL: mail.url, WEBHOOKS_ALLOW_INSECURE: 'true', SSO_ALLOW_INSECURE_ISSUERS: 'true' });
  idp = await startOidcProvider({ redirectUris: [callbackFor(t.baseUrl)] });
}, 120_000);
afterAll(async () => {
  await peer?.close();
  if (tClosed) await t?.testDb.drop();
  else await t?.close();
  await idp?.close();
  await rcv?.close();
  await mail?.close();
});

const rowsOf = <T>(r: unknown): T[] => (r as { rows?: T[] }).rows ?? (r as T[]);
const locationOf = (k: { table: string; column: string; jsonField?: string }) =>
  `${k.table}.${k.column}${k.jsonField ? `.${k.jsonField}` : ''}`;

/** Every column (or top-level jsonb field) of the public schema holding a value the secret box sealed. */
async function sealedLocationsInDatabase(): Promise<Set<string>> {
  const db = t.deps.db;
  const columns = rowsOf<{ table: string; column: string; type: string }>(
    await db.execute(sql`select table_name as table, column_name as column, data_type as type
      from information_schema.columns c join information_schema.tables using (table_schema, table_name)
      where table_schema = 'public' and table_type = 'BASE TABLE'
        and data_type in ('text', 'character varying', 'jsonb', 'json')`),
  );
  const found = new Set<string>();
  for (const c of columns) {
    const table = sql.identifier(c.table);
    const col = sql.identifier(c.column);
    if (c.type === 'text' || c.type === 'character varying') {
      const [hit] = rowsOf(await db.execute(sql`select 1 from ${table} where ${col} like 'gh1.%' limit 1`));
      if (hit) found.add(`${c.table}.${c.column}`);
      continue;
    }
    const keys = rowsOf<{ key: string }>(
      await db.execute(sql`select distinct e.key from ${table} cross join lateral jsonb_each_text(
        case when jsonb_typeof(${col}::jsonb) = 'object' then ${col}::jsonb else '{}'::jsonb end) e
        where e.value like 'gh1.%'`),
    );
    for (const k of keys) found.add(`${c.table}.${c.column}.${k.key}`);
    // Deeper than the top level, the catalogue could not re-seal it: report it as such.
    const [deep] = rowsOf(
      await db.execute(sql`select 1 from ${table} where ${col}::text like '%"gh1.%' and not exists (
        select 1 from jsonb_each_text(case when jsonb_typeof(${col}::jsonb) = 'object' then ${col}::jsonb else '{}'::jsonb end) e
        where e.value like 'gh1.%') limit 1`),
    );
    if (deep) found.add(`${c.table}.${c.column}.<nested>`);
  }
  return found;
}

/** One value of every sealed kind, each made by the flow that makes it in production. */
async function seedEveryKind() {
  // Workers paused: the delivery and the mail below stay queued under the old key.
  await t.deps.webhooks.stop();
  await t.deps.outbox.stop();
  const sso = await orgWithProvider(t, idp); // a partner, its admin, an organisation and its OIDC client secret
  const hook = await subscribe(sso.api, rcv, { events: ['role.'] });
  const role = await sso.api.post('/roles', {
    name: `Auditors ${randomBytes(3).toString('hex')}`,
    permissions: [{ resource: 'audit', action: 'read' }],
  });
  expect(role.status, role.text).toBe(201);
  const start = await fetch(`${t.baseUrl}/api/v1/sso/login/${sso.org.id}`, { redirect: 'manual' });
  expect(start.status, await start.text()).toBe(302); // the login's nonce and PKCE verifier are stored
  const enrolled = await member(t);
  const api = await signIn(t, enrolled.email);
  const setup = await api.post('/auth/mfa/setup');
  expect(setup.status, setup.text).toBe(200);
  expect((await api.post('/auth/mfa/enable', { code: totpCode(t, setup.body.secret) })).status).toBe(200);
  const pending = await member(t);
  expect((await (await signIn(t, pending.email)).post('/auth/mfa/setup')).status).toBe(200);
  expect((await t.client().post('/auth/forgot-password', { email: pending.email })).status).toBe(200);
  return { hook, roleId: role.body.id as string, totp: { email: enrolled.email, secret: setup.body.secret as string } };
}

describe('rotating ENCRYPTION_KEY re-seals every sealed kind, so removing the old key loses nothing', () => {
  it('after rotation and a restart on the new key alone, the queued webhook delivers and the queued mail sends', async () => {
    const seeded = await seedEveryKind();
    const inDatabase = await sealedLocationsInDatabase();
    // Every kind was seeded (or the test proves nothing about it), and nothing sealed lies outside the catalogue.
    expect([...inDatabase].sort()).toEqual([...new Set(SEALED_KINDS.map(locationOf))].sort());
    const queuedMail = await t.deps.db.select().from(mailOutbox);
    expect(queuedMail.length).toBeGreaterThan(0);

    const oldKey = t.env.ENCRYPTION_KEY!;
    const newKey = randomBytes(32).toString('base64');
    const rotation = await rotateEncryptionCommand(
      loadConfig({ ...t.env, ENCRYPTION_KEY: newKey, ENCRYPTION_KEYS_PREVIOUS: oldKey }),
      t.testDb.database,
      { userId: null, email: null, type: 'cli', name: 'operator@test' },
    );
    expect(rotation.data).toMatchObject({ ok: true, failed: 0 });
    for (const p of (rotation.data as { locations: { label: string; done: number }[] }).locations)
      expect(p.done, `${p.label} re-sealed`).toBeGreaterThan(0);

    // Every sealed value now opens with the new key alone.
    const onlyNew = new SecretBox(parseKey(newKey));
    for (const kind of SEALED_KINDS) {
      const value = kind.jsonField
        ? sql`(${sql.identifier(kind.column)} ->> ${kind.jsonField})`
        : sql.identifier(kind.column);
      const bound = kind.boundTo ? sql.identifier(kind.boundTo) : sql`''`;
      const rows = rowsOf<{ value: string; bound: string }>(
        await t.deps.db.execute(
          sql`select ${value} as value, ${bound}::text as bound from ${sql.identifier(kind.table)} where ${value} is not null${kind.where ? sql` and ${sql.raw(kind.where)}` : sql``}`,
        ),
      );
      expect(rows.length, kind.label).toBeGreaterThan(0);
      for (const r of rows) expect(() => onlyNew.open(r.value, kind.aad(r.bound)), kind.label).not.toThrow();
    }

    // Restart: the old instance goes, a new one starts with ENCRYPTION_KEY = the new key and no previous key.
    await t.app.close();
    await t.deps.store.close();
    tClosed = true;
    peer = await startPeer(t, { ENCRYPTION_KEY: newKey, ENCRYPTION_KEYS_PREVIOUS: '' });

    const [delivery] = await rcv.waitFor(
      (r) => r.some((x) => x.body.data.webhookId === seeded.hook.id),
      'the delivery',
    );
    expect(delivery!.verified, delivery!.verifyError ?? '').toBe(true);
    expect(delivery!.body.data.record).toMatchObject({ action: 'role.create', resourceId: seeded.roleId });
    for (const m of queuedMail) expect(m.failedAt).toBeNull();
    await until('every queued mail to be sent', async () => (await t.deps.db.select().from(mailOutbox)).length === 0);
    expect(mail.messages.filter((m) => /reset/i.test(m.subject))).toHaveLength(1);

    // The re-sealed TOTP secret still verifies a sign-in on the restarted instance.
    const login = await peer.client().post('/auth/login', { email: seeded.totp.email, password: PASSWORD });
    expect(login.body.tempToken, login.text).toBeTruthy();
    t.clock.advance(30_000);
    const verified = await peer
      .client()
      .post('/auth/mfa/verify', { tempToken: login.body.tempToken, code: totpCode(t, seeded.totp.secret) });
    expect(verified.status, verified.text).toBe(200);
  }, 120_000);
});

describe('every writer and reader of a sealed value names its catalogue entry', () => {
  it('no source file but the catalogue calls the secret box directly', () => {
    const src = join(import.meta.dirname, '..', '..', 'src');
    const direct = (readdirSync(src, { recursive: true }) as string[])
      .filter((f) => /\.tsx?$/.test(f))
      .filter((f) => !['db/sealed-catalogue.ts', 'platform/secret-box.ts'].includes(f.replaceAll('\\', '/')))
      .filter((f) => /\.(seal|open)\(/.test(readFileSync(join(src, f), 'utf8')));
    expect(direct).toEqual([]);
    expect(Object.keys(SEALED).length).toBe(SEALED_KINDS.length);
  });
});

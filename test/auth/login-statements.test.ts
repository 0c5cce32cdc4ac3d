// What a password sign-in costs the database: the statements of one login, counted at the driver on
// both databases, with the hot ones named prepared statements. A new statement on the login path fails here first.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORG_ADMIN_ROLE_ID } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import { addOrgMember, createOrg, createPartner, createUser } from '../support/fixtures.js';
import { countStatements, isBackground, type StatementLog } from '../support/statement-count.js';

let t: TestApp;
let log: StatementLog;
const PASSWORD = 'correct horse battery staple 42';

beforeAll(async () => {
  t = await startApp({ RATE_LIMIT_LOGIN: '100/900' });
  log = countStatements(t.testDb.database);
});
afterAll(async () => {
  log?.restore();
  await t?.close();
});

async function orgMember() {
  const partner = await createPartner(t);
  const org = await createOrg(t, partner.id);
  const user = await createUser(t, { password: PASSWORD });
  await addOrgMember(t, { orgId: org.id, userId: user.id, roleId: ORG_ADMIN_ROLE_ID });
  return user;
}

async function countedLogin(email: string) {
  const api = t.client();
  // The first sign-in records the browser; the second prepares what a returning browser runs; the third is counted.
  for (let i = 0; i < 2; i++) expect((await api.post('/auth/login', { email, password: PASSWORD })).status).toBe(200);
  log.reset();
  const res = await api.post('/auth/login', { email, password: PASSWORD });
  expect(res.status).toBe(200);
  return log.statements().filter((s) => !isBackground(s));
}

/** Row-level security's context statement (src/db/row-security.ts): sent only when a connection changes context. */
const isRowContext = (s: string) =>
  s.startsWith("select set_config('role'") || s.startsWith("select set_config('gatehouse.ctx'");

describe('a password login runs few statements, the hot ones prepared', () => {
  it('a returning browser: ten statements on PostgreSQL (six more for the rate limits in the PGlite store)', async () => {
    const user = await orgMember();
    const statements = await countedLogin(user.email);
    const own = t.testDb.database.kind === 'pglite' ? statements.filter((s) => !/rate_limit_hits/.test(s)) : statements;
    const prepared = (name: string) => own.some((s) => s.startsWith(`${name}:`) || s.startsWith(`execute ${name} `));
    expect(prepared('gh_login_facts')).toBe(true);
    expect(prepared('gh_login_start')).toBe(true);
    expect(prepared('gh_liveness')).toBe(true);
    expect(prepared('gh_login_known_device')).toBe(true);
    // begin, facts, start, audit (lock, chain tail, record, webhooks), commit, liveness, device; PGlite's store adds a
    // transaction of its own for the login rate limit (begin, lock, read, insert, commit) and the account count.
    const expected = 10 + (t.testDb.database.kind === 'pglite' ? 6 : 0);
    const flow = statements.filter((s) => !isRowContext(s));
    expect(flow.length, `${flow.length} statements:\n${statements.join('\n')}`).toBe(expected);
    // Row security sets a connection's context when it changes: the sign-in (system context `login`) and what ran
    // on that connection before; never one per statement.
    expect(statements.filter(isRowContext).length).toBeLessThanOrEqual(3);
  });
});

// Contacts CSV import and CRUD: a JSON body with `csv` or a streamed text/csv body with
// ?orgId=&dryRun=; contacts are organisation-level or pinned to a site by name; idempotent on externalId or previousId;
// fuzzy email or name matches are held back until acknowledged; a dry run writes nothing; a bad row is reported with
// its line and errors and writes nothing while the rest of the file imports; broken files are refused whole.
import { request } from 'node:http';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contacts } from '../../src/db/schema/index.js';
import { startApp, type TestApp } from '../support/app.js';
import type { ApiClient } from '../support/client.js';
import { auditRecords, createOrg, createSite, partnerAdmin, signedInOrgMember } from '../support/fixtures.js';
import { expectError, expectStatus, ORG_ADMIN, ORG_VIEWER } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => t?.close());

const HEADER = 'externalId,previousId,firstName,lastName,email,phone,title,site';
const file = (...rows: string[]) => [HEADER, ...rows].join('\n');

interface Row {
  line: number;
  externalId: string | null;
  status: string;
  contactId?: string;
  match?: { contactId: string; reason: string; score: number };
  errors?: string[];
}
interface Result {
  summary: { created: number; updated: number; unchanged: number; heldBack: number; failed: number };
  rows: Row[];
}

async function setup() {
  const { api, partner } = await partnerAdmin(t);
  const org = await createOrg(t, partner.id);
  const [hq, leeds] = [await createSite(t, org.id, 'Northwind HQ'), await createSite(t, org.id, 'Northwind Leeds')];
  const importJson = async (
    csv: string,
    extra: { dryRun?: boolean; acknowledge?: { externalId: string; action: 'merge' | 'create' }[] } = {},
  ) => expectStatus(await api.post('/contacts/import', { orgId: org.id, csv, ...extra }), 200).body as Result;
  const importCsv = async (csv: string, query: Record<string, string> = {}) =>
    expectStatus(
      await api.request('POST', '/contacts/import', {
        rawBody: csv,
        contentType: 'text/csv',
        query: { orgId: org.id, ...query },
      }),
      200,
    ).body as Result;
  const stored = async () => t.deps.db.select().from(contacts).where(eq(contacts.orgId, org.id));
  return { api, partner, org, hq, leeds, importJson, importCsv, stored };
}
const row = (r: Result, externalId: string) => r.rows.find((x) => x.externalId === externalId)!;
const listAll = async (api: ApiClient, query: Record<string, string>) =>
  expectStatus(await api.get('/contacts', { query: { limit: '200', ...query } }), 200).body.data as {
    id: string;
    externalId: string;
  }[];

describe('the import creates organisation-level and site-pinned contacts', () => {
  it('a JSON body with csv: each row is created, pinned to the named site (case-insensitive) or at organisation level', async () => {
    const { api, org, hq, leeds, importJson } = await setup();
    const res = await importJson(
      file(
        'nw-001,OLD-1,Margaret,Peacock,margaret@northwind.example,+44 20 7946 0101,Finance Director,Northwind HQ',
        'nw-002,OLD-2,Janet,Leverling,janet@northwind.example,,Office Manager,northwind leeds',
        'nw-003,OLD-3,Laura,Callahan,laura@northwind.example,,Accounts,',
      ),
    );
    expect(res.summary).toEqual({ created: 3, updated: 0, unchanged: 0, heldBack: 0, failed: 0 });
    expect(res.rows.map((r) => [r.line, r.externalId, r.status])).toEqual([
      [2, 'nw-001', 'created'],
      [3, 'nw-002', 'created'],
      [4, 'nw-003', 'created'],
    ]);
    const margaret = expectStatus(await api.get(`/contacts/${row(res, 'nw-001').contactId}`), 200).body;
    expect(margaret).toEqual({
      id: row(res, 'nw-001').contactId,
      orgId: org.id,
      siteId: hq.id,
      externalId: 'nw-001',
      previousId: 'OLD-1',
      firstName: 'Margaret',
      lastName: 'Peacock',
      email: 'margaret@northwind.example',
      phone: '+44 20 7946 0101',
      title: 'Finance Director',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(expectStatus(await api.get(`/contacts/${row(res, 'nw-002').contactId}`), 200).body.siteId).toBe(leeds.id);
    expect(expectStatus(await api.get(`/contacts/${row(res, 'nw-003').contactId}`), 200).body.siteId).toBeNull();
  });

  it('a streamed text/csv body with ?orgId= imports the same way, and a file larger than one write batch lands whole', async () => {
    const { importCsv, stored } = await setup();
    const rows = Array.from(
      { length: 1201 },
      (_, i) => `bulk-${i},,First${i},Last${i},person${i}@bulk.example,,,${i % 2 ? 'Northwind HQ' : ''}`,
    );
    const res = await importCsv(file(...rows));
    expect(res.summary).toEqual({ created: 1201, updated: 0, unchanged: 0, heldBack: 0, failed: 0 });
    expect(res.rows.at(-1)).toMatchObject({ line: 1202, externalId: 'bulk-1200', status: 'created' });
    expect(await stored()).toHaveLength(1201);
    const again = await importCsv(file(...rows));
    expect(again.summary).toEqual({ created: 0, updated: 0, unchanged: 1201, heldBack: 0, failed: 0 });
  });
});

describe('the import is idempotent', () => {
  it('a re-import of the same file reports every row unchanged and writes nothing', async () => {
    const { importJson, importCsv, stored } = await setup();
    const csv = file(
      'c-1,old-1,Ada,Lovelace,ada@fabrikam.test,+44 20 7946 0000,CTO,Northwind HQ',
      'c-2,old-2,Alan,Turing,alan@fabrikam.test,,,',
      'c-3,,Grace,Hopper,grace@fabrikam.test,,Admiral,Northwind Leeds',
      ',old-4,Katherine,Johnson,kj@fabrikam.test,,,',
    );
    const first = await importJson(csv);
    expect(first.summary).toEqual({ created: 4, updated: 0, unchanged: 0, heldBack: 0, failed: 0 });
    const before = await stored();
    const again = await importJson(csv);
    expect(again.summary).toEqual({ created: 0, updated: 0, unchanged: 4, heldBack: 0, failed: 0 });
    expect(again.rows.every((r) => r.status === 'unchanged')).toBe(true);
    expect(again.rows.map((r) => r.contactId)).toEqual(first.rows.map((r) => r.contactId));
    const streamed = await importCsv(csv);
    expect(streamed.summary).toEqual({ created: 0, updated: 0, unchanged: 4, heldBack: 0, failed: 0 });
    const after = await stored();
    expect(after.map((c) => [c.id, c.updatedAt.toISOString()]).sort()).toEqual(
      before.map((c) => [c.id, c.updatedAt.toISOString()]).sort(),
    );
  });

  it('a changed row updates the contact found by externalId, or by previousId when the new file has no externalId', async () => {
    const { api, importJson, stored } = await setup();
    const first = await importJson(
      file('c-1,old-1,Ada,Lovelace,ada@fabrikam.test,,CTO,', 'c-2,old-2,Alan,Turing,alan@fabrikam.test,,,'),
    );
    const second = await importJson(
      file(
        'c-1,old-1,Ada,Lovelace,ada@fabrikam.test,,Chief Scientist,Northwind HQ',
        ',old-2,Alan,Turing,alan@fabrikam.test,,Cryptanalyst,',
      ),
    );
    expect(second.summary).toEqual({ created: 0, updated: 2, unchanged: 0, heldBack: 0, failed: 0 });
    expect(second.rows.map((r) => r.contactId)).toEqual(first.rows.map((r) => r.contactId));
    const alan = expectStatus(await api.get(`/contacts/${row(first, 'c-2').contactId}`), 200).body;
    expect(alan).toMatchObject({ externalId: 'c-2', previousId: 'old-2', title: 'Cryptanalyst' });
    expect(await stored()).toHaveLength(2);
    // A new externalId for a known previous-tool id re-keys the same contact.
    const third = await importJson(file('new-2,old-2,Alan,Turing,alan@fabrikam.test,,Cryptanalyst,'));
    expect(third.rows[0]).toMatchObject({ status: 'updated', contactId: row(first, 'c-2').contactId });
    expect(expectStatus(await api.get(`/contacts/${row(first, 'c-2').contactId}`), 200).body.externalId).toBe('new-2');
    expect(await stored()).toHaveLength(2);
  });
});

describe('fuzzy matches are held back until acknowledged', () => {
  it('a same-mailbox email (case, +tag, Gmail dots) or a similar name is held_back with the match, and nothing is written', async () => {
    const { importJson, stored } = await setup();
    const first = await importJson(
      file(
        'e-1,,John,Doe,John.Doe@gmail.com,,,',
        'e-2,,Mary,Major,mary@corp.example,,,',
        'e-3,,Jonathan,Smith,js@corp.example,,,',
      ),
    );
    const ids = Object.fromEntries(first.rows.map((r) => [r.externalId, r.contactId]));
    const res = await importJson(
      file(
        'x-1,,Johnny,Doe-Other,johndoe+billing@googlemail.com,,,',
        'x-2,,M,Different,MARY+it@Corp.Example,,,',
        'x-3,,Jonathon,Smith,jsmith@elsewhere.example,,,',
        'x-4,,Completely,New,new@corp.example,,,',
      ),
    );
    expect(res.summary).toEqual({ created: 1, updated: 0, unchanged: 0, heldBack: 3, failed: 0 });
    expect(row(res, 'x-1')).toMatchObject({
      status: 'held_back',
      match: { contactId: ids['e-1'], reason: 'email', score: 1 },
    });
    expect(row(res, 'x-1').contactId).toBeUndefined();
    expect(row(res, 'x-2')).toMatchObject({ status: 'held_back', match: { contactId: ids['e-2'], reason: 'email' } });
    expect(row(res, 'x-3')).toMatchObject({
      status: 'held_back',
      match: { contactId: ids['e-3'], reason: 'name', score: expect.any(Number) },
    });
    expect(row(res, 'x-3').match!.score).toBeGreaterThan(0.6);
    expect(row(res, 'x-3').match!.score).toBeLessThan(1);
    expect(await stored()).toHaveLength(4);
    // Still held back on the next run: held rows are not remembered as decisions.
    expect((await importJson(file('x-1,,Johnny,Doe-Other,johndoe+billing@googlemail.com,,,'))).rows[0]!.status).toBe(
      'held_back',
    );
    // Not a match: another mailbox at a non-Gmail domain with dots, or another last name.
    const other = await importJson(
      file('y-1,,Zed,Zulu,john.doe@corp.example,,,', 'y-2,,Mary,Majors,m2@else.example,,,'),
    );
    expect(other.summary.created).toBe(2);
  });

  it('acknowledge merge updates the matched contact; acknowledge create makes a new one; both via JSON and text/csv', async () => {
    const { api, org, importJson, importCsv, stored } = await setup();
    const first = await importJson(file('e-1,,John,Doe,john.doe@gmail.com,,,', 'e-2,,Mary,Major,mary@corp.example,,,'));
    const john = row(first, 'e-1').contactId!;
    const csv = file(
      'x-1,,Johnny,Doe,johndoe+billing@gmail.com,+1 555 0100,Billing,',
      'x-2,,Mary,Major,mary+2@corp.example,,,',
    );
    const merged = await importJson(csv, { acknowledge: [{ externalId: 'x-1', action: 'merge' }] });
    expect(merged.summary).toEqual({ created: 0, updated: 1, unchanged: 0, heldBack: 1, failed: 0 });
    expect(row(merged, 'x-1')).toMatchObject({
      status: 'updated',
      contactId: john,
      match: { contactId: john, reason: 'email' },
    });
    expect(expectStatus(await api.get(`/contacts/${john}`), 200).body).toMatchObject({
      externalId: 'x-1',
      firstName: 'Johnny',
      email: 'johndoe+billing@gmail.com',
      phone: '+1 555 0100',
      title: 'Billing',
    });
    const created = await importCsv(csv, { acknowledge: JSON.stringify([{ externalId: 'x-2', action: 'create' }]) });
    expect(created.summary).toEqual({ created: 1, updated: 0, unchanged: 1, heldBack: 0, failed: 0 });
    expect(row(created, 'x-2')).toMatchObject({ status: 'created', contactId: expect.any(String) });
    expect(await stored()).toHaveLength(3);
    // Once acknowledged, the file is idempotent again.
    expect((await importJson(csv)).summary).toEqual({ created: 0, updated: 0, unchanged: 2, heldBack: 0, failed: 0 });
    expectError(
      await api.post('/contacts/import', {
        orgId: org.id,
        csv,
        acknowledge: [{ externalId: 'x-1', action: 'delete' }],
      }),
      400,
      'validation_failed',
    );
  });
});

describe('dry run and bad rows', () => {
  it('a dry run reports what would happen and writes nothing (JSON and ?dryRun=true)', async () => {
    const { org, importJson, importCsv, stored } = await setup();
    await importJson(file('c-1,,Ada,Lovelace,ada@fabrikam.test,,,'));
    const auditsBefore = (await auditRecords(t, 'contact.import')).filter((a) => a.orgId === org.id).length;
    const csv = file(
      'c-1,,Ada,Lovelace,ada@fabrikam.test,,CTO,',
      'c-2,,Alan,Turing,alan@fabrikam.test,,,',
      'c-3,,Bad,Row,not-an-email,,,',
      'c-4,,Ada,Lovelace,ADA+x@fabrikam.test,,,',
    );
    const before = await stored();
    for (const res of [await importJson(csv, { dryRun: true }), await importCsv(csv, { dryRun: 'true' })]) {
      expect(res.summary).toEqual({ created: 1, updated: 1, unchanged: 0, heldBack: 1, failed: 1 });
      expect(row(res, 'c-2')).toMatchObject({ status: 'created' });
      expect(row(res, 'c-2').contactId).toBeUndefined();
    }
    expect(await stored()).toEqual(before);
    expect((await auditRecords(t, 'contact.import')).filter((a) => a.orgId === org.id)).toHaveLength(auditsBefore);
    // dryRun=false in the query writes.
    expect((await importCsv(csv, { dryRun: 'false' })).summary.created).toBe(1);
    expect(await stored()).toHaveLength(2);
  });

  it('a bad row is reported with its line and errors and writes nothing; the rest of the file still imports', async () => {
    const { api, importJson, stored } = await setup();
    const first = await importJson(file('k-1,,Kept,Contact,kept@corp.example,,Original,'));
    const res = await importJson(
      file(
        'ok-1,,Good,One,good1@corp.example,,,',
        'k-1,,Kept,Contact,this is not an email,,Changed,',
        'bad-2,,No,Email,,not a phone!,,',
        'bad-3,,,,,,,',
        ',,Missing,Ids,missing@corp.example,,,',
        'bad-5,,Nowhere,Man,nowhere@corp.example,,,Atlantis',
        'ok-2,,Good,Two,good2@corp.example,,,Northwind HQ',
      ),
    );
    expect(res.summary).toEqual({ created: 2, updated: 0, unchanged: 0, heldBack: 0, failed: 5 });
    expect(res.rows.map((r) => [r.line, r.status])).toEqual([
      [2, 'created'],
      [3, 'failed'],
      [4, 'failed'],
      [5, 'failed'],
      [6, 'failed'],
      [7, 'failed'],
      [8, 'created'],
    ]);
    for (const r of res.rows.filter((x) => x.status === 'failed')) {
      expect(r.errors!.length, JSON.stringify(r)).toBeGreaterThan(0);
      expect(r.contactId).toBeUndefined();
    }
    expect(row(res, 'k-1').errors!.join(' ')).toMatch(/email/);
    expect(row(res, 'bad-2').errors!.join(' ')).toMatch(/phone/);
    expect(row(res, 'bad-5').errors!.join(' ')).toMatch(/site/);
    expect(res.rows[4]!.errors!.join(' ')).toMatch(/externalId/);
    // The failed row did not touch the existing contact.
    expect(expectStatus(await api.get(`/contacts/${row(first, 'k-1').contactId}`), 200).body).toMatchObject({
      email: 'kept@corp.example',
      title: 'Original',
    });
    expect((await stored()).map((c) => c.externalId).sort()).toEqual(['k-1', 'ok-1', 'ok-2']);
  });

  it('a duplicate externalId (or previousId) within one file fails the second row', async () => {
    const { importJson, stored } = await setup();
    const res = await importJson(
      file(
        'd-1,p-1,First,Copy,first@corp.example,,,',
        'd-1,,Second,Copy,second@corp.example,,,',
        'd-2,p-1,Third,Copy,third@corp.example,,,',
      ),
    );
    expect(res.summary).toEqual({ created: 1, updated: 0, unchanged: 0, heldBack: 0, failed: 2 });
    expect(res.rows.map((r) => [r.line, r.status])).toEqual([
      [2, 'created'],
      [3, 'failed'],
      [4, 'failed'],
    ]);
    expect(res.rows[1]!.errors!.join(' ')).toMatch(/more than once/);
    expect((await stored()).map((c) => c.firstName)).toEqual(['First']);
  });
  it('a row whose externalId and previousId name two different contacts fails, in a dry run too; the rest imports', async () => {
    const { importJson, stored } = await setup();
    await importJson(file('a,,Ann,Lee,ann@x.example,,,', 'b,p,Bob,Ray,bob@y.example,,,'));
    const before = await stored();
    const csv = file('a,p,Ann,Lee,ann@x.example,,,', 'c,,Cat,Dee,cat@z.example,,,');
    for (const dryRun of [true, false]) {
      const res = await importJson(csv, { dryRun });
      expect(res.summary, `dryRun ${dryRun}`).toEqual({ created: 1, updated: 0, unchanged: 0, heldBack: 0, failed: 1 });
      expect(res.rows[0]).toMatchObject({ line: 2, externalId: 'a', status: 'failed' });
      expect(res.rows[0]!.errors!.join(' ')).toMatch(/previousId/);
    }
    const after = await stored();
    expect(after.map((c) => c.externalId).sort()).toEqual(['a', 'b', 'c']);
    for (const c of before) expect(after.find((x) => x.id === c.id)).toEqual(c);
  });
});

describe('a broken file is refused whole with 400 invalid_csv and writes nothing', () => {
  it('unknown columns, a duplicated column, no id column, no rows, an unclosed quote, a ragged row', async () => {
    const { api, org, stored } = await setup();
    const cases = [
      'externalId,firstName,favouriteColour\nc-1,Ann,blue',
      'externalId,email,email\nc-1,a@corp.example,b@corp.example',
      'firstName,lastName\nAnn,Lee',
      HEADER,
      '',
      file(
        'c-1,,Ann,Lee,ann@corp.example,,,',
        'c-2,,"Unclosed,Lee,bob@corp.example,,,',
        'c-3,,Cat,Lee,cat@corp.example,,,',
      ),
      file('c-1,,Ann,Lee,ann@corp.example,,,', 'c-2,,Bob,Lee,bob@corp.example,,,,extra'),
    ];
    for (const csv of cases) {
      const json = await api.post('/contacts/import', { orgId: org.id, csv });
      if (csv === '') expectError(json, 400, 'validation_failed');
      else expectError(json, 400, 'invalid_csv');
      if (csv !== '')
        expectError(
          await api.request('POST', '/contacts/import', {
            rawBody: csv,
            contentType: 'text/csv',
            query: { orgId: org.id },
          }),
          400,
          'invalid_csv',
        );
    }
    const unknown = await api.post('/contacts/import', { orgId: org.id, csv: cases[0] });
    expect(unknown.body.message).toMatch(/favouriteColour/);
    expect(await stored()).toEqual([]);
  });

  it("the request is checked before the file: orgId required, acknowledge must be JSON, other partners' organisations are 404", async () => {
    const { api, org } = await setup();
    const other = await partnerAdmin(t);
    const foreign = await createOrg(t, other.partner.id);
    expectError(await api.post('/contacts/import', { csv: file('c-1,,A,B,,,,') }), 400, 'validation_failed');
    expectError(
      await api.request('POST', '/contacts/import', { rawBody: file('c-1,,A,B,,,,'), contentType: 'text/csv' }),
      400,
      'validation_failed',
    );
    expectError(
      await api.request('POST', '/contacts/import', {
        rawBody: file('c-1,,A,B,,,,'),
        contentType: 'text/csv',
        query: { orgId: org.id, acknowledge: 'not json' },
      }),
      400,
      'validation_failed',
    );
    expectError(
      await api.post('/contacts/import', { orgId: org.id, csv: file('c-1,,A,B,,,,'), mode: 'upsert' }),
      400,
      'validation_failed',
    );
    expectError(await api.post('/contacts/import', { orgId: foreign.id, csv: file('c-1,,A,B,,,,') }), 404, 'not_found');
    expectError(
      await api.request('POST', '/contacts/import', {
        rawBody: file('c-1,,A,B,,,,'),
        contentType: 'text/csv',
        query: { orgId: foreign.id },
      }),
      404,
      'not_found',
    );
  });
});

describe('streamed uploads that go wrong', () => {
  /** An import into the organisation, answered within the time (null when it hangs). */
  const answered = <T>(p: Promise<T>, ms = 10_000) =>
    Promise.race([p, new Promise<null>((r) => setTimeout(() => r(null), ms))]);

  it('an upload over 50 MB is refused with 413 payload_too_large, writes nothing, and the next import runs', async () => {
    const { api, org, importJson, stored } = await setup();
    const body = Buffer.concat([
      Buffer.from(`${HEADER}\nbig-1,,Ann,Lee,ann@corp.example,,,\n`),
      Buffer.alloc(51 * 1024 * 1024, 0x0a),
    ]);
    const res = await answered(
      api.request('POST', '/contacts/import', { rawBody: body, contentType: 'text/csv', query: { orgId: org.id } }),
      30_000,
    );
    expect(res, 'the oversized upload got no answer').not.toBeNull();
    expectError(res!, 413, 'payload_too_large');
    expect(await stored()).toEqual([]);
    const next = await answered(importJson(file('c-1,,Ann,Lee,ann@corp.example,,,')));
    expect(next, 'the next import of the organisation hangs').not.toBeNull();
    expect(next!.summary.created).toBe(1);
  });

  it('an upload the client abandons half-way writes nothing and does not hold up the next import', async () => {
    const { org, importJson, stored } = await setup();
    const { session } = await signedInOrgMember(t, org, { roleId: ORG_ADMIN });
    await new Promise<void>((resolve) => {
      const url = new URL(`/api/v1/contacts/import?orgId=${org.id}`, t.baseUrl);
      const req = request(url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${session.accessToken}`,
          'content-type': 'text/csv',
          'content-length': '1000000',
        },
      });
      req.on('error', () => resolve());
      req.write(`${HEADER}\nhalf-1,,Half,Way,half@corp.example,,,\n`);
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 1000);
    });
    const next = await answered(importJson(file('c-1,,Ann,Lee,ann@corp.example,,,')));
    expect(next, 'the next import of the organisation hangs').not.toBeNull();
    expect((await stored()).map((c) => c.externalId)).toEqual(['c-1']);
  });
});

describe('contacts CRUD', () => {
  it("GET /contacts?orgId=&siteId= lists an organisation's contacts, optionally one site's", async () => {
    const { api, org, hq, importJson } = await setup();
    await importJson(
      file(
        'a,,Ann,Adams,ann@corp.example,,,Northwind HQ',
        'b,,Bob,Brown,bob@corp.example,,,',
        'c,,Cat,Clark,cat@corp.example,,,Northwind HQ',
        'd,,Dan,Dunn,dan@corp.example,,,Northwind Leeds',
      ),
    );
    expect((await listAll(api, { orgId: org.id })).map((c) => c.externalId)).toEqual(['a', 'b', 'c', 'd']);
    expect((await listAll(api, { orgId: org.id, siteId: hq.id })).map((c) => c.externalId)).toEqual(['a', 'c']);
    expect((await listAll(api, { orgId: org.id, search: 'bo' })).map((c) => c.externalId)).toEqual(['b']);
    const page = expectStatus(await api.get('/contacts', { query: { orgId: org.id, limit: 3 } }), 200);
    expect(page.body.data).toHaveLength(3);
    const rest = expectStatus(
      await api.get('/contacts', { query: { orgId: org.id, limit: 3, cursor: page.body.nextCursor ?? undefined } }),
      200,
    );
    expect(rest.body.data.map((c) => c.externalId)).toEqual(['d']);
    expectError(await api.get('/contacts'), 400, 'validation_failed');
  });

  it('PATCH /contacts/:id changes fields and the site; DELETE removes it', async () => {
    const { api, org, leeds, importJson } = await setup();
    const res = await importJson(
      file('a,,Ann,Adams,ann@corp.example,,,Northwind HQ', 'b,,Bob,Brown,bob@corp.example,,,'),
    );
    const ann = row(res, 'a').contactId!;
    const patched = expectStatus(
      await api.patch(`/contacts/${ann}`, { title: 'CFO', phone: '+44 20 7946 0999', siteId: leeds.id }),
      200,
    );
    expect(patched.body).toMatchObject({
      id: ann,
      orgId: org.id,
      title: 'CFO',
      phone: '+44 20 7946 0999',
      siteId: leeds.id,
      firstName: 'Ann',
    });
    expect(expectStatus(await api.patch(`/contacts/${ann}`, { siteId: null }), 200).body.siteId).toBeNull();
    expectError(await api.patch(`/contacts/${ann}`, { email: 'not an email' }), 400, 'validation_failed');
    expectError(await api.raw.patch(`/contacts/${ann}`, { orgId: crypto.randomUUID() }), 400, 'validation_failed');
    expectError(await api.patch(`/contacts/${ann}`, {}), 400, 'validation_failed');
    expectError(await api.patch(`/contacts/${ann}`, { externalId: 'b' }), 409, 'conflict');
    const otherOrg = await createOrg(t, org.partnerId);
    const foreignSite = await createSite(t, otherOrg.id);
    expectError(await api.patch(`/contacts/${ann}`, { siteId: foreignSite.id }), 400, 'validation_failed');
    expect(expectStatus(await api.delete(`/contacts/${ann}`), 200).body).toEqual({ success: true });
    expectError(await api.get(`/contacts/${ann}`), 404, 'not_found');
    expectError(await api.patch(`/contacts/${ann}`, { title: 'x' }), 404, 'not_found');
    expectError(await api.delete(`/contacts/${ann}`), 404, 'not_found');
    // A deleted contact comes back on the next import: the file is the source.
    const again = await importJson(
      file('a,,Ann,Adams,ann@corp.example,,,Northwind HQ', 'b,,Bob,Brown,bob@corp.example,,,'),
    );
    expect(again.summary).toEqual({ created: 1, updated: 0, unchanged: 1, heldBack: 0, failed: 0 });
  });

  it("organisation members: an admin imports and edits its own organisation's contacts; a viewer only reads", async () => {
    const { org, importJson } = await setup();
    const res = await importJson(file('a,,Ann,Adams,ann@corp.example,,,'));
    const admin = await signedInOrgMember(t, org, { roleId: ORG_ADMIN });
    const viewer = await signedInOrgMember(t, org, { roleId: ORG_VIEWER });
    expectStatus(
      await admin.api.post('/contacts/import', { orgId: org.id, csv: file('b,,Bob,Brown,bob@corp.example,,,') }),
      200,
    );
    expectStatus(await admin.api.patch(`/contacts/${row(res, 'a').contactId}`, { title: 'Boss' }), 200);
    expect((await listAll(viewer.api, { orgId: org.id })).map((c) => c.externalId)).toEqual(['a', 'b']);
    expectStatus(await viewer.api.get(`/contacts/${row(res, 'a').contactId}`), 200);
    expectError(
      await viewer.api.post('/contacts/import', { orgId: org.id, csv: file('c,,Cat,Clark,,,,') }),
      403,
      'forbidden',
    );
    expectError(await viewer.api.patch(`/contacts/${row(res, 'a').contactId}`, { title: 'x' }), 403, 'forbidden');
    expectError(await viewer.api.delete(`/contacts/${row(res, 'a').contactId}`), 403, 'forbidden');
  });
});

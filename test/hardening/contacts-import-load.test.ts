// A contacts CSV whose rows all share one last name must not make the fuzzy matcher quadratic. The import is linear
// whatever the data (hash indexes, capped blocking buckets, batched writes) and yields the event loop: /healthz stays
// responsive (p95 < 500 ms, none ≥ 2 s) while a hostile file is imported.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contacts } from '../../src/db/schema/index.js';
import { startApp, type TestApp } from '../support/app.js';
import { createOrg, partnerAdmin } from '../support/fixtures.js';
import { expectStatus } from '../onboarding/helpers.js';
import { expectResponsive, whilePolling } from './loop-latency.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp({ LOG_LEVEL: 'warn' });
});
afterAll(async () => t?.close());

const HEADER = 'externalId,previousId,firstName,lastName,email,phone,title,site';
const SYLLABLES = ['ka', 'ro', 'mi', 'len', 'tha', 'bo', 'ri', 'sa', 'dun', 'el', 'vo', 'qui', 'ne', 'to', 'mar', 'jo'];
/** Distinct, name-like first names (deterministic): three or four syllables from the index's digits. */
const firstName = (i: number) => {
  let n = i + 4096;
  let s = '';
  while (n > 0) {
    s += SYLLABLES[n % SYLLABLES.length];
    n = Math.floor(n / SYLLABLES.length);
  }
  return s[0]!.toUpperCase() + s.slice(1);
};
const hostileFile = (rows: number, prefix: string) =>
  [
    HEADER,
    ...Array.from({ length: rows }, (_, i) => `${prefix}-${i},,${firstName(i)},Smith,${prefix}${i}@mail.example,,,`),
  ].join('\n');

async function tenant() {
  const { api, partner } = await partnerAdmin(t);
  const org = await createOrg(t, partner.id);
  const importCsv = async (csv: string, query: Record<string, string> = {}) =>
    expectStatus(
      await api.request('POST', '/contacts/import', {
        rawBody: csv,
        contentType: 'text/csv',
        query: { orgId: org.id, ...query },
      }),
      200,
    ).body as {
      summary: { created: number; updated: number; unchanged: number; heldBack: number; failed: number };
      rows: {
        line: number;
        externalId: string;
        status: string;
        match?: { contactId: string; reason: string; score: number };
      }[];
    };
  return { api, org, importCsv };
}

describe('a contacts import of 20,000 rows with one last name does not stall the service', () => {
  it('/healthz stays responsive (p95 < 500 ms, none ≥ 2 s) throughout the import, and every row is imported', {
    timeout: 120_000,
  }, async () => {
    const { org, importCsv } = await tenant();
    const { result, latency } = await whilePolling(t.baseUrl, () => importCsv(hostileFile(20_000, 'h')));
    expect(result.summary.created + result.summary.heldBack).toBe(20_000);
    expect(result.summary.failed).toBe(0);
    expect(latency.polls).toBeGreaterThan(10);
    expectResponsive(latency, 'the import');
    expect(await t.deps.db.$count(contacts, eq(contacts.orgId, org.id))).toBe(result.summary.created);
  });

  it('/healthz stays responsive (p95 < 500 ms, none ≥ 2 s) while the same file is re-imported over 20,000 existing contacts (dry run too)', {
    timeout: 120_000,
  }, async () => {
    const { importCsv } = await tenant();
    const file = hostileFile(20_000, 'r');
    const first = await importCsv(file);
    for (const query of [{}, { dryRun: 'true' }] as Record<string, string>[]) {
      const { result, latency } = await whilePolling(t.baseUrl, () => importCsv(file, query));
      // Every contact the first import created is found again unchanged (rows the first pass held back may now also
      // match exactly, so the count can be higher: the capped fuzzy buckets fill in a different order on a re-import).
      expect(result.summary.unchanged).toBeGreaterThanOrEqual(first.summary.created);
      expectResponsive(latency, `the re-import ${JSON.stringify(query)}`);
    }
  });
});

describe('the indexed matcher still finds fuzzy name matches in a crowd of one last name', () => {
  it('a one-letter variant of a first name among 5,000 Smiths is held back against its twin; an exact name scores 1', {
    timeout: 60_000,
  }, async () => {
    const { importCsv } = await tenant();
    const crowd = hostileFile(5_000, 'c');
    const first = await importCsv(
      `${crowd}\nt-1,,Jonathan,Smith,jonathan@corp.example,,,\nt-2,,Geoffrey,Smith,geoffrey@corp.example,,,`,
    );
    const jonathan = first.rows.find((r) => r.externalId === 't-1')!;
    const res = await importCsv(
      [
        HEADER,
        'v-1,,Jonathon,Smith,other1@corp.example,,,',
        'v-2,,Geoffrey,SMITH,other2@corp.example,,,',
        'v-3,,Jeffrey,Smith,other3@corp.example,,,',
      ].join('\n'),
    );
    expect(res.rows[0]).toMatchObject({
      status: 'held_back',
      match: { contactId: (jonathan as { contactId?: string }).contactId, reason: 'name' },
    });
    expect(res.rows[0]!.match!.score).toBeGreaterThanOrEqual(0.6);
    expect(res.rows[1]).toMatchObject({ status: 'held_back', match: { reason: 'name', score: 1 } });
    expect(res.rows[2]).toMatchObject({ status: 'held_back', match: { reason: 'name' } });
  });
});

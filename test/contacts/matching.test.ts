// The import's in-memory parts, without a database: the compact contact index finds what a brute-force
// scan finds, the hand-written row check gives zod's messages, and the streamed report is the JSON of its rows.
import { distance } from 'fastest-levenshtein';
import { describe, expect, it } from 'vitest';
import { ImportReport } from '../../src/modules/contacts/import-report.js';
import { checkRow } from '../../src/modules/contacts/import-service.js';
import { BUCKET_CAP, ContactIndex, normaliseName, type ContactFields } from '../../src/modules/contacts/matching.js';

const SYLLABLES = ['ka', 'ro', 'mi', 'len', 'tha', 'bo', 'ri', 'sa', 'an', 'el'];
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}
const person = (i: number, first: string, last: string): ContactFields => ({
  externalId: `e-${i}`,
  previousId: null,
  firstName: first,
  lastName: last,
  email: null,
  phone: null,
  title: null,
  siteId: null,
});

describe('the contact index finds the fuzzy match a full scan finds', () => {
  it('same last name, first name within two edits: the best score of a brute-force scan (buckets below the cap)', () => {
    const rand = prng(7);
    const name = () =>
      Array.from({ length: 2 + Math.floor(rand() * 2) }, () => SYLLABLES[Math.floor(rand() * SYLLABLES.length)]).join(
        '',
      );
    const index = new ContactIndex();
    const stored: { first: string; last: string }[] = [];
    for (let i = 0; i < 400; i++) {
      const first = name();
      const last = ['Smith', 'Jones', 'Brown'][i % 3]!;
      index.add(`id-${i}`, person(i, first, last));
      stored.push({ first: normaliseName(first), last: normaliseName(last) });
    }
    for (let q = 0; q < 300; q++) {
      const chars = name().split('');
      const at = Math.floor(rand() * chars.length);
      if (rand() < 0.5) chars.splice(at, 1);
      else chars[at] = 'x';
      const first = chars.join('');
      const last = ['smith', 'jones', 'brown'][q % 3]!;
      let best = 0;
      for (const s of stored) {
        if (s.last !== last || s.first === first) continue;
        // The blocking keys: same first two or same last two letters (and a length within two).
        if (s.first.slice(0, 2) !== first.slice(0, 2) && s.first.slice(-2) !== first.slice(-2)) continue;
        const d = distance(first, s.first);
        const score = 1 - d / Math.max(first.length, s.first.length);
        if (d <= 2 && score >= 0.6) best = Math.max(best, score);
      }
      const exact = stored.some((s) => s.last === last && s.first === first);
      const hit = index.fuzzy({ email: null, firstName: first, lastName: last });
      if (exact) expect(hit?.score).toBe(1);
      else expect(hit?.score ?? 0, `${first} ${last}`).toBe(Math.round(best * 100) / 100);
    }
    expect(BUCKET_CAP).toBeGreaterThan(0);
  });

  it('an update moves the keys: the old externalId, email and name stop matching, the new ones match', () => {
    const index = new ContactIndex();
    const at = index.add('id-1', { ...person(1, 'Ada', 'Lovelace'), email: 'ada@x.example', previousId: 'old-1' });
    expect(index.holds(at, { ...person(1, 'Ada', 'Lovelace'), email: 'ada@x.example', previousId: 'old-1' })).toBe(
      true,
    );
    expect(index.holds(at, { ...person(1, 'Ada', 'Lovelace'), email: 'ada@x.example', previousId: null })).toBe(false);
    index.update(at, { ...person(2, 'Grace', 'Hopper'), email: 'grace@x.example', previousId: 'old-2' });
    expect(index.exact('e-1', null)).toBe(-1);
    expect(index.exact(null, 'old-1')).toBe(-1);
    expect(index.exact('e-2', null)).toBe(at);
    expect(index.exact(null, 'old-2')).toBe(at);
    expect(index.fuzzy({ email: 'ada@x.example', firstName: null, lastName: null })).toBeNull();
    expect(index.fuzzy({ email: 'Grace@X.example', firstName: null, lastName: null })).toMatchObject({
      at,
      reason: 'email',
    });
    expect(index.fuzzy({ email: null, firstName: 'Ada', lastName: 'Lovelace' })).toBeNull();
    expect(index.fuzzy({ email: null, firstName: 'Gracie', lastName: 'Hopper' })).toMatchObject({ at, reason: 'name' });
  });
});

describe('the row check', () => {
  it('gives each column its message, and both row-level ones when a row has no key and no name', () => {
    expect(checkRow({ externalId: 'a', firstName: 'Ann' })).toMatchObject({
      values: { externalId: 'a', firstName: 'Ann', email: null },
    });
    expect(checkRow({ email: 'bad', phone: 'x'.repeat(40) }).errors).toEqual([
      'email: not an email address',
      'phone: at most 32 characters',
      'externalId: externalId or previousId is required',
    ]);
    expect(checkRow({ externalId: 'a\u0000', title: 'ok' }).errors).toEqual([
      'externalId: contains a NUL character',
      'firstName: a name or an email is required',
    ]);
  });
});

describe('the streamed report', () => {
  it('is the JSON of { summary, rows } with the same rows as row(i), whatever the chunk size', async () => {
    const index = new ContactIndex();
    const a = index.add('00000000-0000-4000-8000-000000000001', person(1, 'Ann', 'Lee'));
    const report = new ImportReport(index);
    report.add(2, 'e-1', 'created', a);
    report.add(3, 'e-"2"', 'held_back', -1, { at: a, reason: 'name', score: 0.67 });
    report.fail(4, null, ['email: not an email address']);
    report.add(5, 'e-1', 'unchanged', a);
    for (const chunk of [1, 2, 1000]) {
      let text = '';
      for await (const part of report.json(chunk)) text += part;
      const rows = Array.from({ length: report.length }, (_, i) => report.row(i));
      expect(JSON.parse(text)).toEqual({
        summary: { created: 1, updated: 0, unchanged: 1, heldBack: 1, failed: 1 },
        rows,
      });
      expect(text).toBe(JSON.stringify({ summary: report.summary, rows }));
    }
    expect(report.row(1)).toEqual({
      line: 3,
      externalId: 'e-"2"',
      status: 'held_back',
      match: { contactId: '00000000-0000-4000-8000-000000000001', reason: 'name', score: 0.67 },
    });
  });
});

// In-memory indexes of an organisation's contacts for one import: exact keys (externalId, previousId) and
// fuzzy ones (normalised email, similar names). Rows created earlier in the same file are indexed too.
// Every lookup is a hash-map probe: the name comparison runs only inside small blocking buckets whose size is
// capped, so the cost per row is bounded whatever the data (20,000 rows with one last name included).
import { distance } from 'fastest-levenshtein';

export interface ContactLike {
  id: string;
  externalId: string | null;
  previousId: string | null;
  firstName: string | null;
  lastName: string | null;
  email: string | null;
}

/** Lower case, no +tag, and for Gmail no dots: the same mailbox written differently. */
export function normaliseEmail(email: string): string {
  const [local = '', domain = ''] = email.trim().toLowerCase().split(/@(?=[^@]*$)/);
  const base = local.split('+')[0]!;
  const d = domain === 'googlemail.com' ? 'gmail.com' : domain;
  return `${d === 'gmail.com' ? base.replace(/\./g, '') : base}@${d}`;
}

export const normaliseName = (s: string | null) =>
  (s ?? '')
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');

export interface FuzzyMatch {
  contactId: string;
  reason: 'email' | 'name';
  score: number;
}

/** Most contacts a blocking bucket keeps; a lookup compares at most 2 × 5 × BUCKET_CAP first names. */
export const BUCKET_CAP = 32;
const MAX_EDITS = 2;
const MIN_SCORE = 0.6;

interface Entry {
  c: ContactLike;
  first: string;
}

/**
 * Blocking keys of a name: same last name and first-name length, plus the first two or the last two letters of the
 * first name. Two first names within two edits of each other share at least one of them unless both ends were
 * edited; that rare pair is not held back (it is imported as a new contact, as an unrelated name would be).
 */
function blockKeys(last: string, first: string, length = first.length): [string, string] {
  return [`${last}\u0001<${first.slice(0, 2)}\u0001${length}`, `${last}\u0001>${first.slice(-2)}\u0001${length}`];
}

export class ContactIndex {
  private readonly byExternal = new Map<string, ContactLike>();
  private readonly byPrevious = new Map<string, ContactLike>();
  private readonly byEmail = new Map<string, ContactLike>();
  private readonly byName = new Map<string, ContactLike>();
  private readonly buckets = new Map<string, Entry[]>();

  constructor(rows: Iterable<ContactLike> = []) {
    for (const r of rows) this.add(r);
  }

  add(c: ContactLike): void {
    if (c.externalId) this.byExternal.set(c.externalId, c);
    if (c.previousId) this.byPrevious.set(c.previousId, c);
    if (c.email) {
      const key = normaliseEmail(c.email);
      if (!this.byEmail.has(key)) this.byEmail.set(key, c);
    }
    const last = normaliseName(c.lastName);
    const first = normaliseName(c.firstName);
    if (!last || !first) return;
    const nameKey = `${last}\u0001${first}`;
    if (!this.byName.has(nameKey)) this.byName.set(nameKey, c);
    for (const key of blockKeys(last, first)) {
      const bucket = this.buckets.get(key);
      if (!bucket) this.buckets.set(key, [{ c, first }]);
      else if (bucket.length < BUCKET_CAP) bucket.push({ c, first });
    }
  }

  /** Replaces the indexed copy after an update. */
  replace(before: ContactLike, after: ContactLike): void {
    if (before.externalId && this.byExternal.get(before.externalId) === before) this.byExternal.delete(before.externalId);
    if (before.previousId && this.byPrevious.get(before.previousId) === before) this.byPrevious.delete(before.previousId);
    if (before.email) {
      const key = normaliseEmail(before.email);
      if (this.byEmail.get(key) === before) this.byEmail.delete(key);
    }
    const last = normaliseName(before.lastName);
    const first = normaliseName(before.firstName);
    if (last && first) {
      const nameKey = `${last}\u0001${first}`;
      if (this.byName.get(nameKey) === before) this.byName.delete(nameKey);
      for (const key of blockKeys(last, first)) {
        const bucket = this.buckets.get(key);
        const at = bucket?.findIndex((e) => e.c === before) ?? -1;
        if (at >= 0) bucket!.splice(at, 1);
      }
    }
    this.add(after);
  }

  exact(externalId: string | null, previousId: string | null): ContactLike | null {
    return (externalId ? this.byExternal.get(externalId) : undefined) ?? (previousId ? this.byPrevious.get(previousId) : undefined) ?? null;
  }

  /** A same-mailbox email, or the same last name with a first name at most two edits away. */
  fuzzy(row: { email: string | null; firstName: string | null; lastName: string | null }): FuzzyMatch | null {
    if (row.email) {
      const hit = this.byEmail.get(normaliseEmail(row.email));
      if (hit) return { contactId: hit.id, reason: 'email', score: 1 };
    }
    const last = normaliseName(row.lastName);
    const first = normaliseName(row.firstName);
    if (!last || !first) return null;
    const same = this.byName.get(`${last}\u0001${first}`);
    if (same) return { contactId: same.id, reason: 'name', score: 1 };
    let best: { c: ContactLike; score: number } | null = null;
    for (let length = Math.max(1, first.length - MAX_EDITS); length <= first.length + MAX_EDITS; length++) {
      for (const key of blockKeys(last, first, length)) {
        for (const e of this.buckets.get(key) ?? []) {
          const d = distance(first, e.first);
          const score = 1 - d / Math.max(first.length, e.first.length);
          if (d <= MAX_EDITS && score >= MIN_SCORE && (!best || score > best.score)) best = { c: e.c, score };
        }
      }
    }
    return best && { contactId: best.c.id, reason: 'name', score: Math.round(best.score * 100) / 100 };
  }
}

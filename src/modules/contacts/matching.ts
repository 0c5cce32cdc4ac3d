// In-memory indexes of an organisation's contacts for one import: exact keys (externalId, previousId) and
// fuzzy ones (normalised email, similar names). Rows created earlier in the same file are indexed too.
// Every lookup is a hash-map probe: the name comparison runs only inside small blocking buckets whose size is
// capped, so the cost per row is bounded whatever the data (all rows with one last name included).
// Contacts are held in columns addressed by a number (no object per contact, maps hold small integers): the index of
// 100,000 contacts stays a few tens of megabytes.
import { distance } from 'fastest-levenshtein';

export interface ContactFields {
  externalId: string | null;
  previousId: string | null;
  firstName: string | null;
  lastName: string | null;
  email: string | null;
  phone: string | null;
  title: string | null;
  siteId: string | null;
}

/**
 * One flat string from parts. A template literal or `+` builds a tree of cons strings (a UUID from crypto.randomUUID
 * is ~20 of them, ~480 bytes); the index keeps its keys for the whole import, so it keeps them flat (~50 bytes).
 */
export const flat = (...parts: (string | number)[]) => parts.join(''); // two parts or more: join('') returns a lone part as it is

/** Lower case, no +tag, and for Gmail no dots: the same mailbox written differently. */
export function normaliseEmail(email: string): string {
  const [local = '', domain = ''] = email
    .trim()
    .toLowerCase()
    .split(/@(?=[^@]*$)/);
  const base = local.split('+')[0]!;
  const d = domain === 'googlemail.com' ? 'gmail.com' : domain;
  return flat(d === 'gmail.com' ? base.replace(/\./g, '') : base, '@', d);
}

const PLAIN = /^[a-z0-9]*$/;
export const normaliseName = (s: string | null) => {
  if (!s) return '';
  const lower = s.toLowerCase();
  // Most names are plain ASCII letters: skip the Unicode decomposition for them.
  if (PLAIN.test(lower)) return lower;
  return lower
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
};

/** A fuzzy candidate: the contact's number in the index, why it matched, and how well. */
export interface FuzzyHit {
  at: number;
  reason: 'email' | 'name';
  score: number;
}

/** Most contacts a blocking bucket keeps; a lookup compares at most 2 × 5 × BUCKET_CAP first names. */
export const BUCKET_CAP = 32;
const MAX_EDITS = 2;
const MIN_SCORE = 0.6;

/**
 * Blocking keys of a name: same last name and first-name length, plus the first two or the last two letters of the
 * first name. Two first names within two edits of each other share at least one of them unless both ends were
 * edited; that rare pair is not held back (it is imported as a new contact, as an unrelated name would be).
 */
function blockKeys(last: string, first: string, length = first.length): [string, string] {
  return [
    flat(last, '\u0001<', first.slice(0, 2), '\u0001', length),
    flat(last, '\u0001>', first.slice(-2), '\u0001', length),
  ];
}

/** The characters of a normalised name as a 32-bit set (a character's bit is its code mod 32). */
function charMask(s: string): number {
  let m = 0;
  for (let i = 0; i < s.length; i++) m |= 1 << (s.charCodeAt(i) & 31);
  return m;
}
function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/**
 * A 64-bit fingerprint of the fields (two 32-bit multiplicative hashes with different seeds; a null and each field's
 * end are mixed in as values no character has): "unchanged" is one comparison, and a stored contact keeps 8 bytes,
 * not eight strings. Two different contacts share a fingerprint with a probability of about 2^-64 per comparison.
 */
function fingerprint(f: ContactFields, out: Int32Array, at: number): void {
  let a = 0x811c9dc5 | 0;
  let b = 0x6a09e667 | 0;
  for (const v of [f.externalId, f.previousId, f.firstName, f.lastName, f.email, f.phone, f.title, f.siteId]) {
    if (v === null) {
      a = Math.imul(a ^ 0x1fffff, 0x01000193);
      b = Math.imul(b ^ 0x1fffff, 0x5bd1e995);
    } else {
      for (let i = 0; i < v.length; i++) {
        const c = v.charCodeAt(i);
        a = Math.imul(a ^ c, 0x01000193);
        b = Math.imul(b ^ c, 0x5bd1e995);
        b ^= b >>> 15;
      }
    }
    a = Math.imul(a ^ 0x1ffffe, 0x01000193);
    b = Math.imul(b ^ 0x1ffffe, 0x5bd1e995);
    b ^= b >>> 13;
  }
  out[2 * at] = a;
  out[2 * at + 1] = b;
}
const probe = new Int32Array(2);

/** Grows a typed array to hold index `at`. */
function room<T extends Int32Array | Uint32Array>(a: T, at: number, make: (n: number) => T): T {
  if (at < a.length) return a;
  const wider = make(Math.max(a.length * 2, at + 1));
  wider.set(a);
  return wider;
}

export class ContactIndex {
  private readonly ids: string[] = [];
  private readonly ext: (string | null)[] = [];
  private readonly prev: (string | null)[] = [];
  private readonly mail: (string | null)[] = [];
  private readonly first: string[] = [];
  /** charMask of `first`: one edit changes at most two bits, so names whose masks differ in more than 2 × MAX_EDITS
   * bits are more than MAX_EDITS edits apart, and the edit distance is not computed for them. */
  private masks = new Int32Array(1024);
  private readonly last: string[] = [];
  private prints = new Int32Array(2048);
  private readonly byExternal = new Map<string, number>();
  private readonly byPrevious = new Map<string, number>();
  private readonly byEmail = new Map<string, number>();
  private readonly byName = new Map<string, number>();
  /** A bucket of one contact is the number itself (most buckets, with varied names): no array per contact. */
  private readonly buckets = new Map<string, number | number[]>();
  /** Per-lookup marks, so a contact found in both blocking buckets of a length is compared once. */
  private marks = new Uint32Array(1024);
  private lookup = 0;

  get size(): number {
    return this.ids.length;
  }
  idOf(at: number): string {
    return this.ids[at]!;
  }
  externalIdOf(at: number): string | null {
    return this.ext[at]!;
  }
  previousIdOf(at: number): string | null {
    return this.prev[at]!;
  }
  /** True when the stored contact holds exactly these fields. */
  holds(at: number, f: ContactFields): boolean {
    fingerprint(f, probe, 0);
    return this.prints[2 * at] === probe[0] && this.prints[2 * at + 1] === probe[1];
  }

  /** Adds a contact; returns its number. */
  add(id: string, f: ContactFields): number {
    const at = this.ids.length;
    this.ids.push(id);
    this.ext.push(null);
    this.prev.push(null);
    this.mail.push(null);
    this.first.push('');
    this.last.push('');
    this.set(at, f);
    return at;
  }

  /** Replaces a contact's fields after an update: its old keys stop pointing at it, the new ones do. */
  update(at: number, f: ContactFields): void {
    const ext = this.ext[at];
    const prev = this.prev[at];
    const mail = this.mail[at];
    if (ext && this.byExternal.get(ext) === at) this.byExternal.delete(ext);
    if (prev && this.byPrevious.get(prev) === at) this.byPrevious.delete(prev);
    if (mail && this.byEmail.get(mail) === at) this.byEmail.delete(mail);
    const last = this.last[at]!;
    const first = this.first[at]!;
    if (last && first) {
      const nameKey = flat(last, '\u0001', first);
      if (this.byName.get(nameKey) === at) this.byName.delete(nameKey);
      for (const key of blockKeys(last, first)) {
        const bucket = this.buckets.get(key);
        if (bucket === at) this.buckets.delete(key);
        else if (typeof bucket === 'object') {
          const i = bucket.indexOf(at);
          if (i >= 0) bucket.splice(i, 1);
        }
      }
    }
    this.set(at, f);
  }

  private set(at: number, f: ContactFields): void {
    this.ext[at] = f.externalId;
    this.prev[at] = f.previousId;
    this.prints = room(this.prints, 2 * at + 1, (n) => new Int32Array(n));
    fingerprint(f, this.prints, at);
    if (f.externalId) this.byExternal.set(f.externalId, at);
    if (f.previousId) this.byPrevious.set(f.previousId, at);
    const mail = f.email ? normaliseEmail(f.email) : null;
    this.mail[at] = mail;
    if (mail && !this.byEmail.has(mail)) this.byEmail.set(mail, at);
    const last = normaliseName(f.lastName);
    const first = normaliseName(f.firstName);
    this.last[at] = last;
    this.first[at] = first;
    this.masks = room(this.masks, at, (n) => new Int32Array(n));
    this.masks[at] = charMask(first);
    if (!last || !first) return;
    const nameKey = flat(last, '\u0001', first);
    if (!this.byName.has(nameKey)) this.byName.set(nameKey, at);
    for (const key of blockKeys(last, first)) {
      const bucket = this.buckets.get(key);
      if (bucket === undefined) this.buckets.set(key, at);
      else if (typeof bucket === 'number') this.buckets.set(key, [bucket, at]);
      else if (bucket.length < BUCKET_CAP) bucket.push(at);
    }
  }

  /** The contact holding this externalId, else the one holding this previousId; -1 when none. */
  exact(externalId: string | null, previousId: string | null): number {
    return (
      (externalId ? this.byExternal.get(externalId) : undefined) ??
      (previousId ? this.byPrevious.get(previousId) : undefined) ??
      -1
    );
  }

  /** A same-mailbox email, or the same last name with a first name at most two edits away. */
  fuzzy(row: { email: string | null; firstName: string | null; lastName: string | null }): FuzzyHit | null {
    if (row.email) {
      const hit = this.byEmail.get(normaliseEmail(row.email));
      if (hit !== undefined) return { at: hit, reason: 'email', score: 1 };
    }
    const last = normaliseName(row.lastName);
    const first = normaliseName(row.firstName);
    if (!last || !first) return null;
    const same = this.byName.get(flat(last, '\u0001', first));
    if (same !== undefined) return { at: same, reason: 'name', score: 1 };
    if (this.marks.length < this.ids.length) this.marks = new Uint32Array(this.ids.length * 2);
    const mark = ++this.lookup;
    const mask = charMask(first);
    let best = -1;
    let bestScore = 0;
    for (let length = Math.max(1, first.length - MAX_EDITS); length <= first.length + MAX_EDITS; length++) {
      for (const key of blockKeys(last, first, length)) {
        const bucket = this.buckets.get(key);
        if (bucket === undefined) continue;
        for (const at of typeof bucket === 'number' ? [bucket] : bucket) {
          if (this.marks[at] === mark) continue;
          this.marks[at] = mark;
          if (popcount(mask ^ this.masks[at]!) > 2 * MAX_EDITS) continue;
          const other = this.first[at]!;
          const d = distance(first, other);
          const score = 1 - d / Math.max(first.length, other.length);
          if (d <= MAX_EDITS && score >= MIN_SCORE && (best < 0 || score > bestScore)) {
            best = at;
            bestScore = score;
          }
        }
      }
    }
    return best < 0 ? null : { at: best, reason: 'name', score: Math.round(bestScore * 100) / 100 };
  }
}

// The import's per-row report (summary + one entry per row), kept compact while the import runs and
// written out as JSON text in slices. A row is a few numbers in typed arrays (line, status, contact, match) plus its
// externalId; errors exist only for failed rows. 100,000 rows hold ~3 MB instead of an object graph per row, and the
// answer is streamed without ever being one string.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ContactIndex, FuzzyHit } from './matching.js';

export type RowStatus = 'created' | 'updated' | 'unchanged' | 'held_back' | 'failed';
const STATUSES: readonly RowStatus[] = ['created', 'updated', 'unchanged', 'held_back', 'failed'];
const REASONS = ['email', 'name'] as const;
const NONE = -1;

export interface ImportSummary {
  created: number;
  updated: number;
  unchanged: number;
  heldBack: number;
  failed: number;
}

/** One entry of the answer's `rows` (the shape of the route's response schema). */
export interface RowResult {
  line: number;
  externalId: string | null;
  status: RowStatus;
  contactId?: string;
  match?: { contactId: string; reason: 'email' | 'name'; score: number };
  errors?: string[];
}

export class ImportReport {
  readonly summary: ImportSummary = { created: 0, updated: 0, unchanged: 0, heldBack: 0, failed: 0 };
  private n = 0;
  private line = new Int32Array(1024);
  private status = new Uint8Array(1024);
  private contact = new Int32Array(1024);
  private match = new Int32Array(1024);
  private reason = new Uint8Array(1024);
  private score = new Float64Array(1024);
  private readonly externalIds: (string | null)[] = [];
  private readonly errors = new Map<number, string[]>();

  /** `contacts` resolves the numbers stored here to ids when the report is written out. */
  constructor(private readonly contacts: ContactIndex) {}

  get length(): number {
    return this.n;
  }

  private grow() {
    const size = this.line.length * 2;
    const widen = <T extends Int32Array | Uint8Array | Float64Array>(a: T, make: (n: number) => T) => {
      const b = make(size);
      b.set(a);
      return b;
    };
    this.line = widen(this.line, (k) => new Int32Array(k));
    this.status = widen(this.status, (k) => new Uint8Array(k));
    this.contact = widen(this.contact, (k) => new Int32Array(k));
    this.match = widen(this.match, (k) => new Int32Array(k));
    this.reason = widen(this.reason, (k) => new Uint8Array(k));
    this.score = widen(this.score, (k) => new Float64Array(k));
  }

  /** Records a row; `contact` is the contact's number in the index (-1 when the answer names none). */
  add(
    line: number,
    externalId: string | null,
    status: RowStatus,
    contact = NONE,
    match: FuzzyHit | null = null,
    errors?: string[],
  ): void {
    if (this.n === this.line.length) this.grow();
    const i = this.n++;
    this.line[i] = line;
    this.status[i] = STATUSES.indexOf(status);
    this.contact[i] = contact;
    this.match[i] = match ? match.at : NONE;
    this.reason[i] = match ? REASONS.indexOf(match.reason) : 0;
    this.score[i] = match ? match.score : 0;
    this.externalIds.push(externalId);
    if (errors) this.errors.set(i, errors);
    const s = this.summary;
    if (status === 'created') s.created++;
    else if (status === 'updated') s.updated++;
    else if (status === 'unchanged') s.unchanged++;
    else if (status === 'held_back') s.heldBack++;
    else s.failed++;
  }

  fail(line: number, externalId: string | null, errors: string[]): void {
    this.add(line, externalId, 'failed', NONE, null, errors);
  }

  /** Row `i` as the answer carries it (tests and small callers; the route streams `json()`). */
  row(i: number): RowResult {
    const out: RowResult = {
      line: this.line[i]!,
      externalId: this.externalIds[i]!,
      status: STATUSES[this.status[i]!]!,
    };
    if (this.contact[i] !== NONE) out.contactId = this.contacts.idOf(this.contact[i]!);
    if (this.match[i] !== NONE)
      out.match = {
        contactId: this.contacts.idOf(this.match[i]!),
        reason: REASONS[this.reason[i]!]!,
        score: this.score[i]!,
      };
    const errors = this.errors.get(i);
    if (errors) out.errors = errors;
    return out;
  }

  private rowJson(i: number): string {
    const ext = this.externalIds[i];
    let s = `{"line":${this.line[i]},"externalId":${ext === null ? 'null' : JSON.stringify(ext)},"status":"${STATUSES[this.status[i]!]}"`;
    if (this.contact[i] !== NONE) s += `,"contactId":"${this.contacts.idOf(this.contact[i]!)}"`;
    if (this.match[i] !== NONE)
      s += `,"match":{"contactId":"${this.contacts.idOf(this.match[i]!)}","reason":"${REASONS[this.reason[i]!]}","score":${this.score[i]}}`;
    const errors = this.errors.get(i);
    if (errors) s += `,"errors":${JSON.stringify(errors)}`;
    return `${s}}`;
  }

  /**
   * The answer `{ summary, rows }` as JSON text, a slice of rows per chunk (~100 KB), handing the event loop back
   * between slices: a 100,000-row report is neither validated nor stringified in one blocking call.
   */
  async *json(rowsPerChunk = 1000): AsyncGenerator<string> {
    yield `{"summary":${JSON.stringify(this.summary)},"rows":[`;
    for (let from = 0; from < this.n; from += rowsPerChunk) {
      if (from > 0) await nextTurn();
      let chunk = from === 0 ? '' : ',';
      const to = Math.min(this.n, from + rowsPerChunk);
      for (let i = from; i < to; i++) chunk += (i === from ? '' : ',') + this.rowJson(i);
      yield chunk;
    }
    yield ']}';
  }
}

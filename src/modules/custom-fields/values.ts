// A custom-field value is JSON of its field's type: a number, a boolean, "YYYY-MM-DD" for a date,
// a string otherwise (for a select, one of its options). JSON values come from PUT; strings from CSV cells.
import { isStorable } from '../config-items/index.js';
import type { FieldType } from './schemas.js';

export const MAX_TEXT = 4096;
export type FieldValue = string | number | boolean;
export interface FieldDef {
  id: string;
  key: string;
  type: FieldType;
  options: string[] | null;
}
export type Checked = { ok: true; value: FieldValue } | { ok: false; message: string };

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
export function isCalendarDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

const bad = (message: string): Checked => ({ ok: false, message });

/** A value from a JSON body, checked against its field. */
export function checkValue(def: FieldDef, v: unknown): Checked {
  switch (def.type) {
    case 'number':
      return typeof v === 'number' && Number.isFinite(v) ? { ok: true, value: v } : bad('must be a number');
    case 'boolean':
      return typeof v === 'boolean' ? { ok: true, value: v } : bad('must be true or false');
    case 'date':
      return typeof v === 'string' && isCalendarDate(v) ? { ok: true, value: v } : bad('must be a date "YYYY-MM-DD"');
    case 'select':
      return typeof v === 'string' && (def.options ?? []).includes(v)
        ? { ok: true, value: v }
        : bad(`must be one of: ${(def.options ?? []).join(', ')}`);
    case 'text':
      if (typeof v !== 'string') return bad('must be a string');
      if (v.length > MAX_TEXT) return bad(`at most ${MAX_TEXT} characters`);
      return isStorable(v) ? { ok: true, value: v } : bad('must not contain NUL characters or unpaired surrogates');
  }
}

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const TRUE = new Set(['true', 'yes', 'y', '1']);
const FALSE = new Set(['false', 'no', 'n', '0']);

/** A non-empty CSV cell, read as its field's type. */
export function parseCell(def: FieldDef, cell: string): Checked {
  switch (def.type) {
    case 'number': {
      const n = Number(cell);
      return NUMBER.test(cell) && Number.isFinite(n) ? { ok: true, value: n } : bad('must be a number');
    }
    case 'boolean': {
      const s = cell.toLowerCase();
      if (TRUE.has(s)) return { ok: true, value: true };
      if (FALSE.has(s)) return { ok: true, value: false };
      return bad('must be true/false (yes/no, 1/0)');
    }
    default:
      return checkValue(def, cell);
  }
}

// A form's refusal split the way a person reads it: each field's problem beside the field, in plain words, and what
// belongs to no field at the top. Cleared as soon as the form changes.
import { useCallback, useEffect, useState } from 'react';
import { ApiError } from '../api/client';
import { explain } from '../lib/errors';

/** The zod wording of the API made plain: no field paths, no doubled full stops. */
function plain(text: string): string {
  const t = text
    .replace(/^[\w.[\]]+:\s*/, '')
    .replace(/^Too small: expected number to be >=\s*(\S+)$/i, 'Must be at least $1')
    .replace(/^Too big: expected number to be <=\s*(\S+)$/i, 'Must be at most $1')
    .replace(/^Too small: expected string to have >=\s*1 characters?$/i, 'Required')
    .replace(/^Too small: expected string to have >=\s*(\d+) characters$/i, 'At least $1 characters')
    .replace(/^Too big: expected string to have <=\s*(\d+) characters$/i, 'At most $1 characters')
    .replace(/^Invalid UUID$/i, 'Not a valid id')
    .trim();
  const s = t.charAt(0).toUpperCase() + t.slice(1);
  return /[.!?]$/.test(s) ? s : `${s}.`;
}

/**
 * `fieldOf` names the form's field for an API field path (null: the error belongs at the top). `values`, when given,
 * is what the form holds: the messages clear as soon as it changes.
 */
export function useFieldErrors(fieldOf: (path: string) => string | null, values?: unknown) {
  const [fields, setFields] = useState<Record<string, string>>({});
  const [form, setForm] = useState<string | null>(null);
  const clear = useCallback(() => {
    setFields({});
    setForm(null);
  }, []);
  const snapshot = values === undefined ? '' : JSON.stringify(values);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the snapshot is the trigger, not a value the effect reads
  useEffect(() => clear(), [snapshot, clear]);
  const show = (err: unknown) => {
    const fe = err instanceof ApiError && err.body.code === 'validation_failed' ? err.body.details?.fieldErrors : null;
    if (!fe) {
      setFields({});
      setForm(explain(err));
      return;
    }
    const next: Record<string, string> = {};
    const rest: string[] = (err instanceof ApiError ? (err.body.details?.formErrors ?? []) : []).map(plain);
    for (const [path, msgs] of Object.entries(fe)) {
      const field = fieldOf(path);
      const text = msgs.map(plain).join(' ');
      if (field) next[field] = text;
      else rest.push(text);
    }
    setFields(next);
    setForm(rest.length || !Object.keys(next).length ? ['Some fields are not valid.', ...rest].join(' ') : null);
  };
  return { fields, form, show, clear };
}

/** A `fieldOf` for a form whose inputs carry the API's top-level field names (`siteIds.2` → `siteIds`). */
export function fieldsNamed(...names: string[]): (path: string) => string | null {
  const known = new Set(names);
  return (path) => {
    const f = path.split('.')[0] ?? '';
    return known.has(f) ? f : null;
  };
}

// Shared parts of the onboarding pages: notices, dates, and the CSV header reader of the import wizards. (The
// organisation a page acts on is hooks/org-choice.tsx; the "load / empty / error" frame is components/Loaded.tsx.)
import { notifications } from '@mantine/notifications';
import { explain } from '../../lib/errors';

export const done = (message: string) => notifications.show({ color: 'green', message });
export const failed = (err: unknown) => notifications.show({ color: 'red', title: 'Not done', message: explain(err) });

/** The column names of a CSV's first record (quoted names and a UTF-8 BOM handled; the API parses the rest). */
export function csvHeader(text: string): string[] {
  const s = text.replace(/^\uFEFF/, '');
  const out: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (quoted) {
      if (c === '"' && s[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      out.push(cell.trim());
      cell = '';
    } else if (c === '\n' || c === '\r') break;
    else cell += c;
  }
  out.push(cell.trim());
  return out.filter((h, i) => h !== '' || i < out.length - 1);
}

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

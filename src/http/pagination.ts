// Opaque keyset cursors: base64url JSON of the last row's sort key.
import type { z } from 'zod';
import { AppError } from './errors.js';

export function encodeCursor(key: Record<string, string | number | boolean | null>): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

export function decodeCursor<T extends z.ZodType>(cursor: string | undefined, schema: T): z.infer<T> | null {
  if (cursor === undefined) return null;
  try {
    const parsed = schema.safeParse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
    if (parsed.success) return parsed.data;
  } catch {
    // fall through
  }
  throw new AppError('validation_failed', 'The cursor is not valid.', {
    details: { fieldErrors: { cursor: ['Invalid cursor'] }, formErrors: [] },
  });
}

/** Takes limit + 1 rows: the extra one says whether a next page exists. */
export function pageOf<R>(
  rows: R[],
  limit: number,
  keyOf: (row: R) => Record<string, string | number | boolean | null>,
) {
  const hasMore = rows.length > limit;
  const data = hasMore ? rows.slice(0, limit) : rows;
  return { data, nextCursor: hasMore ? encodeCursor(keyOf(data[data.length - 1]!)) : null };
}

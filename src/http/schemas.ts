// Shapes shared by every route schema.
import { z } from 'zod';

export const errorEnvelope = z
  .looseObject({
    error: z.string(),
    message: z.string(),
    code: z.string(),
  })
  .meta({ id: 'Error', description: 'Every non-2xx answer; extra fields depend on the code (details, retryAfter, errorId, ...).' });

/** Error answers a route may give, for the OpenAPI document (bodies pass through unchanged). */
export function errors(...statuses: (400 | 401 | 403 | 404 | 409 | 413 | 415 | 428 | 429)[]) {
  return Object.fromEntries(statuses.map((s) => [s, errorEnvelope])) as Record<number, typeof errorEnvelope>;
}

/** Errors every authenticated route can answer. */
export const authErrors = errors(401, 403, 428);

export const uuid = z.uuid();
export const isoDate = z.iso.datetime();

export const listQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional(),
  search: z.string().max(255).optional(),
});

export const page = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item), nextCursor: z.string().nullable() });

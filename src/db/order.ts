// Sort keys and search patterns shared by the repositories' keyset lists.
import { sql } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';

/** The lower-cased name (or key) the lists of partner-wide configuration are ordered by. */
export const lowerOf = (col: PgColumn) => sql<string>`lower(${col})`;

/** A LIKE pattern for a user-given prefix, its wildcards escaped. */
export const likePrefix = (s: string) => `${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

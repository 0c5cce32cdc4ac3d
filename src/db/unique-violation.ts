// PostgreSQL's unique violation (SQLSTATE 23505): a concurrent insert took the same name, slug, key or address. The
// error comes from node-postgres or PGlite, alone or as the `cause` of drizzle's query error.
const UNIQUE_VIOLATION = '23505';

interface DatabaseError {
  code?: unknown;
  constraint?: unknown;
  cause?: unknown;
}

/** The error (or its cause) is a unique violation, of the named constraint when `constraint` is given. */
export function isUniqueViolation(err: unknown, constraint?: RegExp): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 3; e = (e as DatabaseError).cause, depth++) {
    const { code, constraint: name } = e as DatabaseError;
    if (code === UNIQUE_VIOLATION) return !constraint || constraint.test(typeof name === 'string' ? name : '');
  }
  return false;
}

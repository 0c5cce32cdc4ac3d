// SCIM filters (RFC 7644 3.4.2.2) parsed by scim2-parse-filter and translated to one SQL condition: a tenant is
// never loaded to be filtered in memory. Attribute names are case-insensitive; string comparisons follow each
// attribute's caseExact (userName, displayName, names and e-mails are not; externalId and id are).
import { sql, type SQL } from 'drizzle-orm';
import { parse, type Filter } from 'scim2-parse-filter';
import { AppError } from '../../http/errors.js';
import { likePrefix } from '../../db/order.js';

type Kind = 'string' | 'ci' | 'boolean' | 'date' | 'id';
interface Column {
  sql: SQL;
  kind: Kind;
}
/** A multi-valued attribute: its elements' sub-attributes, as columns of one element (alias chosen by `exists`). */
interface MultiValued {
  exists: (cond: SQL) => SQL;
  sub: Record<string, Column>;
  /** The sub-attribute a bare `emails eq "x"` compares (RFC 7643 2.4: `value`). */
  primary: string;
}
export interface FilterTarget {
  schema: string;
  columns: Record<string, Column>;
  multi: Record<string, MultiValued>;
}

const invalid = (why: string) => new AppError('invalid_filter', `The filter is not valid: ${why}.`);

/**
 * `emails[type eq "work"].value eq "x"` is the form Entra ID and Okta send; the parser reads it as two independent
 * conditions, so the sub-attribute is moved inside the brackets first: `emails[(type eq "work") and value eq "x"]`.
 */
const SUB_ATTR =
  /\[((?:[^\]"]|"(?:[^"\\]|\\.)*")*)\]\.([A-Za-z][\w]*)\s+(pr\b|(?:eq|ne|co|sw|ew|gt|ge|lt|le)\s+(?:"(?:[^"\\]|\\.)*"|[^\s()\]]+))/gi;
export const hoistSubAttribute = (f: string) =>
  f.replace(SUB_ATTR, (_m, inner: string, sub: string, rest: string) => `[(${inner}) and ${sub} ${rest}]`);

export function parseFilter(text: string): Filter {
  try {
    return parse(hoistSubAttribute(text));
  } catch (err) {
    throw invalid(err instanceof Error ? err.message.slice(0, 200) : 'unreadable');
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const COMPARE = { eq: '=', ne: '<>', gt: '>', ge: '>=', lt: '<', le: '<=' } as const;

function compare(col: Column, op: string, value: unknown, attr: string): SQL {
  if (op === 'pr')
    return col.kind === 'string' || col.kind === 'ci'
      ? sql`(${col.sql} is not null and ${col.sql} <> '')`
      : sql`${col.sql} is not null`;
  if (col.kind === 'boolean') {
    if (typeof value !== 'boolean' || (op !== 'eq' && op !== 'ne'))
      throw invalid(`${attr} takes eq or ne with true or false`);
    return op === 'eq' ? sql`${col.sql} = ${value}` : sql`${col.sql} is distinct from ${value}`;
  }
  if (typeof value !== 'string') throw invalid(`${attr} compares with a string`);
  if (col.kind === 'id') {
    if (op !== 'eq' && op !== 'ne') throw invalid(`${attr} takes eq or ne`);
    const hit = UUID.test(value) ? sql`${col.sql} = ${value.toLowerCase()}::uuid` : sql`false`;
    return op === 'eq' ? hit : sql`not (${hit})`;
  }
  if (col.kind === 'date') {
    const at = new Date(value);
    if (Number.isNaN(at.getTime()) || !(op in COMPARE))
      throw invalid(`${attr} compares with a date-time using eq, ne, gt, ge, lt or le`);
    return sql`${col.sql} ${sql.raw(COMPARE[op as keyof typeof COMPARE])} ${at}`;
  }
  const left = col.kind === 'ci' ? sql`lower(${col.sql})` : col.sql;
  const v = col.kind === 'ci' ? value.toLowerCase() : value;
  switch (op) {
    case 'co':
      return sql`${left} like ${`%${likePrefix(v)}`}`;
    case 'sw':
      return sql`${left} like ${likePrefix(v)}`;
    case 'ew':
      return sql`${left} like ${`%${likePrefix(v).slice(0, -1)}`}`;
    case 'ne':
      return sql`${left} is distinct from ${v}`;
    default:
      if (!(op in COMPARE)) throw invalid(`unknown operator ${op}`);
      return sql`${left} ${sql.raw(COMPARE[op as keyof typeof COMPARE])} ${v}`;
  }
}

/** The attribute path without the resource's own schema URN, lower-cased. */
function attrName(target: FilterTarget, path: string): string {
  const p = path.toLowerCase();
  const urn = `${target.schema.toLowerCase()}:`;
  return p.startsWith(urn) ? p.slice(urn.length) : p;
}

function translate(target: FilterTarget, f: Filter, within?: MultiValued, depth = 0): SQL {
  if (depth > 32) throw invalid('nested too deeply');
  switch (f.op) {
    case 'and':
    case 'or': {
      const parts = f.filters.map((x) => translate(target, x, within, depth + 1));
      return sql`(${sql.join(parts, sql.raw(f.op === 'and' ? ' and ' : ' or '))})`;
    }
    case 'not':
      return sql`not (${translate(target, f.filter, within, depth + 1)})`;
    case '[]': {
      if (within) throw invalid('a value filter cannot be nested');
      const multi = target.multi[attrName(target, f.attrPath)];
      if (!multi) throw invalid(`${f.attrPath} is not a multi-valued attribute that can be filtered`);
      return multi.exists(translate(target, f.valFilter, multi, depth + 1));
    }
    default: {
      const name = attrName(target, f.attrPath);
      const value = f.op === 'pr' ? undefined : f.compValue;
      if (within) {
        const col = within.sub[name];
        if (!col) throw invalid(`${f.attrPath} is not a sub-attribute that can be filtered`);
        return compare(col, f.op, value, f.attrPath);
      }
      const col = target.columns[name];
      if (col) return compare(col, f.op, value, f.attrPath);
      const [head, sub] = name.split('.', 2) as [string, string | undefined];
      const multi = target.multi[head];
      if (!multi) throw invalid(`${f.attrPath} cannot be filtered on`);
      if (f.op === 'pr' && !sub) return multi.exists(sql`true`);
      const subCol = multi.sub[sub ?? multi.primary];
      if (!subCol) throw invalid(`${f.attrPath} cannot be filtered on`);
      return multi.exists(compare(subCol, f.op, value, f.attrPath));
    }
  }
}

/** The SQL condition of a SCIM filter over `target` (400 invalidFilter when it cannot be read or translated). */
export function filterToSql(target: FilterTarget, text: string): SQL {
  return translate(target, parseFilter(text));
}

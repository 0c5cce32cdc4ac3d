// Response serialisation. A response schema that is plain JSON data (objects, arrays, strings, numbers,
// booleans, enums, nulls) is compiled once, on its first response, to a fast-json-stringify function: it writes only
// the declared properties, in the declared order, so a field the schema does not name (a hash, a secret) can never
// reach the answer. Any other schema (a transform, a default, a record keyed by pattern, a cycle) keeps the zod
// serializer, which parses the value and writes what the parse returns.
import fastJson from 'fast-json-stringify';
import type { FastifySerializerCompiler } from 'fastify/types/schema.js';
import { serializerCompiler as zodSerializerCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';

type JsonSchema = Record<string, unknown>;

/** Keywords that only constrain values: the service produced the value, so they are not re-checked on the way out. */
const CONSTRAINTS = new Set([
  'format',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'description',
  'title',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  '$schema',
]);
const PRIMITIVES = new Set(['string', 'number', 'integer', 'boolean', 'null']);

/**
 * The schema fast-json-stringify is given, or null when the zod schema is not plain JSON data. Value constraints are
 * dropped, and `anyOf [X, null]` of a primitive X becomes `type: [X, 'null']` (written without trying each branch).
 */
export function plainSchema(schema: unknown): JsonSchema | null {
  if (!(schema instanceof z.ZodType)) return null;
  let json: JsonSchema;
  try {
    json = z.toJSONSchema(schema, {
      io: 'output',
      unrepresentable: 'throw',
      cycles: 'throw',
      reused: 'inline',
      metadata: z.registry(),
    }) as JsonSchema;
  } catch {
    return null;
  }
  return plain(json);
}

function plain(s: JsonSchema): JsonSchema | null {
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(s)) {
    if (CONSTRAINTS.has(k)) continue;
    switch (k) {
      case 'type':
        if (typeof v === 'string' && (PRIMITIVES.has(v) || v === 'object' || v === 'array')) out.type = v;
        else if (Array.isArray(v) && v.every((t) => PRIMITIVES.has(t))) out.type = v;
        else return null;
        break;
      case 'enum':
        if (!Array.isArray(v) || !v.every(isScalar)) return null;
        out.enum = v;
        break;
      case 'const':
        if (!isScalar(v)) return null;
        out.const = v;
        break;
      case 'required':
        out.required = v;
        break;
      case 'properties': {
        const props: JsonSchema = {};
        for (const [name, sub] of Object.entries(v as JsonSchema)) {
          const p = plain(sub as JsonSchema);
          if (!p) return null;
          props[name] = p;
        }
        out.properties = props;
        break;
      }
      case 'additionalProperties':
        if (v !== false) return null;
        break;
      case 'items': {
        const p = plain(v as JsonSchema);
        if (!p) return null;
        out.items = p;
        break;
      }
      case 'anyOf': {
        const branches = (v as JsonSchema[]).map(plain);
        if (branches.some((b) => !b)) return null;
        const nonNull = branches.filter((b) => b?.type !== 'null' || Object.keys(b).length !== 1);
        const only = nonNull[0];
        if (nonNull.length === 1 && branches.length === 2 && only && isBarePrimitive(only)) {
          out.type = [only.type, 'null'];
          // an enum stays (a union's branch is chosen by it) and admits the null
          if (Array.isArray(only.enum)) out.enum = [...only.enum, null];
        } else out.anyOf = branches;
        break;
      }
      default:
        return null; // a keyword this compiler does not know (propertyNames, allOf, $ref, default, ...)
    }
  }
  // fast-json-stringify writes only the declared properties of an object without `additionalProperties`
  if (out.type === 'object' && !out.properties) return null; // a record: keys decided by data, kept by zod
  if (out.type === 'array' && !out.items) return null;
  if (out.enum && !out.type) return null;
  return out;
}

const isScalar = (v: unknown) => v === null || ['string', 'number', 'boolean'].includes(typeof v);
const isBarePrimitive = (s: JsonSchema) =>
  typeof s.type === 'string' && PRIMITIVES.has(s.type) && Object.keys(s).every((k) => k === 'type' || k === 'enum');

/** Fastify's serializer compiler: compiled when plain, zod otherwise; built on the route's first response. */
export const serializerCompiler: FastifySerializerCompiler<unknown> = (route) => {
  let compiled: ((data: unknown) => string) | null = null;
  return (data) => {
    if (!compiled) {
      const json = plainSchema(route.schema);
      compiled = json
        ? (fastJson(json) as (data: unknown) => string)
        : (zodSerializerCompiler(route as Parameters<typeof zodSerializerCompiler>[0]) as (d: unknown) => string);
    }
    return compiled(data);
  };
};

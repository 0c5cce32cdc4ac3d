// What an integrator reads in the reference besides the shapes: a description and an example value on every field the
// API's vocabulary knows (src/http/openapi-glossary.ts), and an example of every request body and successful answer,
// sampled from the schema by Redocly's openapi-sampler (the library Redoc itself uses). Examples a route declares
// itself are kept. Redocly's lint checks every example against its schema (no-invalid-media-type-examples).
import { sample } from 'openapi-sampler';
import { glossFor } from './openapi-glossary.js';

/** A JSON object of the document, read and written freely (the document is built by generators, not typed). */
// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is untyped JSON throughout.
export type Json = Record<string, any>;

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** Whether `value` satisfies the parts of `schema` an example can get wrong (types, enums, lengths, patterns). */
function accepts(schema: Json | undefined, value: unknown, components: Json): boolean {
  if (!schema || typeof schema !== 'object') return true;
  if (typeof schema.$ref === 'string') return accepts(components[schema.$ref.split('/').pop()!], value, components);
  for (const key of ['anyOf', 'oneOf'])
    if (Array.isArray(schema[key])) return schema[key].some((s: Json) => accepts(s, value, components));
  if (schema.const !== undefined && schema.const !== value) return false;
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) return false;
  const types = [schema.type].flat().filter(Boolean) as string[];
  const kind =
    value === null ? 'null' : Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value;
  if (types.length && !types.includes(kind) && !(kind === 'integer' && types.includes('number'))) return false;
  if (typeof value === 'string') {
    if (schema.minLength !== undefined && value.length < schema.minLength) return false;
    if (schema.maxLength !== undefined && value.length > schema.maxLength) return false;
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value)) return false;
    if (
      schema.format === 'uuid' &&
      !/^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i.test(value)
    )
      return false;
    if (schema.format === 'email' && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(value)) return false;
    if (schema.format === 'date-time' && Number.isNaN(Date.parse(value))) return false;
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) return false;
    if (schema.maximum !== undefined && value > schema.maximum) return false;
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) return false;
    if (schema.maxItems !== undefined && value.length > schema.maxItems) return false;
    if (!value.every((v) => accepts(schema.items, v, components))) return false;
  }
  return true;
}

/** Gives every property the vocabulary knows its description and, where its schema accepts one, an example. */
export function applyGlossary(doc: Json): void {
  const components = (doc.components?.schemas ?? {}) as Json;
  const seen = new Set<unknown>();
  const visit = (s: unknown): void => {
    if (!s || typeof s !== 'object' || seen.has(s)) return;
    seen.add(s);
    if (Array.isArray(s)) {
      for (const x of s) visit(x);
      return;
    }
    const o = s as Json;
    if (o.properties && typeof o.properties === 'object' && !Array.isArray(o.properties)) {
      const fields = Object.keys(o.properties);
      for (const [name, prop] of Object.entries(o.properties as Json)) {
        if (!prop || typeof prop !== 'object') continue;
        const gloss = glossFor(name, fields);
        if (!gloss) continue;
        prop.description ??= gloss.description;
        if (prop.$ref === undefined && prop.example === undefined && prop.examples === undefined) {
          const fit = gloss.examples?.find((v) => accepts(prop, v, components));
          if (fit !== undefined) prop.examples = [fit];
        }
      }
    }
    for (const v of Object.values(o)) visit(v);
  };
  visit(doc.paths);
  visit(doc.components);
}

const jsonMedia = (content: Json | undefined): Json | undefined =>
  content ? ((content['application/json'] ?? content['application/scim+json']) as Json | undefined) : undefined;

/** The sampler names free-form keys `property1`, `property2`: an example shows none rather than invented ones. */
function withoutPlaceholders(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutPlaceholders);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => !/^property[12]$/.test(k))
      .map(([k, v]) => [k, withoutPlaceholders(v)]),
  );
}

/** A request body needs only its required fields; a body with none (a PATCH) its first field. */
function requestExample(schema: Json, doc: Json): unknown {
  const value = sample(
    schema as never,
    { skipReadOnly: true, skipNonRequired: true, quiet: true, enablePatterns: true },
    doc as never,
  );
  if (value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0) {
    const full = sample(
      schema as never,
      { skipReadOnly: true, quiet: true, enablePatterns: true },
      doc as never,
    ) as Json;
    const first = Object.keys(full ?? {})[0];
    return first === undefined ? value : { [first]: full[first] };
  }
  return value;
}

/** Adds an example to every JSON request body and successful JSON answer that has none. */
export function addExamples(doc: Json): void {
  for (const item of Object.values((doc.paths ?? {}) as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      if (!HTTP_METHODS.includes(method)) continue;
      const body = jsonMedia(op.requestBody?.content);
      if (body?.schema && body.example === undefined && body.examples === undefined)
        body.example = withoutPlaceholders(requestExample(body.schema, doc));
      for (const [status, res] of Object.entries((op.responses ?? {}) as Json)) {
        if (!/^2\d\d$/.test(status)) continue;
        const media = jsonMedia((res as Json).content);
        if (media?.schema && media.example === undefined && media.examples === undefined)
          media.example = withoutPlaceholders(
            sample(media.schema, { skipWriteOnly: true, quiet: true, enablePatterns: true }, doc as never),
          );
      }
    }
  }
}

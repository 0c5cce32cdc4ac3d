// fast-check arbitraries from the JSON Schemas of an OpenAPI 3.1 document: values the schema accepts, and values
// with exactly one thing wrong. Covers the keywords zod emits (type, enum, const, anyOf/oneOf, properties, required,
// additionalProperties, items, min/max, minLength/maxLength, pattern, format, minProperties, $ref).
import fc from 'fast-check';

export type JsonSchema = Record<string, any>;

export interface SchemaContext {
  /** Resolves `#/components/schemas/X`. */
  components: Record<string, JsonSchema>;
  /** Existing ids to prefer for `format: uuid` (random uuids alone only ever reach 404). */
  ids: readonly string[];
}

export function resolveRef(ctx: SchemaContext, s: JsonSchema | undefined): JsonSchema | undefined {
  let cur = s;
  for (let i = 0; cur?.$ref && i < 16; i++) cur = ctx.components[String(cur.$ref).split('/').pop()!];
  return cur;
}

const typesOf = (s: JsonSchema): string[] =>
  Array.isArray(s.type) ? s.type : s.type ? [s.type] : s.properties ? ['object'] : s.items ? ['array'] : [];

const NUL_FREE = (v: string) => !v.includes('\u0000');

function stringArb(ctx: SchemaContext, s: JsonSchema): fc.Arbitrary<string> {
  const minLength = s.minLength ?? 0;
  const maxLength = s.maxLength ?? Math.max(minLength, 40);
  const fits = (v: string) => v.length >= minLength && v.length <= maxLength;
  let base: fc.Arbitrary<string> | null = null;
  switch (s.format) {
    case 'uuid':
      base = ctx.ids.length
        ? fc.oneof(
            { weight: 3, arbitrary: fc.constantFrom(...ctx.ids) },
            { weight: 1, arbitrary: fc.uuid({ version: 4 }) },
          )
        : fc.uuid({ version: 4 });
      break;
    case 'email':
      base = fc.stringMatching(/^[a-z][a-z0-9]{0,11}$/).map((l) => `${l}@example.org`);
      break;
    case 'date-time':
      base = fc
        .date({ noInvalidDate: true, min: new Date('2000-01-01'), max: new Date('2090-01-01') })
        .map((d) => d.toISOString());
      break;
    case 'date':
      base = fc
        .date({ noInvalidDate: true, min: new Date('2000-01-01'), max: new Date('2090-01-01') })
        .map((d) => d.toISOString().slice(0, 10));
      break;
    case 'uri':
      base = fc.webUrl({ validSchemes: ['https'] });
      break;
  }
  if (!base && typeof s.pattern === 'string' && s.pattern !== '^[^\\u0000]*$') {
    try {
      base = fc.stringMatching(new RegExp(s.pattern, 'u'), { size: 'small' });
    } catch {
      base = null;
    }
  }
  if (base) {
    // fast-check's pattern strings may not match the pattern (lookaheads) or the length: keep only those that do.
    const re = typeof s.pattern === 'string' ? safeRegExp(s.pattern) : null;
    return base.filter((v) => fits(v) && NUL_FREE(v) && (!re || re.test(v)));
  }
  const cap = Math.min(maxLength, Math.max(minLength, 24));
  return fc
    .oneof(
      { weight: 4, arbitrary: fc.stringMatching(/^[A-Za-z][A-Za-z0-9 ._-]*$/, { size: 'small' }) },
      { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength, maxLength: cap }) },
    )
    .map((v) => (v.length < minLength ? v.padEnd(minLength, 'x') : v.slice(0, cap)))
    .filter((v) => fits(v) && NUL_FREE(v));
}

function safeRegExp(p: string): RegExp | null {
  try {
    return new RegExp(p, 'u');
  } catch {
    return null;
  }
}

/** Values the schema accepts (as far as these keywords say). */
export function validValue(ctx: SchemaContext, schema: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
  const s = resolveRef(ctx, schema);
  if (!s || depth > 6) return fc.constant(null);
  if (s.const !== undefined) return fc.constant(s.const);
  if (Array.isArray(s.enum) && s.enum.length) return fc.constantFrom(...(s.enum as unknown[]));
  const alternatives = (s.anyOf ?? s.oneOf) as JsonSchema[] | undefined;
  // "Exactly one of these fields": an object whose oneOf alternatives only name required keys.
  if (
    alternatives?.length &&
    s.properties &&
    alternatives.every((a) => Array.isArray(a.required) && Object.keys(a).length === 1)
  ) {
    return fc.constantFrom(...alternatives).chain((alt) => {
      const excluded = alternatives
        .flatMap((a) => a.required as string[])
        .filter((k) => !(alt.required as string[]).includes(k));
      const properties = Object.fromEntries(
        Object.entries(s.properties as JsonSchema).filter(([k]) => !excluded.includes(k)),
      );
      const { oneOf: _o, anyOf: _a, ...rest } = s;
      return ofType(
        ctx,
        { ...rest, properties, required: [...((s.required as string[]) ?? []), ...(alt.required as string[])] },
        'object',
        depth,
      );
    });
  }
  if (alternatives?.length) return fc.oneof(...alternatives.map((a) => validValue(ctx, a, depth + 1)));
  if (Array.isArray(s.allOf) && s.allOf.length)
    return validValue(ctx, Object.assign({}, ...s.allOf.map((a: JsonSchema) => resolveRef(ctx, a))), depth + 1);
  const types = typesOf(s);
  if (!types.length) return fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean());
  return fc.oneof(...types.map((type) => ofType(ctx, s, type, depth)));
}

function ofType(ctx: SchemaContext, s: JsonSchema, type: string, depth: number): fc.Arbitrary<unknown> {
  switch (type) {
    case 'string':
      return stringArb(ctx, s);
    case 'integer': {
      const min = Math.max(s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : -1000), -1e9);
      const max = Math.min(s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : 1000), 1e9);
      return fc.integer({ min: Math.min(min, max), max });
    }
    case 'number': {
      const min = Math.max(s.minimum ?? -1000, -1e9);
      const max = Math.min(s.maximum ?? 1000, 1e9);
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: Math.min(min, max), max });
    }
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const minLength = Math.min(s.minItems ?? 0, 4);
      const maxLength = Math.max(minLength, Math.min(s.maxItems ?? 3, 3));
      const items = validValue(ctx, s.items, depth + 1);
      return s.uniqueItems
        ? fc.uniqueArray(items, { minLength, maxLength, selector: (v) => JSON.stringify(v) })
        : fc.array(items, { minLength, maxLength });
    }
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, JsonSchema>;
      const names = Object.keys(props);
      const required = ((s.required ?? []) as string[]).filter((r) => names.includes(r));
      const minProperties = s.minProperties ?? 0;
      const maxProperties = s.maxProperties ?? Infinity;
      if (!names.length) {
        if (s.additionalProperties === false) return fc.constant({});
        const value =
          s.additionalProperties && typeof s.additionalProperties === 'object'
            ? validValue(ctx, s.additionalProperties, depth + 1)
            : fc.string({ maxLength: 8 });
        const key = s.propertyNames
          ? (validValue(ctx, s.propertyNames, depth + 1) as fc.Arbitrary<string>)
          : fc.stringMatching(/^[a-z][a-zA-Z0-9]{0,10}$/);
        return fc.dictionary(key, value, { minKeys: Math.min(minProperties, 3), maxKeys: Math.max(minProperties, 3) });
      }
      const model = Object.fromEntries(names.map((n) => [n, validValue(ctx, props[n], depth + 1)]));
      return fc
        .record(model, { requiredKeys: required })
        .filter((v) => Object.keys(v).length >= minProperties && Object.keys(v).length <= maxProperties);
    }
    default:
      return fc.constant(null);
  }
}

/** A value of another JSON type than the schema allows. */
function wrongTypeFor(ctx: SchemaContext, schema: JsonSchema | undefined): fc.Arbitrary<unknown> {
  const s = resolveRef(ctx, schema) ?? {};
  const allowed = new Set(typesOf(s));
  const candidates: [string, fc.Arbitrary<unknown>][] = [
    ['string', fc.constantFrom('x', '', 'not-a-uuid')],
    ['integer', fc.constantFrom(-1, 7, 2 ** 40)],
    ['boolean', fc.boolean()],
    ['null', fc.constant(null)],
    ['array', fc.constant([1, 'a'])],
    ['object', fc.constant({ unexpected: true })],
  ];
  const others = candidates.filter(([t]) => !allowed.has(t) && !(t === 'integer' && allowed.has('number')));
  return others.length ? fc.oneof(...others.map(([, a]) => a)) : fc.constant({ unexpected: true });
}

/** An object the schema refuses: one field of a wrong type, an unknown key, or a required field missing. */
export function invalidObject(ctx: SchemaContext, schema: JsonSchema | undefined): fc.Arbitrary<unknown> {
  const s = resolveRef(ctx, schema);
  const props = (s?.properties ?? {}) as Record<string, JsonSchema>;
  const names = Object.keys(props);
  const required = ((s?.required ?? []) as string[]).filter((r) => names.includes(r));
  const base = validValue(ctx, schema).map((v) =>
    v && typeof v === 'object' && !Array.isArray(v) ? { ...(v as object) } : {},
  ) as fc.Arbitrary<Record<string, unknown>>;
  const options: fc.Arbitrary<unknown>[] = [
    wrongTypeFor(ctx, schema), // the whole body of the wrong type
  ];
  if (s?.additionalProperties === false) options.push(base.map((b) => ({ ...b, unknownFieldForTheWalk: 1 })));
  if (required.length) options.push(fc.tuple(base, fc.constantFrom(...required)).map(([b, k]) => (delete b[k], b)));
  // A wrong type only where every alternative of the field refuses it.
  const typed = names.filter(
    (n) =>
      typesOf(resolveRef(ctx, props[n]) ?? {}).length > 0 &&
      !(resolveRef(ctx, props[n])?.anyOf || resolveRef(ctx, props[n])?.oneOf),
  );
  if (typed.length)
    options.push(
      fc
        .constantFrom(...typed)
        .chain((k) => fc.tuple(base, wrongTypeFor(ctx, props[k])).map(([b, v]) => ({ ...b, [k]: v }))),
    );
  return fc.oneof(...options);
}

/** A scalar the schema refuses (for query and path parameters): wrong format, out of range, too long, not in the enum. */
export function invalidScalar(ctx: SchemaContext, schema: JsonSchema | undefined): fc.Arbitrary<string> | null {
  const s = resolveRef(ctx, schema);
  if (!s) return null;
  if (Array.isArray(s.enum)) return fc.constant('not-one-of-the-values');
  const types = typesOf(s);
  if (types.includes('integer') || types.includes('number')) {
    const out: fc.Arbitrary<string>[] = [fc.constant('abc')];
    if (typeof s.maximum === 'number') out.push(fc.constant(String(s.maximum + 1)));
    if (typeof s.minimum === 'number') out.push(fc.constant(String(s.minimum - 1)));
    return fc.oneof(...out);
  }
  if (types.includes('boolean')) return fc.constant('maybe');
  if (s.format === 'uuid') return fc.constantFrom('not-a-uuid', '1234', 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz');
  if (typeof s.maxLength === 'number' && s.maxLength < 4000) return fc.constant('x'.repeat(s.maxLength + 1));
  if (typeof s.pattern === 'string' && s.pattern !== '^[^\\u0000]*$')
    return fc.constant('!!not matching!!').filter((v) => !safeRegExp(s.pattern)?.test(v));
  return fc.constant('a\u0000b');
}

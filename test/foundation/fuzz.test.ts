// Property: whatever arrives on whichever route, the answer is never a 5xx, and every refusal is the
// error envelope with a catalogued code. Routes come from /openapi.json, so a new route is fuzzed the
// day it is mounted.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOG } from '../../src/http/errors.js';
import { PARTNER_ADMIN_ROLE_ID, SYSTEM_ROLES } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import {
  addOrgMember,
  addPartnerMember,
  createOrg,
  createPartner,
  createUser,
  partnerAdmin,
  sessionFor,
} from '../support/fixtures.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 30);
/** Routes fuzzed at once: the app answers while the next request is built. */
const CONCURRENCY = Number(process.env.FUZZ_CONCURRENCY ?? 4);
/** Anonymous probes of a route before deciding it is protected (every answer 401) and needs no more. */
const ANON_PROBES = 5;
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;

type JsonSchema = Record<string, any>;
interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  schema?: JsonSchema;
}
interface Operation {
  method: string;
  path: string;
  parameters: Parameter[];
  bodySchema?: JsonSchema;
}
interface OpenApiDoc {
  openapi: string;
  paths: Record<
    string,
    Record<string, { parameters?: Parameter[]; requestBody?: { content?: Record<string, { schema?: JsonSchema }> } }>
  >;
  components?: { schemas?: Record<string, JsonSchema> };
}

let t: TestApp;
let doc: OpenApiDoc;
let operations: Operation[];
/** Ids that exist (system roles, another tenant's rows): random uuids alone only ever find 404. */
let foreignIds: string[] = [];

beforeAll(async () => {
  t = await startApp();
  const res = await fetch(`${t.baseUrl}/openapi.json`);
  expect(res.status).toBe(200);
  doc = (await res.json()) as OpenApiDoc;
  const otherPartner = await createPartner(t);
  const otherOrg = await createOrg(t, otherPartner.id);
  const otherUser = await createUser(t);
  await addOrgMember(t, { orgId: otherOrg.id, userId: otherUser.id });
  foreignIds = [otherPartner.id, otherOrg.id, otherUser.id, ...SYSTEM_ROLES.map((r) => r.id)];
  operations = Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
      .map(([method, op]) => ({
        method: method.toUpperCase(),
        path,
        parameters: op.parameters ?? [],
        bodySchema: op.requestBody?.content?.['application/json']?.schema,
      })),
  );
});
afterAll(async () => t?.close());

// ---------------------------------------------------------------- arbitraries

const resolve = (s: JsonSchema | undefined): JsonSchema | undefined => {
  let cur = s;
  for (let i = 0; cur?.$ref && i < 10; i++) cur = doc.components?.schemas?.[String(cur.$ref).split('/').pop()!];
  return cur;
};

const junkStrings = fc.constantFrom(
  ...['', ' ', '\u0000', 'a\u0000b', '0', '-1', '1e309', 'NaN', 'null', 'undefined', 'true', '[]', '{}'],
  ...[
    '__proto__',
    'constructor',
    'prototype',
    "' OR 1=1 --",
    '"; DROP TABLE users; --',
    '../../etc/passwd',
    '%',
    '%00',
  ],
  ...[
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection probe, literal on purpose
    '${7*7}',
    '<script>alert(1)</script>',
    '\ud83d\ude00',
    '00000000-0000-0000-0000-000000000000',
    'ffffffff-ffff-ffff-ffff-ffffffffffff',
  ],
  ...['x'.repeat(300), '9'.repeat(40)],
);
const anyString = fc.oneof(junkStrings, fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 20 }));

/** Ids worth sending for one operation: the acting admin's own rows and another tenant's. */
type Ids = readonly string[];

/** Values shaped by the schema (often valid), so requests also reach the handlers, not just validation. */
function fromSchema(ids: Ids, schema: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema);
  if (!s || depth > 4) return fc.jsonValue({ maxDepth: 2 });
  if (s.const !== undefined) return fc.constant(s.const);
  if (Array.isArray(s.enum) && s.enum.length) return fc.constantFrom(...(s.enum as unknown[]));
  const alternatives = (s.anyOf ?? s.oneOf) as JsonSchema[] | undefined;
  if (alternatives?.length) return fc.oneof(...alternatives.map((a) => fromSchema(ids, a, depth + 1)));
  if (Array.isArray(s.allOf) && s.allOf.length) return fromSchema(ids, s.allOf[0], depth + 1);
  const types: string[] = Array.isArray(s.type) ? s.type : s.type ? [s.type] : s.properties ? ['object'] : [];
  if (!types.length) return fc.jsonValue({ maxDepth: 2 });
  return fc.oneof(...types.map((type) => fromType(ids, s, type, depth)));
}

function fromType(ids: Ids, s: JsonSchema, type: string, depth: number): fc.Arbitrary<unknown> {
  switch (type) {
    case 'string': {
      if (s.format === 'uuid') return ids.length ? fc.oneof(fc.uuid(), fc.constantFrom(...ids)) : fc.uuid();
      if (s.format === 'email')
        return fc.oneof(
          fc.stringMatching(/^[a-z0-9]{1,12}$/).map((l) => `${l}@example.test`),
          fc.emailAddress(),
        );
      if (s.format === 'date-time')
        return fc.date({ noInvalidDate: true, min: new Date(0), max: new Date(4e12) }).map((d) => d.toISOString());
      if (s.format === 'date')
        return fc
          .date({ noInvalidDate: true, min: new Date(0), max: new Date(4e12) })
          .map((d) => d.toISOString().slice(0, 10));
      if (s.format === 'uri') return fc.webUrl();
      if (typeof s.pattern === 'string') {
        try {
          return fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length <= (s.maxLength ?? 200));
        } catch {
          /* a pattern fast-check cannot generate from: fall through */
        }
      }
      const minLength = Math.min(s.minLength ?? 0, 64);
      return fc.string({ minLength, maxLength: Math.max(minLength, Math.min(s.maxLength ?? 40, 64)) });
    }
    case 'integer':
      return fc.integer({ min: Math.max(s.minimum ?? -1e6, -1e6), max: Math.min(s.maximum ?? 1e6, 1e6) });
    case 'number':
      return fc.double({
        noNaN: true,
        noDefaultInfinity: true,
        min: Math.max(s.minimum ?? -1e6, -1e6),
        max: Math.min(s.maximum ?? 1e6, 1e6),
      });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const minLength = Math.min(s.minItems ?? 0, 3);
      return fc.array(fromSchema(ids, s.items, depth + 1), {
        minLength,
        maxLength: Math.max(minLength, Math.min(s.maxItems ?? 4, 4)),
      });
    }
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, JsonSchema>;
      const names = Object.keys(props);
      if (!names.length)
        return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 });
      const model = Object.fromEntries(names.map((n) => [n, fromSchema(ids, props[n], depth + 1)]));
      return fc.record(model, { requiredKeys: ((s.required ?? []) as string[]).filter((r) => names.includes(r)) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

const deepArray = fc.integer({ min: 500, max: 60_000 }).map((n) => '['.repeat(n) + ']'.repeat(n));
const deepObject = fc.integer({ min: 500, max: 40_000 }).map((n) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`);
/** Deep nesting as text: building it as a value would overflow the stack of whoever walks it first. */
const deepText = (n: number) => `${'[{"a":'.repeat(n)}"x"${'}]'.repeat(n)}`;
const pollution = fc.constantFrom(
  '{"__proto__":{"isAdmin":true}}',
  '{"constructor":{"prototype":{"isAdmin":true}}}',
  '{"a":{"__proto__":{"polluted":1}}}',
  '[{"__proto__":{"x":1}}]',
  '{"__proto__":null}',
  '{"prototype":{"x":1}}',
);
const wrongType = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double(),
  anyString,
  fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
);

/** A schema-shaped object with one thing wrong: a field of the wrong type, an unknown or poisonous key, a missing field. */
function mutated(ids: Ids, schema: JsonSchema | undefined): fc.Arbitrary<unknown> {
  const s = resolve(schema);
  const names = Object.keys((s?.properties ?? {}) as object);
  const base = fromSchema(ids, schema).map((v) =>
    v && typeof v === 'object' && !Array.isArray(v) ? { ...(v as object) } : {},
  );
  const key = names.length
    ? fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 8 }))
    : fc.string({ maxLength: 8 });
  return fc.oneof(
    fc.tuple(base, key, wrongType).map(([b, k, v]) => Object.assign(b as Record<string, unknown>, { [k]: v })),
    fc
      .tuple(base, fc.constantFrom('__proto__', 'constructor', 'prototype', 'isAdmin', 'partnerId', 'id'))
      .map(([b, k]) => {
        Object.defineProperty(b, k, { value: { polluted: true, prototype: { polluted: true } }, enumerable: true });
        return b;
      }),
    fc.tuple(base, key).map(([b, k]) => {
      delete (b as Record<string, unknown>)[k];
      return b;
    }),
  );
}

/** A schema-shaped body with one field replaced by deeply nested JSON (reaches code behind the validator if the field is loose). */
function deepInField(ids: Ids, schema: JsonSchema | undefined): fc.Arbitrary<string> {
  const names = Object.keys((resolve(schema)?.properties ?? {}) as object);
  if (!names.length) return fc.integer({ min: 100, max: 20_000 }).map((n) => `{"a":${deepText(n)}}`);
  return fc
    .tuple(fromSchema(ids, schema), fc.constantFrom(...names), fc.integer({ min: 100, max: 20_000 }))
    .map(([v, name, n]) => {
      const rest = v && typeof v === 'object' && !Array.isArray(v) ? { ...(v as object) } : {};
      delete (rest as Record<string, unknown>)[name];
      const head = JSON.stringify(rest).slice(0, -1);
      return `${head}${head.length > 1 ? ',' : ''}${JSON.stringify(name)}:${deepText(n)}}`;
    });
}

interface Body {
  raw?: string;
  contentType?: string;
}
const json = (v: unknown): Body => ({ raw: JSON.stringify(v) ?? 'null', contentType: 'application/json' });

function bodyArb(ids: Ids, op: Operation): fc.Arbitrary<Body> {
  if (op.method === 'GET') return fc.constant({});
  return fc.oneof(
    { weight: 4, arbitrary: fromSchema(ids, op.bodySchema ?? { type: 'object' }).map(json) },
    { weight: 4, arbitrary: mutated(ids, op.bodySchema).map(json) },
    { weight: 2, arbitrary: fc.anything().map(json) },
    { weight: 1, arbitrary: anyString.map((raw) => ({ raw, contentType: 'application/json' })) },
    { weight: 1, arbitrary: fc.oneof(deepArray, deepObject).map((raw) => ({ raw, contentType: 'application/json' })) },
    { weight: 1, arbitrary: deepInField(ids, op.bodySchema).map((raw) => ({ raw, contentType: 'application/json' })) },
    { weight: 1, arbitrary: pollution.map((raw) => ({ raw, contentType: 'application/json' })) },
    {
      weight: 1,
      arbitrary: fc.record({
        raw: fc.oneof(fc.constant('{}'), anyString),
        contentType: fc.constantFrom(
          'text/plain',
          'application/xml',
          'application/x-www-form-urlencoded',
          'application/json; charset=utf-16',
          'application/jsonx',
          'multipart/form-data',
        ),
      }),
    },
    { weight: 1, arbitrary: fc.constant({}) },
  );
}

function encodeSegment(v: string): string {
  try {
    return encodeURIComponent(v);
  } catch {
    return encodeURIComponent(v.replace(/[\ud800-\udfff]/g, '?')); // lone surrogate
  }
}

function pathArb(ids: Ids, op: Operation): fc.Arbitrary<string> {
  const names = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  if (!names.length) return fc.constant(op.path);
  const declared = new Map(op.parameters.filter((p) => p.in === 'path').map((p) => [p.name, p.schema]));
  const value = (name: string) =>
    fc.oneof(
      fc.constantFrom(...ids, '00000000-0000-0000-0000-000000000000'),
      fc.uuid(),
      fromSchema(ids, declared.get(name) ?? { type: 'string' }).map(String),
      anyString,
    );
  return fc
    .tuple(...names.map(value))
    .map((values) => names.reduce((p, n, i) => p.replace(`{${n}}`, encodeSegment(String(values[i]))), op.path));
}

function queryArb(ids: Ids, op: Operation): fc.Arbitrary<[string, string][]> {
  const declared = op.parameters.filter((p) => p.in === 'query');
  const valid = fc
    .tuple(
      ...declared.map((p) =>
        fc.option(
          fromSchema(ids, p.schema).map((v) => [p.name, String(v)] as [string, string]),
          { nil: undefined },
        ),
      ),
    )
    .map((pairs) => pairs.filter((p): p is [string, string] => p !== undefined));
  const names = fc.oneof(
    fc.constantFrom(
      ...declared.map((p) => p.name),
      'limit',
      'cursor',
      'search',
      'orgId',
      'partnerId',
      '__proto__',
      'constructor',
      'toString',
    ),
    fc.string({ maxLength: 8 }),
  );
  const values = fc.oneof(
    anyString,
    fc.integer().map(String),
    fc.constantFrom('0', '201', '-5', '1.5', 'abc', '1e3', ...ids),
  );
  const junk = fc.array(fc.tuple(names, values), { maxLength: 5 });
  return fc.oneof(
    { weight: 3, arbitrary: valid },
    { weight: 1, arbitrary: junk },
    { weight: 1, arbitrary: fc.tuple(valid, junk).map(([a, b]) => [...a, ...b]) },
  );
}

// ---------------------------------------------------------------- the request and the property

interface Sent {
  method: string;
  url: string;
  body: Body;
  token: string | null;
}

async function sendOnce(req: Sent) {
  const headers: Record<string, string> = {};
  if (req.token) headers.authorization = `Bearer ${req.token}`;
  if (req.body.contentType) headers['content-type'] = req.body.contentType;
  const res = await fetch(req.url, { method: req.method, headers, body: req.body.raw, redirect: 'manual' });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…(${s.length} chars)` : s);
const describeReq = (req: Sent) =>
  `${req.method} ${clip(req.url.replace(t.baseUrl, ''), 160)} ${req.token ? '(admin)' : '(anon)'} ${req.body.contentType ?? ''} ${clip(req.body.raw ?? '', 160)}`;

/** Throws a readable reason when the answer breaks the property. */
function checkAnswer(req: Sent, res: { status: number; headers: Headers; text: string }) {
  const where = `${describeReq(req)} → ${res.status} ${clip(res.text, 240)}`;
  if (res.status >= 500) throw new Error(`server error: ${where}`);
  if (res.status >= 300 && res.status < 400) {
    if (!res.headers.get('location')) throw new Error(`redirect without location: ${where}`);
    return;
  }
  if (res.status < 400) return;
  // SCIM (RFC 7644) answers its errors as application/scim+json, with the envelope's fields alongside.
  if (!/^application\/(scim\+)?json\b/.test(res.headers.get('content-type') ?? ''))
    throw new Error(`error answer is not JSON: ${where}`);
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(res.text) as Record<string, unknown>;
  } catch {
    throw new Error(`error answer does not parse: ${where}`);
  }
  if (typeof body.error !== 'string' || typeof body.message !== 'string' || typeof body.code !== 'string')
    throw new Error(`not the error envelope: ${where}`);
  if (!(body.code in ERROR_CATALOG)) throw new Error(`code ${body.code} is not in the catalogue: ${where}`);
  if (
    ERROR_CATALOG[body.code as keyof typeof ERROR_CATALOG].status !== res.status &&
    body.code !== 'invalid_credentials'
  )
    throw new Error(`status does not match the code: ${where}`);
  if (body.code === 'validation_failed') {
    const d = body.details as { fieldErrors?: unknown; formErrors?: unknown } | undefined;
    if (!d || typeof d.fieldErrors !== 'object' || !Array.isArray(d.formErrors))
      throw new Error(`validation_failed without details: ${where}`);
  }
  if (/\n\s+at |node_modules|\.ts:\d+/.test(res.text)) throw new Error(`a stack trace on the wire: ${where}`);
}

const stats: Record<string, { n: number; ms: number; sample: string }> = {};
afterAll(() => {
  if (process.env.FUZZ_STATS)
    console.table(
      Object.fromEntries(
        Object.entries(stats).map(([k, v]) => [
          k,
          { n: v.n, avgMs: Math.round(v.ms / v.n), sample: process.env.FUZZ_STATS === 'samples' ? v.sample : '' },
        ]),
      ),
    );
});

type Identity = 'anon' | 'admin';

/** A partner admin with MFA satisfied, an organisation and two members; a new session whenever a run ended it. */
async function adminWithTenant() {
  const admin = await partnerAdmin(t);
  const org = await createOrg(t, admin.partner.id);
  const colleague = await createUser(t, { mfaEnabled: true });
  await addPartnerMember(t, { partnerId: admin.partner.id, userId: colleague.id, roleId: SYSTEM_ROLES[2].id });
  const orgUser = await createUser(t);
  await addOrgMember(t, { orgId: org.id, userId: orgUser.id });
  let token: string | null = admin.session.accessToken;
  return {
    ids: [admin.partner.id, admin.user.id, org.id, colleague.id, orgUser.id],
    async token() {
      token ??= (
        await sessionFor(
          t,
          admin.user.id,
          { scope: 'partner', partnerId: admin.partner.id, roleId: PARTNER_ADMIN_ROLE_ID },
          true,
        )
      ).accessToken;
      return token;
    },
    drop() {
      token = null;
    },
  };
}
type Admin = Awaited<ReturnType<typeof adminWithTenant>>;

interface Outcome {
  runs: number;
  failure: string | null;
  statuses: Set<number>;
}

async function fuzzOperation(op: Operation, admin: Admin | null, numRuns: number): Promise<Outcome> {
  const identity: Identity = admin ? 'admin' : 'anon';
  const ids = [...(admin?.ids ?? []), ...foreignIds];
  const statuses = new Set<number>();
  const property = fc.asyncProperty(
    pathArb(ids, op),
    queryArb(ids, op),
    bodyArb(ids, op),
    async (path, query, body) => {
      const url = new URL(path, t.baseUrl);
      for (const [k, v] of query) url.searchParams.append(k, v);
      const req: Sent = { method: op.method, url: url.toString(), body, token: admin ? await admin.token() : null };
      const started = performance.now();
      const res = await sendOnce(req);
      statuses.add(res.status);
      if (process.env.FUZZ_STATS) {
        const k = `${op.method} ${op.path} ${identity} ${res.status}`;
        const e = (stats[k] ??= { n: 0, ms: 0, sample: clip(`${describeReq(req)} → ${res.text}`, 300) });
        e.n++;
        e.ms += performance.now() - started;
      }
      if (res.status === 401 || res.status === 428) admin?.drop();
      checkAnswer(req, res);
    },
  );
  const details = await fc.check(property, { numRuns, seed: SEED });
  const failure = details.failed
    ? `${op.method} ${op.path} (${identity}) [seed ${details.seed}, path ${details.counterexamplePath}]: ${details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)}`
    : null;
  return { runs: details.numRuns, failure, statuses };
}

/** Anonymous probes first; a public route (anything but 401 came back) gets the full anonymous run. Then the admin. */
async function fuzzRoute(op: Operation): Promise<{ runs: number; expected: number; failures: string[] }> {
  const outcomes: Outcome[] = [];
  let expected = ANON_PROBES + RUNS;
  const probe = await fuzzOperation(op, null, ANON_PROBES);
  outcomes.push(probe);
  if (!probe.failure && [...probe.statuses].some((s) => s !== 401)) {
    expected += RUNS;
    outcomes.push(await fuzzOperation(op, null, RUNS));
  }
  outcomes.push(await fuzzOperation(op, await adminWithTenant(), RUNS));
  return {
    runs: outcomes.reduce((n, o) => n + o.runs, 0),
    expected,
    failures: outcomes.flatMap((o) => (o.failure ? [o.failure] : [])),
  };
}

describe('every route of /openapi.json survives random and malformed input', () => {
  it('the route list is non-empty and includes /api/v1/auth/me', () => {
    expect(operations.length).toBeGreaterThan(0);
    expect(operations).toContainEqual(expect.objectContaining({ method: 'GET', path: '/api/v1/auth/me' }));
  });

  it('the property checker itself flags a broken answer (guards against a vacuous fuzz)', () => {
    const req: Sent = { method: 'GET', url: `${t.baseUrl}/x`, body: {}, token: null };
    const h = (ct: string) => new Headers({ 'content-type': ct });
    expect(() => checkAnswer(req, { status: 500, headers: h('application/json'), text: '{}' })).toThrow(/server error/);
    expect(() =>
      checkAnswer(req, { status: 400, headers: h('application/json'), text: '{"error":"x","message":"y"}' }),
    ).toThrow(/envelope/);
    expect(() =>
      checkAnswer(req, {
        status: 400,
        headers: h('application/json'),
        text: '{"error":"x","message":"y","code":"FST_ERR_BAD_URL"}',
      }),
    ).toThrow(/catalogue/);
    expect(() => checkAnswer(req, { status: 404, headers: h('text/html'), text: '<h1>' })).toThrow(/not JSON/);
    expect(() =>
      checkAnswer(req, {
        status: 404,
        headers: h('application/json'),
        text: '{"error":"x","message":"y","code":"not_found"}',
      }),
    ).not.toThrow();
  });

  // The walk grows with the routes (about 200 s on a loaded two-core machine); the limit only catches a stall.
  it('no answer is a 5xx, and every refusal is the error envelope (anonymous and partner admin with MFA)', {
    timeout: 420_000,
  }, async () => {
    const queue = [...operations];
    const results: Awaited<ReturnType<typeof fuzzRoute>>[] = [];
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let op = queue.shift(); op; op = queue.shift()) results.push(await fuzzRoute(op));
      }),
    );
    const failures = results.flatMap((r) => r.failures);
    const requests = results.reduce((n, r) => n + r.runs, 0);
    const expected = results.reduce((n, r) => n + r.expected, 0);
    expect(results).toHaveLength(operations.length);
    expect(failures).toEqual([]);
    expect(requests).toBe(expected);
  });
});

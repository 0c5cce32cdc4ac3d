// Property walk (Schemathesis-style): for EVERY operation of /openapi.json, requests generated from its own schemas
// (valid ones, and ones with one thing wrong), sent as a partner admin whose session passed MFA. Properties:
// no 5xx; the status is one the operation declares; the body validates against the declared response schema.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PARTNER_ADMIN_ROLE_ID } from '../../src/modules/roles/catalog.js';
import { startApp, type TestApp } from '../support/app.js';
import {
  createDevice,
  createOrg,
  createSite,
  createUser,
  addOrgMember,
  partnerAdmin,
  sessionFor,
} from '../support/fixtures.js';
import {
  invalidObject,
  invalidScalar,
  validValue,
  type JsonSchema,
  type SchemaContext,
} from '../support/schema-arbitrary.js';

/** Runs per operation: ~135 operations × (VALID + INVALID) requests, about 1-2 minutes on 2 busy cores. */
const VALID_RUNS = Number(process.env.WALK_VALID_RUNS ?? 4);
const INVALID_RUNS = Number(process.env.WALK_INVALID_RUNS ?? 2);
const CONCURRENCY = 4;
const SEED = process.env.WALK_SEED ? Number(process.env.WALK_SEED) : 4242;

type Json = Record<string, any>;
interface Operation {
  method: string;
  path: string;
  op: Json;
}

let t: TestApp;
let doc: Json;
let ajv: Ajv2020;
let ctx: SchemaContext;
let admin: Awaited<ReturnType<typeof partnerAdmin>>;
let token: string | null = null;

beforeAll(async () => {
  t = await startApp();
  doc = (await (await fetch(`${t.baseUrl}/openapi.json`)).json()) as Json;
  ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: 'openapi.json', components: doc.components ?? {} });
  admin = await partnerAdmin(t);
  token = admin.session.accessToken;
  const org = await createOrg(t, admin.partner.id);
  const site = await createSite(t, org.id);
  const device = await createDevice(t, org, site.id);
  const member = await createUser(t);
  await addOrgMember(t, { orgId: org.id, userId: member.id });
  ctx = {
    components: doc.components?.schemas ?? {},
    ids: [admin.partner.id, org.id, site.id, device.id, member.id, PARTNER_ADMIN_ROLE_ID],
  };
}, 120_000);
afterAll(async () => t?.close());

const operations = (): Operation[] =>
  Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json)
      .filter(([m]) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
      .map(([m, op]) => ({ method: m.toUpperCase(), path, op: op as Json })),
  );

/** A fresh admin session whenever a walked route (logout, MFA changes, password change) ended the last one. */
async function adminToken(): Promise<string> {
  token ??= (
    await sessionFor(
      t,
      admin.user.id,
      { scope: 'partner', partnerId: admin.partner.id, roleId: PARTNER_ADMIN_ROLE_ID },
      true,
    )
  ).accessToken;
  return token;
}

interface Request {
  kind: 'valid' | 'invalid';
  path: string;
  query: [string, string][];
  body?: unknown;
}

const params = (op: Json, where: string) => ((op.parameters ?? []) as Json[]).filter((p) => p.in === where);
const bodySchema = (op: Json): JsonSchema | undefined => op.requestBody?.content?.['application/json']?.schema;
const asParam = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

function requestArb(o: Operation, kind: 'valid' | 'invalid'): fc.Arbitrary<Request> {
  const pathParams = params(o.op, 'path');
  const queryParams = params(o.op, 'query');
  const body = bodySchema(o.op);
  const validPath = fc.tuple(
    ...pathParams.map((p) => validValue(ctx, p.schema).map((v) => [p.name, asParam(v)] as const)),
  );
  const validQuery = fc
    .tuple(
      ...queryParams.map((p) =>
        (p.required ? validValue(ctx, p.schema) : fc.option(validValue(ctx, p.schema), { nil: undefined })).map(
          (v) => [p.name, v] as const,
        ),
      ),
    )
    .map((pairs) => pairs.filter(([, v]) => v !== undefined).map(([k, v]) => [k, asParam(v)] as [string, string]));
  const validBody = body ? validValue(ctx, body) : fc.constant(undefined);
  const valid = fc.record({ path: validPath, query: validQuery, body: validBody });
  if (kind === 'valid') return valid.map((r) => ({ kind, path: fill(o.path, r.path), query: r.query, body: r.body }));
  // One thing wrong: the body, one query parameter, or one path parameter.
  const wrongs: fc.Arbitrary<Request>[] = [];
  if (body)
    wrongs.push(
      fc
        .tuple(valid, invalidObject(ctx, body))
        .map(([r, b]) => ({ kind, path: fill(o.path, r.path), query: r.query, body: b })),
    );
  for (const p of queryParams) {
    const bad = invalidScalar(ctx, p.schema);
    if (bad)
      wrongs.push(
        fc.tuple(valid, bad).map(([r, v]) => ({
          kind,
          path: fill(o.path, r.path),
          query: [...r.query.filter(([k]) => k !== p.name), [p.name, v]],
          body: r.body,
        })),
      );
  }
  for (const p of pathParams) {
    const bad = invalidScalar(ctx, p.schema);
    if (bad)
      wrongs.push(
        fc.tuple(valid, bad).map(([r, v]) => ({
          kind,
          path: fill(
            o.path,
            r.path.map(([k, x]) => [k, k === p.name ? v : x] as const),
          ),
          query: r.query,
          body: r.body,
        })),
      );
  }
  wrongs.push(
    valid.map((r) => ({
      kind,
      path: fill(o.path, r.path),
      query: [...r.query, ['unknownParamForTheWalk', '1']],
      body: r.body,
    })),
  );
  return fc.oneof(...wrongs);
}

const fill = (path: string, values: readonly (readonly [string, string])[]) =>
  values.reduce((p, [k, v]) => p.replace(`{${k}}`, encodeURIComponent(v)), path);

const clip = (s: string, n = 300) => (s.length > n ? `${s.slice(0, n)}…` : s);

const validators = new WeakMap<JsonSchema, ValidateFunction>();
/** Refusals of schema-valid requests: constraints the document does not (yet) express. */
const refusedValid: string[] = [];

async function check(o: Operation, req: Request): Promise<void> {
  const url = new URL(req.path, t.baseUrl);
  for (const [k, v] of req.query) url.searchParams.append(k, v);
  const headers: Record<string, string> = { authorization: `Bearer ${await adminToken()}` };
  if (req.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, {
    method: o.method,
    headers,
    body: req.body === undefined ? undefined : JSON.stringify(req.body),
    redirect: 'manual',
  });
  const text = await res.text();
  const where = `${o.method} ${url.pathname}${url.search} ${req.body === undefined ? '' : clip(JSON.stringify(req.body), 200)} [${req.kind}] → ${res.status} ${clip(text)}`;
  if (res.status === 401) token = null;
  if (res.status >= 500) throw new Error(`server error: ${where}`);
  const responses = (o.op.responses ?? {}) as Json;
  const named = responses[String(res.status)] ?? responses[`${String(res.status)[0]}XX`] ?? responses.default;
  // A shared answer is declared by reference (`#/components/responses/...`): check against what it names.
  const declared =
    typeof named?.$ref === 'string' ? (doc.components?.responses?.[named.$ref.split('/').pop()!] as Json) : named;
  if (!declared)
    throw new Error(`status ${res.status} is not declared (declared: ${Object.keys(responses).join(', ')}): ${where}`);
  if (res.status >= 300 && res.status < 400) {
    if (!res.headers.get('location')) throw new Error(`redirect without Location: ${where}`);
    return;
  }
  const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
  const content = (declared.content ?? {}) as Json;
  if (!Object.keys(content).length) return;
  if (!content[type])
    throw new Error(`content type ${type} is not declared (${Object.keys(content).join(', ')}): ${where}`);
  if (type !== 'application/json') return;
  const schema = content[type].schema as JsonSchema;
  const validate = validators.get(schema) ?? validators.set(schema, ajv.compile(rebase(schema))).get(schema)!;
  if (!validate(JSON.parse(text)))
    throw new Error(`body does not match the declared schema (${ajv.errorsText(validate.errors)}): ${where}`);
  if (req.kind === 'valid' && res.status === 400 && /"code":"validation_failed"/.test(text)) refusedValid.push(where);
}

/** Response schemas refer to `#/components/...` of the document: point them at the registered copy. */
function rebase(schema: unknown): any {
  if (Array.isArray(schema)) return schema.map(rebase);
  if (!schema || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([k, v]) => [
      k,
      k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `openapi.json${v}` : rebase(v),
    ]),
  );
}

async function walk(o: Operation): Promise<string[]> {
  const failures: string[] = [];
  for (const [kind, numRuns] of [
    ['valid', VALID_RUNS],
    ['invalid', INVALID_RUNS],
  ] as const) {
    const details = await fc.check(
      fc.asyncProperty(requestArb(o, kind), (req) => check(o, req)),
      { numRuns, seed: SEED, endOnFailure: true },
    );
    if (details.failed)
      failures.push(
        details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance),
      );
  }
  return failures;
}

describe('the OpenAPI document says what the server does (property walk of every operation)', () => {
  it('the checker refuses an undeclared status, a body off the schema and a 5xx (it can fail)', async () => {
    const o = operations().find((x) => x.method === 'GET' && x.path === '/api/v1/auth/me')!;
    expect(o).toBeDefined();
    const bogus: Operation = {
      ...o,
      op: {
        ...o.op,
        responses: {
          200: {
            description: 'x',
            content: { 'application/json': { schema: { type: 'object', required: ['nope'] } } },
          },
        },
      },
    };
    await expect(check(bogus, { kind: 'valid', path: o.path, query: [] })).rejects.toThrow(
      /does not match the declared schema/,
    );
    const onlyCreated: Operation = { ...o, op: { ...o.op, responses: { 201: { description: 'x' } } } };
    await expect(check(onlyCreated, { kind: 'valid', path: o.path, query: [] })).rejects.toThrow(/is not declared/);
  });

  it('every operation, valid and invalid requests: no 5xx, a declared status, a body that matches its schema', {
    timeout: 300_000,
  }, async () => {
    const all = operations();
    expect(all.length).toBeGreaterThan(100);
    const queue = [...all];
    const failures: string[] = [];
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let o = queue.shift(); o; o = queue.shift()) failures.push(...(await walk(o)));
      }),
    );
    if (refusedValid.length && process.env.WALK_REPORT)
      console.log(`schema-valid requests refused:\n${refusedValid.join('\n')}`);
    expect(failures).toEqual([]);
  });
});

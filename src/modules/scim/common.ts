// Shared by the SCIM Users and Groups services: ids, ETags, paging, PATCH application, projection (the tenant condition and lock are in repo.ts).
import { scimPatch, type ScimPatchOperation } from 'scim-patch';
import { AppError, notFound } from '../../http/errors.js';
import type { PatchBody } from './schemas.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** SCIM ids are opaque to the client: anything not one of ours is simply not found. */
export function assertResourceId(id: string, what: string): string {
  if (!UUID.test(id)) throw notFound(what);
  return id.toLowerCase();
}

export const etag = (version: number) => `W/"${version}"`;

/** If-Match (RFC 7644 3.14): `*` or a list of (weak or strong) tags; none matching the current version is 412. */
export function assertIfMatch(header: string | string[] | undefined, version: number): void {
  if (header === undefined) return;
  const tags = [header]
    .flat()
    .join(',')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (tags.includes('*')) return;
  if (!tags.some((t) => t.replace(/^W\//, '').replace(/^"|"$/g, '') === String(version)))
    throw new AppError('precondition_failed');
}

export const MAX_COUNT = 200;
/** startIndex is 1-based (below 1 is 1); count 0..200 (RFC 7644 3.4.2.4: the provider may return fewer). */
export function paging(q: { startIndex?: number; count?: number }) {
  const startIndex = Math.max(1, q.startIndex ?? 1);
  const count = Math.min(MAX_COUNT, Math.max(0, q.count ?? 100));
  return { startIndex, count, offset: startIndex - 1 };
}

/**
 * Okta and Entra ID send some operations without a path, the value an object of attributes; an extension's attributes
 * inside it are keyed by its URN. scim-patch reads a URN key as a path, so each such attribute becomes its own op.
 */
function expandOps(ops: PatchBody['Operations']): ScimPatchOperation[] {
  const out: ScimPatchOperation[] = [];
  for (const o of ops) {
    const op = o.op.toLowerCase() as 'add' | 'remove' | 'replace';
    if (o.path === undefined && o.value && typeof o.value === 'object' && !Array.isArray(o.value) && op !== 'remove') {
      const plain: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(o.value as Record<string, unknown>)) {
        if (k.toLowerCase().startsWith('urn:') && v && typeof v === 'object' && !Array.isArray(v))
          for (const [sub, sv] of Object.entries(v))
            out.push({ op, path: `${k}:${sub}`, value: sv } as ScimPatchOperation);
        else plain[k] = v;
      }
      if (Object.keys(plain).length) out.push({ op, value: plain } as ScimPatchOperation);
    } else if (
      op === 'remove' &&
      o.path !== undefined &&
      !o.path.includes('[') &&
      Array.isArray(o.value) &&
      o.value.every((v) => v && typeof v === 'object' && typeof (v as { value?: unknown }).value === 'string')
    ) {
      // Entra ID removes members by a list of values (`$ref` null); scim-patch would need the whole element to match.
      for (const v of o.value as { value: string }[])
        out.push({ op, path: `${o.path}[value eq ${JSON.stringify(v.value)}]` } as ScimPatchOperation);
    } else
      out.push({
        op,
        ...(o.path !== undefined ? { path: o.path } : {}),
        ...('value' in o ? { value: o.value } : {}),
      } as ScimPatchOperation);
  }
  return out;
}

/** Applies the operations to the resource as we answer it (scim-patch); the id is immutable (400 mutability). */
export function applyPatch<T extends { id: string }>(resource: T, body: PatchBody): Record<string, unknown> {
  let patched: Record<string, unknown>;
  try {
    patched = scimPatch(structuredClone(resource) as never, expandOps(body.Operations)) as unknown as Record<
      string,
      unknown
    >;
  } catch (err) {
    const name = err instanceof Error ? err.constructor.name : '';
    const why = err instanceof Error ? err.message.slice(0, 300) : 'The operation cannot be applied.';
    if (/NoTarget|NoPath/i.test(name)) throw new AppError('patch_no_target', why);
    throw new AppError('invalid_patch_path', why);
  }
  if (patched.id !== resource.id)
    throw new AppError('attribute_immutable', 'id is assigned by the service provider and cannot change.');
  return patched;
}

/** `attributes` / `excludedAttributes` (RFC 7644 3.4.2.5) on top-level attributes; id, schemas and meta always stay. */
export function project<T extends Record<string, unknown>>(
  resource: T,
  q: { attributes?: string; excludedAttributes?: string },
  schema: string,
): T {
  const names = (s?: string) =>
    (s ?? '')
      .split(',')
      .map((a) => a.trim().toLowerCase())
      .filter(Boolean)
      .map((a) => (a.startsWith(`${schema.toLowerCase()}:`) ? a.slice(schema.length + 1) : a).split('.')[0]!);
  const keep = new Set(['id', 'schemas', 'meta']);
  const only = names(q.attributes);
  const drop = new Set(names(q.excludedAttributes));
  return Object.fromEntries(
    Object.entries(resource).filter(
      ([k]) => keep.has(k) || (only.length ? only.includes(k.toLowerCase()) : !drop.has(k.toLowerCase())),
    ),
  ) as T;
}

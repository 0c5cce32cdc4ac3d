// Contacts: the CSV import (JSON body with `csv`, or text/csv streamed) and CRUD. organizations:read|write.
import { finished, Readable, Transform } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { principalOf, requirePermission } from '../../http/guards.js';
import { metaOf } from '../../http/meta.js';
import { authErrors, errors, page, idParam } from '../../http/schemas.js';
import { PERMISSIONS as PERMS } from '../../access/catalog.js';
import { importContacts, importResultJson } from './import-service.js';
import { contactToJson, deleteContact, findContact, listContacts, updateContact } from './service.js';

export const MAX_CSV_BYTES = 50 * 1024 * 1024;
/** The inline file is fed to the parser in slices, as a streamed upload would be. */
const SLICE = 64 * 1024;
function* slices(text: string) {
  for (let i = 0; i < text.length; i += SLICE) yield text.slice(i, i + SLICE);
}

const contactJson = z
  .object({
    id: z.uuid(),
    orgId: z.uuid(),
    siteId: z.uuid().nullable(),
    externalId: z.string().nullable(),
    previousId: z.string().nullable(),
    firstName: z.string().nullable(),
    lastName: z.string().nullable(),
    email: z.string().nullable(),
    phone: z.string().nullable(),
    title: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Contact' });
const ack = z
  .array(z.strictObject({ externalId: z.string().min(1).max(255), action: z.enum(['merge', 'create']) }))
  .max(100_000);
const jsonImport = z.strictObject({
  orgId: z.uuid(),
  csv: z.string().min(1),
  dryRun: z.boolean().optional(),
  acknowledge: ack.optional(),
});
const csvQuery = z.strictObject({
  orgId: z.uuid(),
  dryRun: z.enum(['true', 'false']).optional(),
  acknowledge: z.string().max(1_000_000).optional().describe('JSON array of { externalId, action }'),
});
const importResult = z.object({
  summary: z.object({
    created: z.number(),
    updated: z.number(),
    unchanged: z.number(),
    heldBack: z.number(),
    failed: z.number(),
  }),
  rows: z.array(
    z.object({
      line: z.number(),
      externalId: z.string().nullable(),
      status: z.enum(['created', 'updated', 'unchanged', 'held_back', 'failed']),
      contactId: z.uuid().optional(),
      match: z.object({ contactId: z.uuid(), reason: z.enum(['email', 'name']), score: z.number() }).optional(),
      errors: z.array(z.string()).optional(),
    }),
  ),
});
const contactQuery = z.strictObject({
  orgId: z.uuid(),
  siteId: z.uuid().optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional(),
  search: z.string().max(255).optional(),
});
const nullable = (max: number) => z.string().trim().max(max).nullable().optional();
const patchBody = z
  .strictObject({
    siteId: z.uuid().nullable().optional(),
    externalId: nullable(255),
    previousId: nullable(255),
    firstName: nullable(255),
    lastName: nullable(255),
    email: z.email().max(255).nullable().optional(),
    phone: z
      .string()
      .trim()
      .regex(/^[+0-9][0-9 ()./-]{2,31}$/)
      .nullable()
      .optional(),
    title: nullable(255),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'Nothing to change' })
  .meta({ minProperties: 1 });

/**
 * Counts bytes as they stream so an oversized upload stops with 413 without being buffered. Errors and an aborted
 * upload reach the returned stream (a plain pipe would leave the parser waiting for ever, holding the import's
 * transaction and lock, and leave the 413 unhandled); whatever the parser no longer reads is drained so the answer
 * can still be sent.
 */
function limited(stream: Readable, max: number): Readable {
  let seen = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc: string, cb: (err?: Error | null, data?: Buffer) => void) {
      seen += chunk.length;
      if (seen > max) cb(new AppError('payload_too_large'));
      else cb(null, chunk);
    },
  });
  finished(stream, (err) => {
    if (err) counter.destroy(err);
  });
  counter.on('error', () => {}); // surfaced to the reader through pipeline() in the import
  counter.on('close', () => {
    if (!stream.readableEnded) stream.resume();
  });
  return stream.pipe(counter);
}

export function contactRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    // text/csv bodies reach the handler as the raw stream: csv-parse reads them as they arrive, and `limited` counts
    // their bytes (MAX_CSV_BYTES). A JSON body is buffered and parsed whole: it keeps the global JSON body limit.
    app.addContentTypeParser('text/csv', (_req, payload, done) => done(null, payload));
    const r = app.withTypeProvider<ZodTypeProvider>();
    const auth = deps.authenticate();

    r.post(
      '/contacts/import',
      {
        onRequest: [auth, requirePermission(PERMS.ORGS_WRITE)],
        schema: {
          tags: ['contacts'],
          summary:
            'Import contacts from CSV (JSON { orgId, csv, dryRun?, acknowledge? } within the JSON body limit (1 MiB by default), or text/csv streamed up to 50 MiB with ?orgId=&dryRun=)',
          description:
            'Columns: externalId, previousId, firstName, lastName, email, phone, title, site. Idempotent on externalId (or previousId); fuzzy matches are held back until acknowledged.',
          querystring: csvQuery.partial(),
          body: z.unknown(),
          response: { 200: importResult, ...errors(400, 404, 413, 415), ...authErrors },
        },
      },
      async (req, reply) => {
        const p = principalOf(req);
        const isCsv = (req.headers['content-type'] ?? '').startsWith('text/csv');
        let orgId: string;
        let dryRun: boolean;
        let acknowledge: z.infer<typeof ack>;
        let source: Readable;
        if (isCsv) {
          const q = csvQuery.safeParse(req.query);
          if (!q.success) throw new AppError('validation_failed', undefined, { details: z.flattenError(q.error) });
          let parsedAck: unknown = [];
          try {
            parsedAck = q.data.acknowledge ? JSON.parse(q.data.acknowledge) : [];
          } catch {
            throw new AppError('validation_failed', 'acknowledge is not JSON.', {
              details: { fieldErrors: { acknowledge: ['Not JSON'] }, formErrors: [] },
            });
          }
          const a = ack.safeParse(parsedAck);
          if (!a.success)
            throw new AppError('validation_failed', undefined, {
              details: { fieldErrors: { acknowledge: a.error.issues.map((i) => i.message) }, formErrors: [] },
            });
          ({ orgId } = q.data);
          dryRun = q.data.dryRun === 'true';
          acknowledge = a.data;
          source = limited(req.body as Readable, MAX_CSV_BYTES);
        } else {
          const b = jsonImport.safeParse(req.body);
          if (!b.success) throw new AppError('validation_failed', undefined, { details: z.flattenError(b.error) });
          ({ orgId } = b.data);
          dryRun = b.data.dryRun ?? false;
          acknowledge = b.data.acknowledge ?? [];
          source = Readable.from(slices(b.data.csv));
        }
        const result = await importContacts(deps, p, source, { orgId, dryRun, acknowledge }, metaOf(req));
        // Streamed as built (importResultJson), the shape of `importResult`: a large report is not re-validated in
        // one blocking call.
        const body = Readable.from(importResultJson(result), { objectMode: false }) as unknown as z.infer<
          typeof importResult
        >;
        return reply.type('application/json; charset=utf-8').send(body);
      },
    );

    r.get(
      '/contacts',
      {
        onRequest: [auth, requirePermission(PERMS.ORGS_READ)],
        schema: {
          tags: ['contacts'],
          summary: 'Contacts of the organisations the caller may read',
          querystring: contactQuery,
          response: { 200: page(contactJson), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => listContacts(deps.db, principalOf(req), req.query),
    );
    r.get(
      '/contacts/:id',
      {
        onRequest: [auth, requirePermission(PERMS.ORGS_READ)],
        schema: {
          tags: ['contacts'],
          summary: 'A contact',
          params: idParam,
          response: { 200: contactJson, ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => contactToJson(await findContact(deps.db, principalOf(req), req.params.id)),
    );
    r.patch(
      '/contacts/:id',
      {
        onRequest: [auth, requirePermission(PERMS.ORGS_WRITE)],
        schema: {
          tags: ['contacts'],
          summary: 'Change a contact',
          params: idParam,
          body: patchBody,
          response: { 200: contactJson, ...errors(400, 404, 409), ...authErrors },
        },
      },
      async (req) => updateContact(deps, principalOf(req), req.params.id, req.body, metaOf(req)),
    );
    r.delete(
      '/contacts/:id',
      {
        onRequest: [auth, requirePermission(PERMS.ORGS_WRITE)],
        schema: {
          tags: ['contacts'],
          summary: 'Delete a contact',
          params: idParam,
          response: { 200: z.object({ success: z.literal(true) }), ...errors(400, 404), ...authErrors },
        },
      },
      async (req) => {
        await deleteContact(deps, principalOf(req), req.params.id, metaOf(req));
        return { success: true as const };
      },
    );
  };
}

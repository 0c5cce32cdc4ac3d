// Request and response shapes of /audit-logs.
import { z } from 'zod';

export const AUDIT_RESULTS = ['success', 'failure', 'denied'] as const;
export const EXPORT_FORMATS = ['csv', 'jsonl'] as const;

/** The record on the wire, these fields and no others; the chain fields (seq, hashes) stay in the database. */
export const auditRecordJson = z
  .object({
    id: z.uuid(),
    at: z.string(),
    action: z.string(),
    result: z.enum(AUDIT_RESULTS),
    actorUserId: z.uuid().nullable(),
    actorEmail: z.string().nullable(),
    partnerId: z.uuid().nullable(),
    orgId: z.uuid().nullable(),
    resourceType: z.string().nullable(),
    resourceId: z.string().nullable(),
    ip: z.string().nullable(),
    userAgent: z.string().nullable(),
    details: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'AuditRecord' });
export type AuditRecordJson = z.infer<typeof auditRecordJson>;

const instant = z.iso.datetime({ offset: true });

/** The filters shared by the list and the export. `action` ending in `.*` matches the prefix (`auth.mfa.*`). */
const filterFields = {
  action: z.string().trim().min(1).max(100).optional(),
  actorUserId: z.uuid().optional(),
  resourceType: z.string().min(1).max(64).optional(),
  resourceId: z.string().min(1).max(255).optional(),
  result: z.enum(AUDIT_RESULTS).optional(),
  orgId: z.uuid().optional(),
  /** Inclusive. */
  from: instant.optional(),
  /** Exclusive: consecutive windows never count a record twice. */
  to: instant.optional(),
};

const fromNotAfterTo = (q: { from?: string; to?: string }) =>
  !q.from || !q.to || Date.parse(q.from) <= Date.parse(q.to);
const rangeIssue = { message: '`from` must not be after `to`', path: ['from'] };

export const auditListQuery = z
  .strictObject({
    ...filterFields,
    limit: z.coerce.number().int().min(1).max(200).default(50),
    cursor: z.string().max(512).optional(),
  })
  .refine(fromNotAfterTo, rangeIssue);

export const auditExportQuery = z
  .strictObject({ format: z.enum(EXPORT_FORMATS), ...filterFields })
  .refine(fromNotAfterTo, rangeIssue);

export type AuditFilters = Omit<z.infer<typeof auditListQuery>, 'limit' | 'cursor'>;

export const verifyResponse = z.object({
  ok: z.boolean(),
  /** Records of the chain walked. */
  checked: z.number().int().min(0),
  /** The first record whose hash or link to its predecessor does not hold; null when the chain is intact. */
  firstBrokenId: z.uuid().nullable(),
});
export type VerifyResult = z.infer<typeof verifyResponse>;

/** Documents the streamed download: one line per record, in either format. */
export const exportResponse = {
  description: 'Every matching record, newest first, streamed (CSV with a header line, or JSON Lines of AuditRecord).',
  content: {
    'text/csv': { schema: z.string() },
    'application/x-ndjson': { schema: auditRecordJson },
  },
};

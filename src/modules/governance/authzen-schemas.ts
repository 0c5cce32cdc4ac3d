// The shapes of the authorization API (OpenID AuthZEN Authorization API 1.0) as Gatehouse answers it: subjects are
// users and service accounts, resources the partner's records, actions the permissions of the catalogue. Unknown
// fields are ignored (the standard asks for forward compatibility); unknown types are refused with their own codes.
import { z } from 'zod';
import { CATALOG_ENTRIES } from '../../access/catalog.js';
import { accessReason } from './schemas.js';
import { AUTHZEN_RESOURCE_TYPES } from './repo-authzen.js';

export const SUBJECT_TYPES = ['user', 'service_account'] as const;
export type SubjectType = (typeof SUBJECT_TYPES)[number];
export const PERMISSION_KEYS: readonly string[] = CATALOG_ENTRIES.map((e) => `${e.resource}:${e.action}`);
export const SEMANTICS = ['execute_all', 'deny_on_first_deny', 'permit_on_first_permit'] as const;
/** A batch holds at most this many evaluations. */
export const MAX_EVALUATIONS = 1000;

const properties = z
  .record(z.string(), z.unknown())
  .optional()
  .describe('Additional attributes; ignored except where named');
const id = z.uuid().describe("The record's id (a Gatehouse UUID)");
const typeName = (values: readonly string[], what: string) =>
  z
    .string()
    .min(1)
    .max(64)
    .meta({ enum: [...values], description: `The ${what} type (any other: 400)` });

export const subject = z
  .object({
    type: typeName(SUBJECT_TYPES, 'subject'),
    id,
    properties: z
      .object({
        ip_address: z
          .union([z.ipv4(), z.ipv6()])
          .optional()
          .describe(
            'Evaluate IP allow-lists as if the request came from this address (else they are reported, not tested)',
          ),
      })
      .catchall(z.unknown())
      .optional(),
  })
  .describe('A user or a service account (agents authenticate as service accounts)');
export const resource = z
  .object({ type: typeName(AUTHZEN_RESOURCE_TYPES, 'resource'), id, properties })
  .describe('A record of the partner');
export const action = z
  .object({
    name: z
      .string()
      .min(1)
      .max(160)
      .meta({ enum: [...PERMISSION_KEYS], description: 'A permission of the catalogue, `resource:action`' }),
    properties,
  })
  .describe('A permission of the catalogue');
const context = z
  .object({
    dry_run: z
      .boolean()
      .optional()
      .describe(
        'true: only asking. A destructive permission is weighed against the subject’s budgets without being charged to them',
      ),
  })
  .catchall(z.unknown())
  .optional()
  .describe('The environment: `dry_run` is read by evaluations; other keys are accepted and not read');

export const evaluationBody = z.object({ subject, resource, action, context }).meta({
  examples: [
    {
      subject: { type: 'user', id: '6f1c2d3e-4a5b-4c6d-8e7f-8091a2b3c4d5' },
      resource: { type: 'device', id: '0b1c2d3e-4f50-4a6b-9c7d-8e9fa0b1c2d3' },
      action: { name: 'devices:execute' },
      context: { time: '2026-05-31T15:22:00Z' },
    },
  ],
});
export type EvaluationBody = z.infer<typeof evaluationBody>;

const partial = z.object({
  subject: subject.optional(),
  resource: resource.optional(),
  action: action.optional(),
  context,
});
export const evaluationsBody = partial
  .extend({
    evaluations: z
      .array(partial)
      .max(MAX_EVALUATIONS)
      .optional()
      .describe(
        `Up to ${MAX_EVALUATIONS} evaluations, answered in order; each takes the top-level subject, resource, action and context for the keys it omits`,
      ),
    options: z
      .object({
        evaluations_semantic: z
          .enum(SEMANTICS)
          .optional()
          .describe(
            'execute_all (default), deny_on_first_deny or permit_on_first_permit: the answer stops at the first deny (or permit)',
          ),
      })
      .catchall(z.unknown())
      .optional(),
  })
  .meta({
    examples: [
      {
        subject: { type: 'service_account', id: '2c3d4e5f-6a7b-4c8d-9e0f-a1b2c3d4e5f6' },
        action: { name: 'devices:execute' },
        options: { evaluations_semantic: 'execute_all' },
        evaluations: [
          { resource: { type: 'device', id: '0b1c2d3e-4f50-4a6b-9c7d-8e9fa0b1c2d3' } },
          { resource: { type: 'device', id: '1c2d3e4f-5061-4b7c-8d9e-af0b1c2d3e4f' } },
        ],
      },
    ],
  });
export type EvaluationsBody = z.infer<typeof evaluationsBody>;

export const decisionContext = z.object({
  epoch: z
    .number()
    .int()
    .describe(
      'The decision epoch: it moves whenever anything a decision reads changes (roles, memberships, grants, relationships, settings, where records live); a cached decision holds until it moves',
    ),
  reasons: z
    .array(accessReason)
    .describe('The steps the decision passed, in order, as GET /api/v1/access/explain names them'),
  denied_by: z.string().optional().describe('The first step that denies'),
  requires: z
    .enum(['step_up', 'co_sign'])
    .optional()
    .describe(
      'Over a budget (`denied_by: budget`): what unlocks it, as a route’s 403 budget_exceeded says. `step_up` (a person): the person’s own requests pass with a fresh passkey step-up, evaluations only with a co-signature; `co_sign` (a service account): a co-signature',
    ),
  reason: z.string().optional().describe('Where the batch stopped: `deny_on_first_deny` or `permit_on_first_permit`'),
  error: z
    .object({ status: z.number().int(), message: z.string() })
    .optional()
    .describe('The resource is not a record of the caller’s partner (or does not exist): the same answer either way'),
});
export const decision = z.object({ decision: z.boolean(), context: decisionContext }).meta({
  id: 'AuthzenDecision',
  examples: [
    {
      decision: true,
      context: {
        epoch: 42,
        reasons: [
          { step: 'account', allowed: true, detail: 'The account is active.' },
          { step: 'membership', allowed: true, detail: 'Member of the partner.' },
          { step: 'role', allowed: true, detail: 'Granted devices:execute by its role Partner Technician.' },
          {
            step: 'organization_access',
            allowed: true,
            detail: 'Standing access to every organisation of the partner (orgAccess all).',
            via: 'standing_all',
          },
        ],
      },
    },
  ],
});
export const evaluationsResponse = z
  .object({ evaluations: z.array(decision) })
  .meta({ examples: [{ evaluations: [{ decision: true, context: { epoch: 42, reasons: [] } }] }] });

const page = z
  .object({
    token: z.string().max(512).optional().describe('The `next_token` of the previous page'),
    limit: z.number().int().min(1).max(200).optional().describe('At most this many results (default 50)'),
  })
  .catchall(z.unknown())
  .optional();
const ignoredId = z.string().max(200).optional().describe('Ignored: the search answers ids');

export const subjectSearchBody = z
  .object({ subject: subject.extend({ id: ignoredId }), resource, action, context, page })
  .meta({
    examples: [
      {
        subject: { type: 'user' },
        action: { name: 'devices:execute' },
        resource: { type: 'device', id: '0b1c2d3e-4f50-4a6b-9c7d-8e9fa0b1c2d3' },
        page: { limit: 50 },
      },
    ],
  });
export const resourceSearchBody = z
  .object({
    subject,
    action,
    resource: resource.extend({
      id: ignoredId,
      properties: z
        .object({ organization_id: z.uuid().optional().describe('Only records of this organisation') })
        .catchall(z.unknown())
        .optional(),
    }),
    context,
    page,
  })
  .meta({
    examples: [
      {
        subject: { type: 'user', id: '6f1c2d3e-4a5b-4c6d-8e7f-8091a2b3c4d5' },
        action: { name: 'scripts:execute' },
        resource: { type: 'device', properties: { organization_id: '7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d' } },
        page: { limit: 100 },
      },
    ],
  });
export const actionSearchBody = z.object({ subject, resource, context, page }).meta({
  examples: [
    {
      subject: { type: 'user', id: '6f1c2d3e-4a5b-4c6d-8e7f-8091a2b3c4d5' },
      resource: { type: 'device', id: '0b1c2d3e-4f50-4a6b-9c7d-8e9fa0b1c2d3' },
    },
  ],
});
export type SubjectSearchBody = z.infer<typeof subjectSearchBody>;
export type ResourceSearchBody = z.infer<typeof resourceSearchBody>;
export type ActionSearchBody = z.infer<typeof actionSearchBody>;

const pageOut = z.object({
  next_token: z.string().describe('Empty on the last page'),
  count: z
    .number()
    .int()
    .describe('Results in this page (a page may hold fewer than `limit` while `next_token` goes on)'),
});
const searchResponse = <T extends z.ZodType>(item: T, example: unknown) =>
  z
    .object({ page: pageOut, context: z.object({ epoch: z.number().int() }), results: z.array(item) })
    .meta({ examples: [{ page: { next_token: '', count: 1 }, context: { epoch: 42 }, results: [example] }] });
export const subjectSearchResponse = searchResponse(z.object({ type: z.enum(SUBJECT_TYPES), id: z.uuid() }), {
  type: 'user',
  id: '6f1c2d3e-4a5b-4c6d-8e7f-8091a2b3c4d5',
});
export const resourceSearchResponse = searchResponse(z.object({ type: z.enum(AUTHZEN_RESOURCE_TYPES), id: z.uuid() }), {
  type: 'device',
  id: '0b1c2d3e-4f50-4a6b-9c7d-8e9fa0b1c2d3',
});
export const actionSearchResponse = searchResponse(z.object({ name: z.string() }), { name: 'devices:execute' });

export const metadataResponse = z
  .object({
    policy_decision_point: z.string(),
    access_evaluation_endpoint: z.string(),
    access_evaluations_endpoint: z.string(),
    search_subject_endpoint: z.string(),
    search_resource_endpoint: z.string(),
    search_action_endpoint: z.string(),
  })
  .meta({
    examples: [
      {
        policy_decision_point: 'https://gatehouse.example.com',
        access_evaluation_endpoint: 'https://gatehouse.example.com/access/v1/evaluation',
        access_evaluations_endpoint: 'https://gatehouse.example.com/access/v1/evaluations',
        search_subject_endpoint: 'https://gatehouse.example.com/access/v1/search/subject',
        search_resource_endpoint: 'https://gatehouse.example.com/access/v1/search/resource',
        search_action_endpoint: 'https://gatehouse.example.com/access/v1/search/action',
      },
    ],
  });

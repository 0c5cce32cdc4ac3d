// The authorization API (OpenID AuthZEN Authorization API 1.0) at the standard's own paths, beside /api/v1: the other
// parts of the RMM ask "may this principal do this to that record" and get the answer the API's own routes give.
// Callers are service accounts holding authz:evaluate; every route: authenticate → service account → permission →
// schema → handler.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../../deps.js';
import { principalOf, requirePermission } from '../../http/guards.js';
import { AppError } from '../../http/errors.js';
import { authErrors, errors } from '../../http/schemas.js';
import { PERMISSIONS as PERMS } from '../../access/catalog.js';
import {
  actionSearchBody,
  actionSearchResponse,
  decision,
  evaluationBody,
  evaluationsBody,
  evaluationsResponse,
  metadataResponse,
  resourceSearchBody,
  resourceSearchResponse,
  subjectSearchBody,
  subjectSearchResponse,
} from './authzen-schemas.js';
import { evaluateAll, questionOf } from './authzen-service.js';
import { applySemantic } from './authzen-batch.js';
import { installGovernorAudit } from '../governor/index.js';
import { searchActions, searchResources, searchSubjects } from './authzen-search.js';

export const AUTHZEN_PATHS = {
  evaluation: '/access/v1/evaluation',
  evaluations: '/access/v1/evaluations',
  subject: '/access/v1/search/subject',
  resource: '/access/v1/search/resource',
  action: '/access/v1/search/action',
} as const;

const SAME =
  'Decided by the function every API request passes (the same steps GET /api/v1/access/explain names), for the subjects and records of the caller’s own partner only: another partner’s subject or record answers exactly as one that does not exist.';

const BUDGETS =
  'An allowed destructive permission is charged to the subject’s blast-radius budgets (its partner’s and the organisation’s, the stricter wins), the same counts the API’s own routes charge: over one, `decision: false` with `denied_by: budget`, the `budget` step and `context.requires` (`step_up` for a person, `co_sign` for a service account). The subject has no session here, so its step-up never counts: a co-signature approved for it unlocks its next N actions, evaluations included. `context: { "dry_run": true }` only asks: the budgets are weighed, never charged.';

/** The authorization API answers service accounts (the other services of the platform), not people. */
async function serviceAccountsOnly(req: FastifyRequest) {
  if (principalOf(req).actorType !== 'service_account')
    throw new AppError('forbidden', 'The authorization API answers service accounts holding authz:evaluate.');
}

export function authzenRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    // A budget tripped (or a co-signature spent) by an evaluation is audited as on the API's own routes.
    installGovernorAudit(app, deps);
    const r = app.withTypeProvider<ZodTypeProvider>();
    const guards = [deps.authenticate(), serviceAccountsOnly, requirePermission(PERMS.AUTHZ_EVALUATE)];
    const tags = ['access'];
    const p = principalOf;
    const refusals = { ...errors(400), ...authErrors };

    r.get(
      '/.well-known/authzen-configuration',
      {
        schema: {
          tags,
          operationId: 'getAuthzenConfiguration',
          summary: 'The authorization API’s metadata (AuthZEN policy decision point)',
          description: 'Absolute URLs of the evaluation and search endpoints, under PUBLIC_URL.',
          security: [],
          response: { 200: metadataResponse },
        },
      },
      async (_req, reply) => {
        reply.header('cache-control', 'public, max-age=300');
        const base = deps.config.publicUrl;
        return {
          policy_decision_point: base,
          access_evaluation_endpoint: `${base}${AUTHZEN_PATHS.evaluation}`,
          access_evaluations_endpoint: `${base}${AUTHZEN_PATHS.evaluations}`,
          search_subject_endpoint: `${base}${AUTHZEN_PATHS.subject}`,
          search_resource_endpoint: `${base}${AUTHZEN_PATHS.resource}`,
          search_action_endpoint: `${base}${AUTHZEN_PATHS.action}`,
        };
      },
    );

    r.post(
      AUTHZEN_PATHS.evaluation,
      {
        onRequest: guards,
        schema: {
          tags,
          operationId: 'authzenEvaluate',
          summary: 'May this user or service account use this permission on this record?',
          description: `Answers \`decision\` with the reason chain and the decision epoch in \`context\`. A record that is not the partner's answers \`decision: false\` with \`context.error\` 404. ${SAME} Unknown subject or resource types: 400 unknown_subject_type / unknown_resource_type; an action outside the catalogue: 400 unknown_permission. ${BUDGETS}`,
          body: evaluationBody,
          response: { 200: decision, ...refusals },
        },
      },
      async (req) =>
        (await evaluateAll(deps, p(req), [questionOf({ ...req.body, dryRun: req.body.context?.dry_run })]))[0]!,
    );

    r.post(
      AUTHZEN_PATHS.evaluations,
      {
        onRequest: guards,
        schema: {
          tags,
          operationId: 'authzenEvaluateMany',
          summary: 'Up to 1,000 evaluations in one round trip',
          description: `Each entry takes the top-level subject, resource, action and context for the keys it omits; without \`evaluations\`, the top level is one evaluation. \`options.evaluations_semantic\`: execute_all (default), deny_on_first_deny, permit_on_first_permit (the answer ends at the first deny or permit, whose context names the semantic). The records are read in one statement per kind and the subjects once per organisation. ${SAME} ${BUDGETS} In a batch, each subject's allowed destructive evaluations are one use of destructive permissions, each device one device affected; \`dry_run\` at the top level or in an entry makes that entry only ask.`,
          body: evaluationsBody,
          response: { 200: evaluationsResponse, ...refusals },
        },
      },
      async (req) => {
        const b = req.body;
        const entries = b.evaluations?.length
          ? b.evaluations.map((e) => ({
              subject: e.subject ?? b.subject,
              resource: e.resource ?? b.resource,
              action: e.action ?? b.action,
              dryRun: b.context?.dry_run === true || e.context?.dry_run === true,
            }))
          : [{ subject: b.subject, resource: b.resource, action: b.action, dryRun: b.context?.dry_run }];
        const semantic = b.options?.evaluations_semantic ?? 'execute_all';
        const answers = await evaluateAll(deps, p(req), entries.map(questionOf), semantic);
        return { evaluations: applySemantic(answers, semantic) };
      },
    );

    r.post(
      AUTHZEN_PATHS.subject,
      {
        onRequest: guards,
        schema: {
          tags,
          operationId: 'authzenSearchSubjects',
          summary: 'Which users (or service accounts) may use a permission on a record',
          description: `Paged by \`page.limit\` (default 50, at most 200) and \`page.next_token\` (empty on the last page; a token continues only the request it came from, else 400). The database narrows the candidates; each is then decided as an evaluation decides it, so a page may hold fewer than \`limit\` results while \`next_token\` goes on. ${SAME}`,
          body: subjectSearchBody,
          response: { 200: subjectSearchResponse, ...refusals },
        },
      },
      async (req) => searchSubjects(deps, p(req), req.body),
    );

    r.post(
      AUTHZEN_PATHS.resource,
      {
        onRequest: guards,
        schema: {
          tags,
          operationId: 'authzenSearchResources',
          summary: 'Which records of a kind a user or service account may use a permission on',
          description: `\`resource.properties.organization_id\` limits the search to one organisation ("which devices may this technician run scripts on in this organisation"). Answered by a query over the records the subject's memberships reach (their organisations, sites and device groups), in id order, paged as the subject search is; each record of the page is then decided as an evaluation decides it. ${SAME}`,
          body: resourceSearchBody,
          response: { 200: resourceSearchResponse, ...refusals },
        },
      },
      async (req) => searchResources(deps, p(req), req.body),
    );

    r.post(
      AUTHZEN_PATHS.action,
      {
        onRequest: guards,
        schema: {
          tags,
          operationId: 'authzenSearchActions',
          summary: 'Which permissions of the catalogue a user or service account holds on a record',
          description: `In catalogue order, paged as the other searches. ${SAME}`,
          body: actionSearchBody,
          response: { 200: actionSearchResponse, ...refusals },
        },
      },
      async (req) => searchActions(deps, p(req), req.body),
    );
  };
}

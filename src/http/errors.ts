// One error class and the catalogue of every code the API answers.
// Services throw AppError with a code; the status and the short text come from the catalogue.

export const ERROR_CATALOG = {
  // 400
  validation_failed: { status: 400, error: 'Bad Request', message: 'The request is not valid.' },
  invalid_json: { status: 400, error: 'Bad Request', message: 'The request body is not valid JSON.' },
  // 401 at sign-in; 400 for a wrong currentPassword on an authenticated route (there, 401 would mean the bearer
  // token is dead). The envelope's `error` text follows the status answered.
  invalid_credentials: {
    status: 401,
    error: 'Unauthorized',
    message: 'Invalid email or password.',
    alsoAnswers: { status: 400, error: 'Bad Request' },
  },
  weak_password: { status: 400, error: 'Bad Request', message: 'The password is too weak.' },
  circular_inheritance: {
    status: 400,
    error: 'Bad Request',
    message: 'Cannot set parent role: would create circular inheritance.',
  },
  inheritance_too_deep: {
    status: 400,
    error: 'Bad Request',
    message: 'Role inheritance may be at most 16 levels deep.',
  },
  role_has_users: { status: 400, error: 'Bad Request', message: 'Cannot delete role with assigned users.' },
  role_has_children: { status: 400, error: 'Bad Request', message: 'Cannot delete role with child roles.' },
  unknown_permission: { status: 400, error: 'Bad Request', message: 'The permission is not in the catalogue.' },
  unknown_subject_type: {
    status: 400,
    error: 'Bad Request',
    message: 'The subject type must be user or service_account.',
  },
  unknown_resource_type: {
    status: 400,
    error: 'Bad Request',
    message: 'The resource type must be partner, organization, site, device_group, device or script.',
  },
  default_role_required: { status: 400, error: 'Bad Request', message: 'Auto-provisioning needs a default role.' },
  unsupported_provider_type: { status: 400, error: 'Bad Request', message: 'The provider type must be oidc or saml.' },
  sso_link_invalid: {
    status: 400,
    error: 'Bad Request',
    message: 'The account link request is invalid, used or expired; sign in through your identity provider again.',
  },
  auto_extend_not_allowed: {
    status: 400,
    error: 'Bad Request',
    message:
      'A relationship holding a role with *:*, users:write or roles:write cannot extend itself: it ends, and a new one is approved.',
  },
  site_required: {
    status: 400,
    error: 'Bad Request',
    message: 'The device needs a site: neither the key nor the request names one.',
  },
  invalid_mfa_setup: { status: 400, error: 'Bad Request', message: 'There is no pending MFA setup; start it again.' },
  phone_not_verified: { status: 400, error: 'Bad Request', message: 'Verify a phone number first.' },
  invalid_challenge: {
    status: 400,
    error: 'Bad Request',
    message: 'The WebAuthn challenge is missing, expired or already used.',
  },
  passkey_verification_failed: { status: 400, error: 'Bad Request', message: 'The passkey could not be verified.' },
  invalid_reset_token: { status: 400, error: 'Bad Request', message: 'The reset link is invalid or has expired.' },
  invalid_report_token: { status: 400, error: 'Bad Request', message: 'The link is invalid, expired or already used.' },
  verification_invalid: {
    status: 400,
    error: 'Bad Request',
    message: 'The verification link is invalid, expired or already used.',
  },
  invalid_csv: { status: 400, error: 'Bad Request', message: 'The CSV could not be read.' },
  json_too_deep: { status: 400, error: 'Bad Request', message: 'The JSON body is nested too deeply.' },
  malformed_request: { status: 400, error: 'Bad Request', message: 'The request is not valid HTTP.' },
  // SCIM 2.0 (RFC 7644 3.12): answered under /scim/v2 with the matching scimType (src/modules/scim/errors.ts).
  invalid_filter: {
    status: 400,
    error: 'Bad Request',
    message: 'The filter is not valid SCIM filter syntax or names an attribute that cannot be filtered on.',
  },
  invalid_patch_path: { status: 400, error: 'Bad Request', message: 'The PATCH path is not valid for this resource.' },
  patch_no_target: { status: 400, error: 'Bad Request', message: 'The PATCH path matched no value.' },
  attribute_immutable: { status: 400, error: 'Bad Request', message: 'The attribute cannot be changed.' },
  // OAuth 2.0 token endpoint (RFC 6749 5.2): `error` carries the OAuth code itself, and `error_description` the message.
  invalid_request: {
    status: 400,
    error: 'invalid_request',
    message: 'The token request is missing a parameter, repeats one or is malformed.',
  },
  unsupported_grant_type: {
    status: 400,
    error: 'unsupported_grant_type',
    message: 'Only grant_type=client_credentials is supported.',
  },
  invalid_client: { status: 401, error: 'invalid_client', message: 'Client authentication failed.' },
  // 401
  unauthenticated: { status: 401, error: 'Unauthorized', message: 'Authentication is required.' },
  invalid_mfa_code: { status: 401, error: 'Unauthorized', message: 'The verification code is not valid.' },
  invalid_temp_token: {
    status: 401,
    error: 'Unauthorized',
    message: 'The login challenge is invalid or has expired; sign in again.',
  },
  invalid_refresh_token: {
    status: 401,
    error: 'Unauthorized',
    message: 'The refresh token is invalid or has expired.',
  },
  invalid_exchange_code: { status: 401, error: 'Unauthorized', message: 'The sign-in code is invalid or has expired.' },
  enrollment_key_invalid: { status: 401, error: 'Unauthorized', message: 'The enrollment key is not valid.' },
  enrollment_key_expired: { status: 401, error: 'Unauthorized', message: 'The enrollment key has expired.' },
  enrollment_key_exhausted: { status: 401, error: 'Unauthorized', message: 'The enrollment key has been used up.' },
  invalid_agent_token: { status: 401, error: 'Unauthorized', message: 'The agent token is not valid.' },
  mfa_code_required: {
    status: 401,
    error: 'Unauthorized',
    message: 'Your account has a second factor: give its code too.',
  },
  invalid_setup_token: {
    status: 401,
    error: 'Unauthorized',
    message: 'The setup link is invalid, expired or already used; restart the service for a new one.',
  },
  // 403
  forbidden: { status: 403, error: 'Forbidden', message: 'You do not have permission to do this.' },
  tenant_context_required: { status: 403, error: 'Forbidden', message: 'Partner or organization context required.' },
  full_org_access_required: { status: 403, error: 'Forbidden', message: 'Full partner organization access required.' },
  mfa_required: {
    status: 403,
    error: 'Forbidden',
    message: 'This action needs a session that passed multi-factor authentication.',
  },
  permission_ceiling: { status: 403, error: 'Forbidden', message: 'You cannot grant permissions you do not hold.' },
  forbidden_self_action: { status: 403, error: 'Forbidden', message: 'You cannot do this to your own account.' },
  account_outside_authority: {
    status: 403,
    error: 'Forbidden',
    message:
      'The account belongs to a tenant or holds access beyond your authority: change its membership here instead of the account.',
  },
  last_admin: {
    status: 403,
    error: 'Forbidden',
    message: 'The last administrator of the partner cannot be removed, disabled or demoted.',
  },
  system_role_immutable: { status: 403, error: 'Forbidden', message: 'Cannot modify system roles.' },
  csrf_failed: { status: 403, error: 'Forbidden', message: 'The CSRF check failed.' },
  org_requires_mfa: { status: 403, error: 'Forbidden', message: 'Your organization requires MFA.' },
  sms_not_allowed: { status: 403, error: 'Forbidden', message: 'Your organization does not allow SMS MFA.' },
  mfa_method_not_allowed: {
    status: 403,
    error: 'Forbidden',
    message: 'Your organization does not allow this MFA method.',
  },
  last_factor_required: {
    status: 403,
    error: 'Forbidden',
    message: 'This is your last MFA factor and your policy requires MFA.',
  },
  step_up_required: {
    status: 403,
    error: 'Forbidden',
    message: 'This action needs a recent proof of presence; confirm it is you (POST /auth/step-up).',
  },
  last_sign_in_method: {
    status: 403,
    error: 'Forbidden',
    message: 'Removing the password would leave the account without a way to sign in.',
  },
  sso_enforced: { status: 403, error: 'Forbidden', message: 'Your organization signs in with single sign-on.' },
  service_account_not_allowed: {
    status: 403,
    error: 'Forbidden',
    message: 'This route is for people: a service account cannot use it.',
  },
  msp_access_denied: {
    status: 403,
    error: 'Forbidden',
    message: "The organization does not let its partner's staff in (mspAccess suspended, or approval required).",
  },
  jit_approval_customer_only: {
    status: 403,
    error: 'Forbidden',
    message: "Only the organization's own admins may loosen jitApproval; its partner may only tighten it.",
  },
  jit_not_eligible: {
    status: 403,
    error: 'Forbidden',
    message: 'You are not eligible for just-in-time access to this organization.',
  },
  jit_approver_required: {
    status: 403,
    error: 'Forbidden',
    message: "The organization's policy names who approves this request, and it is not you.",
  },
  relationship_approver_required: {
    status: 403,
    error: 'Forbidden',
    message: "Only the organization's admins approve, decline or see the approval of a relationship asked of it.",
  },
  msp_access_customer_only: {
    status: 403,
    error: 'Forbidden',
    message: "Only the organization's own admins may loosen mspAccess; its partner may only tighten it.",
  },
  frozen: { status: 403, error: 'Forbidden', message: 'Destructive actions are frozen here; only break-glass passes.' },
  budget_exceeded: { status: 403, error: 'Forbidden', message: 'Over a budget; `requires` says what unlocks it.' },
  budget_customer_only: { status: 403, error: 'Forbidden', message: "Only the organization's admins set its budget." },
  freeze_other_side: { status: 403, error: 'Forbidden', message: 'Only the side that set this freeze lifts it.' },
  co_sign_not_allowed: { status: 403, error: 'Forbidden', message: 'Another Partner Admin must approve it.' },
  ip_not_allowed: {
    status: 403,
    error: 'Forbidden',
    message: 'This address is outside the IP allow-list (of the API key, or of the partner or organization).',
  },
  password_confirmation_required: {
    status: 403,
    error: 'Forbidden',
    message: 'This session began at an identity provider: confirm your password (and second factor) to act elsewhere.',
  },
  email_unverified: {
    status: 403,
    error: 'Forbidden',
    message:
      'Your e-mail address is not proven: accept the invitation through the link mailed to it, or prove the address first.',
  },
  // 404
  not_found: { status: 404, error: 'Not Found', message: 'The resource was not found.' },
  invitation_not_found: {
    status: 404,
    error: 'Not Found',
    message: 'No pending invitation of your account has this id (or the link was used, withdrawn or has expired).',
  },
  invite_invalid: { status: 404, error: 'Not Found', message: 'The invitation is invalid or has expired.' },
  // 405 / 408 / 409 / 412 / 413 / 414 / 415 / 431
  method_not_allowed: {
    status: 405,
    error: 'Method Not Allowed',
    message: 'The method is not allowed on this resource.',
  },
  request_timeout: { status: 408, error: 'Request Timeout', message: 'The request was not received in time.' },
  access_request_not_pending: {
    status: 409,
    error: 'Conflict',
    message: 'The access request was already approved or denied.',
  },
  conflict: { status: 409, error: 'Conflict', message: 'The request conflicts with the current state.' },
  already_frozen: { status: 409, error: 'Conflict', message: 'Destructive actions are already frozen here.' },
  co_sign_closed: { status: 409, error: 'Conflict', message: 'The co-sign request is no longer pending.' },
  relationship_frozen: {
    status: 409,
    error: 'Conflict',
    message:
      'The relationship is approved (or awaiting approval): it can narrow at once, but widening it needs a new relationship and a new approval.',
  },
  relationship_state_invalid: {
    status: 409,
    error: 'Conflict',
    message: 'The relationship is not in a state that allows this.',
  },
  domain_taken: { status: 409, error: 'Conflict', message: 'Another tenant has proven this domain.' },
  domain_exists: {
    status: 409,
    error: 'Conflict',
    message: 'This domain is already claimed by this partner or one of its organisations.',
  },
  domain_not_verified: {
    status: 409,
    error: 'Conflict',
    message: 'The TXT record proving the domain was not found.',
  },
  user_exists_in_scope: { status: 409, error: 'Conflict', message: 'User already exists in this scope.' },
  email_taken: { status: 409, error: 'Conflict', message: 'An account with this email already exists.' },
  setup_completed: { status: 409, error: 'Conflict', message: 'Setup is complete: a partner already exists.' },
  slug_taken: { status: 409, error: 'Conflict', message: 'The slug is already in use.' },
  name_taken: { status: 409, error: 'Conflict', message: 'The name is already in use.' },
  mfa_already_enabled: { status: 409, error: 'Conflict', message: 'MFA is already enabled.' },
  resource_in_use: { status: 409, error: 'Conflict', message: 'The resource is still in use.' },
  ip_lockout: {
    status: 409,
    error: 'Conflict',
    message: 'The IP allow-list would lock out your current address; send confirmLockout: true to save it anyway.',
  },
  key_limit_reached: {
    status: 409,
    error: 'Conflict',
    message: 'A service account has at most two active keys: revoke one first.',
  },
  precondition_failed: {
    status: 412,
    error: 'Precondition Failed',
    message: 'The resource changed since the version given in If-Match.',
  },
  payload_too_large: { status: 413, error: 'Payload Too Large', message: 'The request body is too large.' },
  uri_too_long: { status: 414, error: 'URI Too Long', message: 'The request URL is too long.' },
  unsupported_media_type: {
    status: 415,
    error: 'Unsupported Media Type',
    message: 'The content type is not supported.',
  },
  headers_too_large: {
    status: 431,
    error: 'Request Header Fields Too Large',
    message: 'The request headers are too large.',
  },
  // 428 / 429
  mfa_enrollment_required: {
    status: 428,
    error: 'Precondition Required',
    message: 'Your account must enrol a second factor before continuing.',
  },
  session_binding_required: {
    status: 428,
    error: 'Precondition Required',
    message: 'This action needs a browser session that can receive replacement credentials.',
  },
  rate_limited: { status: 429, error: 'Too Many Requests', message: 'Too many requests; wait and try again.' },
  // 5xx
  internal_error: { status: 500, error: 'Internal Server Error', message: 'An unexpected error occurred.' },
  service_unavailable: { status: 503, error: 'Service Unavailable', message: 'The service is not ready.' },
  console_not_built: {
    status: 503,
    error: 'Service Unavailable',
    message: 'The admin console is not built: run `npm run build:web`, then restart.',
  },
} as const satisfies Record<
  string,
  { status: number; error: string; message: string; alsoAnswers?: { status: number; error: string } }
>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export { SSO_FAILURE_CATALOG, type SsoFailureCode } from './sso-failures.js';

export class AppError extends Error {
  readonly status: number;
  readonly error: string;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    /** Extra top-level fields of the envelope (retryAfter, userCount, details, ...). Never secrets. */
    readonly extra: Record<string, unknown> = {},
    /** Only where one code has two statuses (invalid_credentials: 401 at login, 400 on change-password). */
    status?: 400 | 401,
  ) {
    const entry: { status: number; error: string; message: string; alsoAnswers?: { status: number; error: string } } =
      ERROR_CATALOG[code];
    super(message ?? entry.message);
    this.name = 'AppError';
    const answered = status !== undefined && status !== entry.status ? entry.alsoAnswers : undefined;
    if (status !== undefined && status !== entry.status && answered?.status !== status)
      throw new Error(`${code} is not catalogued with status ${status}`);
    this.status = answered?.status ?? entry.status;
    this.error = answered?.error ?? entry.error;
  }

  toBody(): Record<string, unknown> {
    return { error: this.error, message: this.message, code: this.code, ...this.extra };
  }
}

export function assertThat(
  cond: unknown,
  code: ErrorCode,
  message?: string,
  extra?: Record<string, unknown>,
): asserts cond {
  if (!cond) throw new AppError(code, message, extra);
}

export const notFound = (what = 'resource') => new AppError('not_found', `The ${what} was not found.`);

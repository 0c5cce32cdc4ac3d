// The reasons a federated sign-in ends, beside the HTTP error catalogue (src/http/errors.ts).

/**
 * Why a federated sign-in ended: the value of `/login?error=`. Not HTTP answers (the flow ends in a
 * redirect), but catalogued here all the same so the console can translate each one.
 */
export const SSO_FAILURE_CATALOG = {
  invalid_state: 'The sign-in request is unknown, already used or from another browser.',
  session_expired: 'The sign-in took longer than 10 minutes.',
  access_denied: 'The identity provider refused the sign-in.',
  sso_failed: 'The identity provider reported an error.',
  provider_not_found: 'No active identity provider is configured here.',
  provider_unavailable: 'The identity provider could not be reached.',
  token_exchange_failed: 'The identity provider refused the code exchange.',
  id_token_invalid: "The identity provider's ID token failed verification.",
  email_unverified: 'The identity provider did not assert a verified e-mail address.',
  domain_not_allowed: 'The e-mail domain is not allowed for this provider.',
  email_invalid: 'The asserted e-mail address cannot be used.',
  account_disabled: 'The account is disabled.',
  no_org_access: 'The account is not a member here.',
  invitation_pending:
    'Your account is invited here: sign in as before and accept the invitation under My account, or by the mailed link.',
  user_not_found: 'No account matches and auto-provisioning is off.',
  domain_not_verified:
    'No account matches, and the e-mail domain is not proven here: accounts are created only for proven domains.',
  default_role_required: 'Auto-provisioning has no default role.',
  saml_response_invalid: "The identity provider's SAML response failed verification.",
  assertion_replayed: 'The SAML assertion was already used.',
  msp_access_denied:
    "The organization has suspended its partner's access, and its partner's staff set up this provider: it signs nobody in meanwhile.",
} as const;
export type SsoFailureCode = keyof typeof SSO_FAILURE_CATALOG;

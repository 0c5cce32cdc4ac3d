import { pgEnum } from 'drizzle-orm/pg-core';

export const userStatus = pgEnum('user_status', ['active', 'invited', 'disabled']);
export const mfaMethod = pgEnum('mfa_method', ['totp', 'sms', 'passkey']);
export const roleScope = pgEnum('role_scope', ['system', 'partner', 'organization']);
/** Which kind of membership a role can be assigned to (system roles serve one of the two). */
export const membershipKind = pgEnum('membership_kind', ['partner', 'organization']);
/**
 * `eligible`: no standing access; may request just-in-time access to the organisations of `org_ids`.
 * `all_except`: every organisation of the partner, those created later included, except those of `org_ids`.
 */
export const orgAccess = pgEnum('org_access', ['all', 'selected', 'none', 'eligible', 'all_except']);
/** `pending`: a tenant invited or provisioned an account that already existed; it grants nothing until the account
 * accepts it. */
export const membershipStatus = pgEnum('membership_status', ['active', 'pending']);
export const tenantStatus = pgEnum('tenant_status', ['active', 'suspended']);
export const ssoProviderType = pgEnum('sso_provider_type', ['oidc', 'saml']);
export const ssoProviderStatus = pgEnum('sso_provider_status', ['active', 'inactive', 'testing']);
/** A domain claim: `verified` once its TXT record was seen. */
export const domainStatus = pgEnum('domain_status', ['pending', 'verified']);
export const scriptLanguage = pgEnum('script_language', ['powershell', 'cmd', 'bash', 'python']);
export const scriptAvailability = pgEnum('script_availability', ['organization', 'partner']);
export const customFieldType = pgEnum('custom_field_type', ['text', 'number', 'boolean', 'date', 'select']);
export const customFieldEntity = pgEnum('custom_field_entity', ['device', 'site', 'organization', 'contact']);
export const configKind = pgEnum('config_kind', ['policy', 'alert_template', 'patch_policy', 'maintenance_window']);
export const auditResult = pgEnum('audit_result', ['success', 'failure', 'denied']);
export const flowKind = pgEnum('flow_kind', [
  'login_mfa',
  'mfa_setup',
  'password_reset',
  'invite',
  'phone_verify',
  'sms_login',
  'webauthn_register',
  'webauthn_login',
  'sso_exchange',
  'passkey_login',
  'webauthn_reauth',
  'session_report',
  'first_run_setup',
  'sso_link',
  'saml_return',
  'email_verify',
  'email_change',
  'membership_invite',
]);

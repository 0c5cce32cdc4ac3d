// The tags of the API reference, each with what it groups.
/** Tags of the API, in the order the reference shows them. Every operation's tag must be one of these. */
export const TAGS: { name: string; description: string }[] = [
  { name: 'operations', description: 'Probes, metrics and the server’s own keys.' },
  { name: 'setup', description: 'First start: create the first partner and its administrator.' },
  { name: 'auth', description: 'Sign-in, sessions, account self-service and e-mail proof.' },
  { name: 'mfa', description: 'Second factors: authenticator apps, text messages, recovery codes.' },
  { name: 'passkeys', description: 'Passkeys (WebAuthn) for sign-in and as a second factor.' },
  { name: 'sso', description: 'Single sign-on through OpenID Connect and SAML identity providers.' },
  { name: 'domains', description: 'E-mail domains a tenant proves by DNS.' },
  { name: 'organizations', description: 'The partner and its customer organisations.' },
  { name: 'sites', description: 'Sites (locations) of an organisation.' },
  { name: 'device groups', description: 'Groups of devices, optionally within a site.' },
  { name: 'devices', description: 'Managed devices and their inventory.' },
  { name: 'enrollment', description: 'Enrolment keys that onboard devices.' },
  { name: 'agents', description: 'Calls the device agent makes, with its agent token.' },
  { name: 'contacts', description: 'Customer contacts, with CSV import.' },
  { name: 'custom fields', description: 'Tenant-defined fields on devices, contacts and organisations.' },
  { name: 'scripts', description: 'Script library for devices.' },
  { name: 'configuration', description: 'Policies, alert templates, patch policies and maintenance windows.' },
  { name: 'users', description: 'Accounts, invitations and memberships in a tenant.' },
  { name: 'roles', description: 'Roles and permissions.' },
  { name: 'access', description: 'Who may do what: explanations, just-in-time access, customer controls.' },
  {
    name: 'relationships',
    description:
      'Delegated-access relationships: the roles and reach a partner’s staff may have in an organisation, approved by its admins, until a set end.',
  },
  {
    name: 'access-groups',
    description:
      'Groups of a partner’s staff attached to relationships: joining a group is the grant, leaving it the revocation.',
  },
  {
    name: 'governor',
    description:
      'The brake on mass actions: freezes of destructive permissions, blast-radius budgets per principal, co-signatures that unlock them.',
  },
  { name: 'audit', description: 'The tamper-evident audit log and its export.' },
  { name: 'service-accounts', description: 'Non-human principals with API keys and OAuth client credentials.' },
  { name: 'webhooks', description: 'Audit events delivered to your endpoints (Standard Webhooks).' },
  { name: 'scim-tokens', description: 'Tokens for an identity provider’s SCIM provisioning.' },
  { name: 'scim', description: 'SCIM 2.0 provisioning of users and groups (RFC 7643, RFC 7644).' },
];

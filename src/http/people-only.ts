// Routes for people only: the caller's own account, sessions, password, second factors, passkeys,
// step-up and memberships. A service account authenticates (its key is valid) but is refused there with 403
// `service_account_not_allowed`, checked once in authenticate. A rule by prefix, so a new /auth route is covered.

/** Every authenticated route under these is a person's own (prefix included). */
export const PEOPLE_ONLY_PREFIXES = ['/api/v1/auth/', '/api/v1/users/me'] as const;

export const isPeopleOnly = (url: string | undefined) =>
  url !== undefined &&
  PEOPLE_ONLY_PREFIXES.some((p) => (p.endsWith('/') ? url.startsWith(p) : url === p || url.startsWith(`${p}/`)));

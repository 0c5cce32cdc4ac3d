// Whether an e-mail address lies in a domain proven by a given tenant: the one rule every reader of proofs applies
// (SSO discovery, provisioning, linking and enforcement; sign-in). A domain is proven by one tenant at most, and an
// address counts only for exactly that tenant (the partner itself, or one organisation), never for a neighbour.

/**
 * SQL text of the condition. The arguments are SQL expressions written by the caller (column names, aliases),
 * never values: values go through the statement's parameters.
 */
export const provenForTenantSql = (email: string, partnerId: string, orgId: string): string =>
  `exists (select 1 from domains gh_d where gh_d.status = 'verified'
             and gh_d.domain = lower(split_part(${email}, '@', 2))
             and gh_d.partner_id = ${partnerId} and gh_d.org_id is not distinct from ${orgId})`;

/** The domain part of an address as the proofs store it. */
export const domainOfAddress = (email: string): string => email.slice(email.lastIndexOf('@') + 1).toLowerCase();

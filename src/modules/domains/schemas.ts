// Domains: a claim names a domain in lower-case ASCII (an IDN as punycode); wildcards, bare TLDs and well-known
// registry suffixes are refused, since proving one would claim every address under it.
import { domainToASCII } from 'node:url';
import { z } from 'zod';

export const TXT_PREFIX = '_gatehouse-challenge';
export const TXT_VALUE_PREFIX = 'gatehouse-verification=';

/**
 * Second-level suffixes where registries sell names to the public. Not the whole Public Suffix List: the obvious
 * cases, so that nobody proves `co.uk` by accident; a real registry suffix also fails its proof (no one may publish
 * a TXT record under it).
 */
const PUBLIC_SUFFIXES = new Set([
  'co.uk',
  'org.uk',
  'me.uk',
  'ltd.uk',
  'plc.uk',
  'ac.uk',
  'gov.uk',
  'net.uk',
  'sch.uk',
  'com.au',
  'net.au',
  'org.au',
  'edu.au',
  'gov.au',
  'co.nz',
  'org.nz',
  'net.nz',
  'co.jp',
  'ne.jp',
  'or.jp',
  'ac.jp',
  'go.jp',
  'co.kr',
  'or.kr',
  'com.br',
  'net.br',
  'org.br',
  'com.cn',
  'net.cn',
  'org.cn',
  'com.tw',
  'com.hk',
  'com.sg',
  'co.in',
  'net.in',
  'org.in',
  'co.za',
  'org.za',
  'com.mx',
  'com.ar',
  'com.tr',
  'co.il',
  'co.id',
  'com.es',
  'com.pl',
  'com.ru',
  'com.ua',
  'co.at',
  'or.at',
  'github.io',
  'herokuapp.com',
  'blogspot.com',
]);

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const TLD = /^([a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

export type DomainProblem = 'wildcard' | 'invalid' | 'public_suffix';
const MESSAGES: Record<DomainProblem, string> = {
  wildcard: 'a wildcard is not a domain: name the domain itself',
  invalid: 'must be a domain name such as example.com (an internationalised name is converted to punycode)',
  public_suffix: 'a top-level domain or a public registry suffix cannot be proven',
};

/** The stored form of a domain, or why it is refused. */
export function normaliseDomain(input: string): { domain: string } | { problem: DomainProblem } {
  const s = input.trim().toLowerCase().replace(/\.$/, '');
  if (s.includes('*')) return { problem: 'wildcard' };
  if (!s || s.includes('@') || s.includes('/') || s.includes(':')) return { problem: 'invalid' };
  const ascii = domainToASCII(s);
  if (!ascii || ascii.length > 253) return { problem: 'invalid' };
  const labels = ascii.split('.');
  if (!labels.every((l) => LABEL.test(l)) || !TLD.test(labels[labels.length - 1]!)) return { problem: 'invalid' };
  if (labels.length < 2 || PUBLIC_SUFFIXES.has(ascii)) return { problem: 'public_suffix' };
  return { domain: ascii };
}

export const domainName = z
  .string()
  .max(1024)
  .transform((s, ctx) => {
    const r = normaliseDomain(s);
    if ('domain' in r) return r.domain;
    ctx.addIssue({ code: 'custom', message: MESSAGES[r.problem] });
    return z.NEVER;
  })
  .meta({ examples: ['example.com'] });

export const createDomainBody = z.strictObject({
  domain: domainName.describe('The domain: lower-cased; an internationalised name is stored as punycode'),
  orgId: z
    .uuid()
    .optional()
    .describe("An organisation of the caller's partner proves it for itself; omitted: the caller's own tenant"),
});
export type CreateDomain = z.infer<typeof createDomainBody>;

export const domainListQuery = z.strictObject({
  orgId: z
    .uuid()
    .optional()
    .describe("One organisation's domains. Omitted: every domain the caller may see (an organisation caller: its own)"),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional(),
});

export const domainJson = z
  .object({
    id: z.uuid(),
    domain: z.string(),
    partnerId: z.uuid(),
    orgId: z.uuid().nullable(),
    status: z.enum(['pending', 'verified']),
    txtName: z.string().describe('Where to publish the TXT record'),
    txtValue: z.string().describe('The TXT record to publish (public by design)'),
    createdAt: z.string(),
    verifiedAt: z.string().nullable(),
  })
  .meta({ id: 'Domain', description: 'A domain claim, proven by a DNS TXT record' });

export const domainCursor = z.object({ d: z.string(), id: z.uuid() });
